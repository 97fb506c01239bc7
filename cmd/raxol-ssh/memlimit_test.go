package main

import (
	"math"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"
)

// TestMemoryLimitFromTheCgroup: with no GOMEMLIMIT, a cgroup memory limit
// gives the Go runtime 90% of it (put back by restore); GOMEMLIMIT set is
// left alone; neither is no limit. The posture says which.
func TestMemoryLimitFromTheCgroup(t *testing.T) {
	if l := debug.SetMemoryLimit(-1); l != math.MaxInt64 {
		t.Fatalf("the test process has a memory limit already (%d): run it without GOMEMLIMIT", l)
	}
	cgroup := func(v uint64) func() (uint64, bool) { return func() (uint64, bool) { return v, v > 0 } }

	desc, restore := applyMemoryLimit(env(nil), cgroup(1<<30)) // 90%: 966367641 bytes
	if l := debug.SetMemoryLimit(-1); l != 966367641 {
		t.Errorf("cgroup limit 1 GiB: Go memory limit %d, want 90%%", l)
	}
	if !strings.Contains(desc, "921 MiB") || !strings.Contains(desc, "cgroup's 1024 MiB") {
		t.Errorf("posture %q", desc)
	}
	restore()
	if l := debug.SetMemoryLimit(-1); l != math.MaxInt64 {
		t.Fatalf("restore left the limit at %d", l)
	}

	desc, restore = applyMemoryLimit(env(map[string]string{"GOMEMLIMIT": "off"}), cgroup(1<<30))
	restore()
	if l := debug.SetMemoryLimit(-1); l != math.MaxInt64 || !strings.Contains(desc, "GOMEMLIMIT=off") {
		t.Errorf("GOMEMLIMIT=off with a cgroup limit: limit %d, posture %q; want GOMEMLIMIT obeyed", l, desc)
	}

	desc, restore = applyMemoryLimit(env(nil), cgroup(0))
	restore()
	if l := debug.SetMemoryLimit(-1); l != math.MaxInt64 || !strings.Contains(desc, "none") {
		t.Errorf("no cgroup limit: limit %d, posture %q", l, desc)
	}

	// GOMEMLIMIT as the runtime read it at start (set here by hand).
	debug.SetMemoryLimit(512 << 20)
	defer debug.SetMemoryLimit(math.MaxInt64)
	desc, restore = applyMemoryLimit(env(map[string]string{"GOMEMLIMIT": "512MiB"}), cgroup(1<<30))
	restore()
	if l := debug.SetMemoryLimit(-1); l != 512<<20 || desc != "512 MiB (GOMEMLIMIT=512MiB)" {
		t.Errorf("GOMEMLIMIT=512MiB: limit %d, posture %q", l, desc)
	}
}

// TestPostureShowsMemoryLimitAndPacing: the posture line carries the
// memory limit and the GC pacing the command set.
func TestPostureShowsMemoryLimitAndPacing(t *testing.T) {
	dir := t.TempDir()
	_, out := bootCommand(t, []string{"--data-dir", filepath.Join(dir, "data"), "--ssh-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0"}, env(nil))
	line := regexp.MustCompile(`(?m)^.*raxol-ssh serving.*$`).FindString(out.String())
	for _, want := range []string{`memory_limit="`, `gc_pacing="collections about 2s apart, heap at most Go's own goal + 8× the live heap`} {
		if !strings.Contains(line, want) {
			t.Errorf("posture line lacks %s:\n%s", want, line)
		}
	}
}

// TestContainersPassAMemoryLimit: the compose files give raxol-ssh a
// memory limit (which the command hands the Go runtime, as
// TestMemoryLimitFromTheCgroup checks), and the Dockerfile says how.
func TestContainersPassAMemoryLimit(t *testing.T) {
	for _, f := range []string{"../../docker-compose.yml", composePath} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !regexp.MustCompile(`(?m)^\s+mem_limit: \d+[mg]$`).Match(b) {
			t.Errorf("%s sets no mem_limit", f)
		}
	}
	b, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "--memory") || !strings.Contains(string(b), "GOMEMLIMIT") {
		t.Error("the Dockerfile does not say how the container's memory limit reaches the Go runtime")
	}
}

// TestCommandTakesItsLimitFromTheCgroup: the command, as run, asks the
// cgroup for its memory limit (not only applyMemoryLimit when handed
// one): in a cgroup limited to 64 GiB and without GOMEMLIMIT the Go
// runtime's limit while it serves is 90% of it, as the posture line says,
// and it is put back when the command ends. Not parallel: the cgroup
// reader is the process's, and so is the limit.
func TestCommandTakesItsLimitFromTheCgroup(t *testing.T) {
	if l := debug.SetMemoryLimit(-1); l != math.MaxInt64 {
		t.Fatalf("the test process has a memory limit already (%d): run it without GOMEMLIMIT", l)
	}
	const cgroup = 64 << 30
	asked := 0
	old := cgroupMemoryLimit
	cgroupMemoryLimit = func() (uint64, bool) { asked++; return cgroup, true }
	defer func() { cgroupMemoryLimit = old }()
	t.Run("serving", func(t *testing.T) {
		dir := t.TempDir()
		_, out := bootCommand(t, []string{"--data-dir", filepath.Join(dir, "data"), "--ssh-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0"}, env(nil))
		if asked != 1 {
			t.Fatalf("the command asked the cgroup %d times", asked)
		}
		limit := uint64(cgroup)
		if l, want := debug.SetMemoryLimit(-1), int64(float64(limit)*cgroupShare); l != want {
			t.Fatalf("the Go memory limit while the command serves is %d, want %d (90%% of the cgroup's)", l, want)
		}
		if !strings.Contains(out.String(), `memory_limit="58982 MiB (90% of the cgroup's 65536 MiB; GOMEMLIMIT not set)"`) {
			t.Fatalf("the posture line does not say where the limit came from:\n%s", out)
		}
	})
	if l := debug.SetMemoryLimit(-1); l != math.MaxInt64 {
		t.Fatalf("the command left the memory limit at %d", l)
	}
}
