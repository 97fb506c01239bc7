package testkit

import "testing"

// EndToEnd skips t under `go test -short`: it needs a real SSH client
// with a PTY, or NATS servers (the fast inner loop leaves them to the full
// suite, which CI runs). The shared entry points call it (Run and RunAs
// here, natstest's Run and RunCluster, the server tests' SSH dial), so a
// test is skipped where it first reaches for one.
func EndToEnd(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end over real SSH or NATS: skipped under -short (go test ./... runs it)")
	}
}
