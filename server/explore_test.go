package server_test

import (
	"strings"
	"testing"
	"time"

	"github.com/raxol-ssh/raxol-ssh/server"
)

func TestExplore(t *testing.T) {
	srv := startServer(t, server.Options{})
	c := connect(t, srv.SSHAddr(), clientOpts{})
	start := time.Now()
	id := waitDemo(t, c)
	t.Logf("first frame after %v", time.Since(start))
	c.WaitFor(t, func(s string) bool { l := c.Lines(); return strings.Contains(l[29], "session "+id) }, waitShort)
	t.Logf("full size after %v", time.Since(start))
}
