// Package browsertest starts a real headless Chromium for end-to-end
// tests and reads what a person (and a screen reader) would get from a
// page: its accessibility tree, its text, and screenshots kept as test
// artefacts.
//
// In: a testing.TB. The browser is Debian's chromium (/usr/bin/chromium,
// or $RAXOL_CHROMIUM), which .ci/run installs; a missing browser fails the
// test with the command that installs it. Out: chromedp contexts (one
// browser per New, its own profile and cookie jar), AX nodes, and PNG
// files under ArtefactDir. Every browser is closed by t.Cleanup.
package browsertest
