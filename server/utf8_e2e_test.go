package server_test

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/raxol-ssh/raxol-ssh/server"
)

// TestOutputIsUTF8WhateverTheLocale: a client that sends a non-UTF-8
// locale (LANG=C, LC_ALL=en_US.ISO-8859-1) and an old TERM gets the same
// UTF-8 output as any other, as the README's Terminals section says: the
// box borders arrive as the UTF-8 bytes of U+256D and U+2500, and every
// byte the server sent decodes as UTF-8.
func TestOutputIsUTF8WhateverTheLocale(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		term string
		env  map[string]string
	}{
		{"vt100", map[string]string{"LANG": "C", "LC_ALL": "C"}},
		{"xterm", map[string]string{"LANG": "en_US.ISO-8859-1", "LC_ALL": "en_US.ISO-8859-1", "LC_CTYPE": "latin1"}},
	} {
		t.Run(tc.term, func(t *testing.T) {
			t.Parallel()
			srv := startServer(t, server.Options{})
			c := connect(t, srv.SSHAddr(), clientOpts{term: tc.term, env: tc.env, keepRaw: true})
			waitDemo(t, c)
			c.WaitFor(t, func(s string) bool { return strings.Contains(s, "╭─ Services") }, waitShort)
			raw := c.Raw()
			if !bytes.Contains(raw, []byte("╭─")) {
				t.Fatalf("no UTF-8 box corner in the output to TERM=%s %v", tc.term, tc.env)
			}
			if !utf8.Valid(raw) {
				t.Fatalf("the output to TERM=%s %v is not valid UTF-8", tc.term, tc.env)
			}
		})
	}
}
