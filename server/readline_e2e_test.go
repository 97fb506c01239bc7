package server_test

import (
	"strings"
	"testing"

	"github.com/raxol-ssh/raxol-ssh/demo"
	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/server"
)

// TestReadlineKeysOverSSH: the demo's search field edits with the
// readline keys as a terminal sends them, and the session keys still
// work from inside it.
func TestReadlineKeysOverSSH(t *testing.T) {
	t.Parallel()
	srv := startServer(t, server.Options{})
	c := connect(t, srv.SSHAddr(), clientOpts{})
	waitDemo(t, c)
	se := onlySession(t, srv)
	c.Key(keyTab)
	testkit.Eventually(t, waitShort, func() bool { return se.Attention().Focus == demo.IDSearch },
		"focus = %q, want the search field", se.Attention().Focus)

	const (
		ctrlA   = "\x01"
		ctrlE   = "\x05"
		ctrlK   = "\x0b"
		ctrlU   = "\x15"
		ctrlW   = "\x17"
		altB    = "\x1bb"
		altF    = "\x1bf"
		altBksp = "\x1b\x7f"
	)
	for _, step := range []struct{ keys, want string }{
		{"git push origin/main", "git push origin/main"},
		{ctrlW, "git push "},
		{"café 日本", "git push café 日本"},
		{altB + ctrlK, "git push café "},
		{ctrlA + altF + ctrlU, " push café "},
		{ctrlE + altBksp, " push "},
		{ctrlA + "x", "x push "},
	} {
		c.Type(step.keys)
		testkit.Eventually(t, waitShort, func() bool { return searchValue(t, se) == step.want },
			"after %q the search field holds %q, want %q", step.keys, searchValue(t, se), step.want)
	}
	c.WaitFor(t, "Search: x push", waitShort)

	// ctrl+o is still the session's: the attach panel opens and closes.
	c.Key(keyCtrlO)
	c.WaitFor(t, "Attach an agent", waitShort)
	c.Key(keyCtrlO)
	c.WaitFor(t, func(s string) bool { return !strings.Contains(s, "Attach an agent") }, waitShort)
	if got := searchValue(t, se); got != "x push " {
		t.Errorf("search field = %q after the session keys", got)
	}

	// So are ctrl+g (the activity log), ctrl+p (pause agents) and ctrl+f
	// (agents on the focused widget only), which readline would take as
	// abort, previous line and forward a character.
	c.Key("\x07")
	c.WaitFor(t, "ctrl+g closes", waitShort)
	c.Key("\x07")
	c.Key("\x10")
	testkit.Eventually(t, waitShort, func() bool { return se.Control().Paused }, "ctrl+p did not pause the agents")
	c.Key("\x06")
	testkit.Eventually(t, waitShort, func() bool { return se.Control().FocusOnly }, "ctrl+f did not restrict the agents")
	c.WaitFor(t, func(s string) bool { return !strings.Contains(s, "ctrl+g closes") }, waitShort)
	if got := searchValue(t, se); got != "x push " || se.Attention().Focus != demo.IDSearch {
		t.Errorf("search field = %q, focus %q after ctrl+g, ctrl+p, ctrl+f", got, se.Attention().Focus)
	}
	// And ctrl+c still leaves from inside the field.
	c.Key(keyCtrlC)
	if err, _ := c.WaitExit(t, waitLong); err != nil {
		t.Errorf("ctrl+c from the search field: %v", err)
	}
}
