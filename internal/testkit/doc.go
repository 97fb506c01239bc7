// Package testkit holds what several packages' tests share: a log writer
// that sends a server's logs to t.Log while a test runs, a buffer safe for
// concurrent writers, HTTP round trippers that add a header (a bearer
// token), and Term, a human's SSH client that runs one command in a PTY
// and reads its screen through a terminal emulator.
//
// In: a testing.TB, an SSH address and a command. Out: screens, stderr and
// exit, and test failures naming what was awaited. It is imported only by
// tests and by mcptest.
package testkit
