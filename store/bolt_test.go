package store

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

func TestBoltCreatesPrivateFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "new", "dir", "sessions.db")
	b, err := OpenBolt(path, BoltOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for p, want := range map[string]os.FileMode{filepath.Dir(path): 0o700, filepath.Dir(filepath.Dir(path)): 0o700, path: 0o600} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got&^want != 0 {
			t.Errorf("%s has mode %v; want at most %v", p, got, want)
		}
	}
	if got, want := b.Describe(), "bbolt "+path; got != want {
		t.Errorf("Describe = %q; want %q", got, want)
	}
	if _, err := OpenBolt("", BoltOptions{}); err == nil {
		t.Error("OpenBolt(\"\") succeeded")
	}
	if _, err := OpenBolt(path+"2", BoltOptions{LockTimeout: -time.Second}); err == nil || !strings.Contains(err.Error(), "LockTimeout") {
		t.Errorf("negative LockTimeout: %v; want an error naming it", err)
	}
}

// A second open of a held file fails with ErrLocked within its timeout
// (flock is per open file, so one process shows it), with the default
// timeout too; once the holder closes, it opens.
func TestBoltLocked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sessions.db")
	first, err := OpenBolt(path, BoltOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, timeout := range []time.Duration{200 * time.Millisecond, 0} {
		start := time.Now()
		second, err := OpenBolt(path, BoltOptions{LockTimeout: timeout})
		elapsed := time.Since(start)
		if !errors.Is(err, ErrLocked) {
			if second != nil {
				second.Close()
			}
			t.Fatalf("second OpenBolt (timeout %v) = %v; want ErrLocked", timeout, err)
		}
		want := timeout
		if want == 0 {
			want = DefaultLockTimeout
		}
		if elapsed < want/2 || elapsed > want+2*time.Second {
			t.Errorf("second OpenBolt (timeout %v) failed after %v; want about %v", timeout, elapsed, want)
		}
		if !strings.Contains(err.Error(), path) {
			t.Errorf("error %q does not name the file", err)
		}
	}
	first.Close()
	second, err := OpenBolt(path, BoltOptions{LockTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatalf("OpenBolt after the holder closed: %v", err)
	}
	second.Close()
}

// A process waiting for the lock while the holder compacts gets the lock
// of the file that was renamed away: it must not use it.
func TestBoltReplacedWhileWaiting(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sessions.db")
	holder, err := OpenBolt(path, BoltOptions{})
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		b   *Bolt
		err error
	}
	done := make(chan result, 1)
	go func() {
		b, err := OpenBolt(path, BoltOptions{LockTimeout: 5 * time.Second})
		done <- result{b, err}
	}()
	waitOpenedTwice(t, path)
	// What compact does: a new file renamed over path, then the old closed.
	replacement, err := bolt.Open(path+".new", 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	replacement.Close()
	if err := os.Rename(path+".new", path); err != nil {
		t.Fatal(err)
	}
	holder.Close()
	r := <-done
	if r.b != nil {
		r.b.Close()
	}
	if !errors.Is(r.err, ErrLocked) || !strings.Contains(r.err.Error(), "replaced") {
		t.Fatalf("OpenBolt that waited on the replaced file = %v; want ErrLocked saying it was replaced", r.err)
	}
}

// waitOpenedTwice waits until this process has path open twice (the
// holder and an OpenBolt blocked on its lock), through /proc/self/fd.
func waitOpenedTwice(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		fds, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Fatalf("this test needs /proc/self/fd: %v", err)
		}
		n := 0
		for _, fd := range fds {
			if target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); err == nil && target == path {
				n++
			}
		}
		if n >= 2 {
			time.Sleep(20 * time.Millisecond) // from open to flock
			return
		}
		time.Sleep(time.Millisecond) // poll interval
	}
	t.Fatal("the second OpenBolt never opened the file")
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// Deleting snapshots frees pages that bbolt reuses but never gives back:
// the next open compacts a file mostly free, keeping every snapshot.
func TestBoltCompactsOnOpen(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sessions.db")
	b, err := OpenBolt(path, BoltOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	const n, kept = 400, 10
	value := func(i int) []byte { return bytes.Repeat([]byte{byte(i)}, 32<<10) }
	for i := range n {
		if err := b.Put(ctx, fmt.Sprintf("s%03d", i), value(i)); err != nil {
			t.Fatal(err)
		}
	}
	for i := kept; i < n; i++ {
		if err := b.Delete(ctx, fmt.Sprintf("s%03d", i)); err != nil {
			t.Fatal(err)
		}
	}
	b.Close()
	before := fileSize(t, path)
	if before <= compactMinSize {
		t.Fatalf("the file is only %d bytes; the test needs more than %d", before, compactMinSize)
	}
	// A compaction cut short left this behind.
	stale := filepath.Join(dir, "sessions.db"+compactSuffix+"123")
	os.WriteFile(stale, []byte("half a copy"), 0o600)

	b, err = OpenBolt(path, BoltOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	after := fileSize(t, path)
	t.Logf("file %d KiB before, %d KiB after compaction", before>>10, after>>10)
	if after*2 > before {
		t.Errorf("file went from %d to %d bytes; want it at least halved", before, after)
	}
	if err := check(b); err != nil {
		t.Errorf("check after compaction: %v", err)
	}
	ids, err := b.List(ctx)
	if err != nil || len(ids) != kept {
		t.Fatalf("List = %q, %v; want %d ids", ids, err, kept)
	}
	for i := range kept {
		if got, err := b.Get(ctx, fmt.Sprintf("s%03d", i)); err != nil || !bytes.Equal(got, value(i)) {
			t.Errorf("s%03d after compaction: %d bytes, %v", i, len(got), err)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("directory holds %q; want only sessions.db", names)
	}
	if strings.Contains(b.Describe(), "(") {
		t.Errorf("Describe = %q; want no compaction error", b.Describe())
	}
	// The compacted file is the store: it takes writes and keeps them.
	if err := b.Put(ctx, "new", []byte("after")); err != nil {
		t.Fatal(err)
	}
	b.Close()
	b, err = OpenBolt(path, BoltOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := b.Get(ctx, "new"); err != nil || string(got) != "after" {
		t.Errorf("Get(new) after reopening = %q, %v", got, err)
	}
	if got := fileSize(t, path); got != after {
		t.Errorf("a file in use got compacted again: %d → %d bytes", after, got)
	}
}

// A compaction that fails leaves the file as it was and the store working
// on it; Describe says why.
func TestBoltCompactionFailure(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sessions.db")
	b, err := OpenBolt(path, BoltOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	for i := range 300 {
		if err := b.Put(ctx, fmt.Sprintf("s%03d", i), bytes.Repeat([]byte{1}, 32<<10)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 299 {
		b.Delete(ctx, fmt.Sprintf("s%03d", i))
	}
	b.Close()
	before := fileSize(t, path)
	createTemp = func(string, string) (*os.File, error) { return nil, errors.New("disk full (injected)") }
	t.Cleanup(func() { createTemp = os.CreateTemp })
	b, err = OpenBolt(path, BoltOptions{})
	if err != nil {
		t.Fatalf("OpenBolt with a failing compaction: %v", err)
	}
	defer b.Close()
	if d := b.Describe(); !strings.Contains(d, "compaction") || !strings.Contains(d, "disk full (injected)") {
		t.Errorf("Describe = %q; want it to say why compaction failed", d)
	}
	if got := fileSize(t, path); got != before {
		t.Errorf("file changed from %d to %d bytes", before, got)
	}
	if got, err := b.Get(ctx, "s299"); err != nil || len(got) != 32<<10 {
		t.Errorf("Get(s299) = %d bytes, %v", len(got), err)
	}
	if err := b.Put(ctx, "new", []byte("x")); err != nil {
		t.Errorf("Put: %v", err)
	}
}

// A large file that is mostly in use is left as it is.
func TestBoltNoCompactionWhenInUse(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sessions.db")
	b, err := OpenBolt(path, BoltOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	for i := range 200 {
		if err := b.Put(ctx, fmt.Sprintf("s%03d", i), bytes.Repeat([]byte{1}, 32<<10)); err != nil {
			t.Fatal(err)
		}
	}
	b.Close()
	before := fileSize(t, path)
	fi, _ := os.Stat(path)
	b, err = OpenBolt(path, BoltOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	fi2, _ := os.Stat(path)
	if !os.SameFile(fi, fi2) || fileSize(t, path) != before {
		t.Errorf("a %d-byte file in use was rewritten", before)
	}
}

// The crash test's child: opens the file at path, then puts records until
// killed, printing each id once its Put has returned.
func crashChild(path string) error {
	b, err := OpenBolt(path, BoltOptions{LockTimeout: 5 * time.Second})
	if err != nil {
		return err
	}
	round := os.Getenv(crashChildEnv + "_ROUND")
	w := bufio.NewWriter(os.Stdout)
	ctx := context.Background()
	for i := 0; ; i++ {
		id := fmt.Sprintf("r%s-%06d", round, i)
		if err := b.Put(ctx, id, crashRecord(id)); err != nil {
			return err
		}
		if i%7 == 3 { // some churn, so that freed pages are reused
			if err := b.Delete(ctx, fmt.Sprintf("r%s-%06d", round, i-1)); err != nil {
				return err
			}
		}
		fmt.Fprintln(w, id)
		w.Flush()
	}
}

// crashRecord is the content saved under id: 1 to 24 KiB, depending on
// the id, ending in the SHA-256 of the rest.
func crashRecord(id string) []byte {
	h := sha256.Sum256([]byte(id))
	n := 1<<10 + int(h[0])*92
	body := bytes.Repeat(h[:], n/len(h)+1)[:n]
	sum := sha256.Sum256(body)
	return append(body, sum[:]...)
}

// A child writing in a loop is killed with SIGKILL at a random moment, a
// few times over on the same file: every reopen succeeds, the file checks
// clean, and every put the child saw return is there, intact.
func TestBoltCrashSafety(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sessions.db")
	acked := map[string]bool{} // id → still expected (not deleted after)
	for round := range 4 {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), crashChildEnv+"="+path, fmt.Sprintf("%s_ROUND=%d", crashChildEnv, round))
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := make(chan string, 1024)
		go func() {
			defer close(lines)
			r := bufio.NewReader(stdout)
			for {
				line, err := r.ReadString('\n')
				if err != nil { // a line cut by the kill was not acknowledged
					return
				}
				lines <- strings.TrimSuffix(line, "\n")
			}
		}()
		// Kill after the first ack and a random while.
		first, ok := <-lines
		if !ok {
			cmd.Wait()
			t.Fatalf("round %d: the child wrote nothing: %s", round, stderr.String())
		}
		var got []string
		got = append(got, first)
		time.Sleep(time.Duration(rand.IntN(300)) * time.Millisecond) // the kill lands at a random point of the child's writes
		cmd.Process.Signal(syscall.SIGKILL)
		for line := range lines {
			got = append(got, line)
		}
		werr := cmd.Wait()
		var exit *exec.ExitError
		if !errors.As(werr, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Fatalf("round %d: child ended with %v, not by SIGKILL: %s", round, werr, stderr.String())
		}
		for i, id := range got {
			acked[id] = true
			if i%7 == 3 && i > 0 {
				delete(acked, got[i-1]) // its delete was acknowledged too
			}
		}
		if n := len(got); n%7 == 3 {
			// The next put, never acknowledged, deletes the last one
			// acknowledged before it says so: it may be gone or not.
			delete(acked, got[n-1])
		}

		b, err := OpenBolt(path, BoltOptions{LockTimeout: 5 * time.Second})
		if err != nil {
			t.Fatalf("round %d: reopen after the kill: %v", round, err)
		}
		if err := check(b); err != nil {
			t.Errorf("round %d: check: %v", round, err)
		}
		ids, err := b.List(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		present := map[string]bool{}
		for _, id := range ids {
			present[id] = true
			v, err := b.Get(context.Background(), id)
			if err != nil || !bytes.Equal(v, crashRecord(id)) {
				t.Errorf("round %d: %s is damaged (%d bytes, %v)", round, id, len(v), err)
			}
		}
		missing := 0
		for id := range acked {
			if !present[id] {
				missing++
				t.Errorf("round %d: acknowledged %s is missing", round, id)
			}
		}
		t.Logf("round %d: %d puts acknowledged before the kill, %d records on file, %d bytes", round, len(got), len(ids), fileSize(t, path))
		b.Close()
		if missing > 0 {
			t.FailNow()
		}
	}
}

func BenchmarkPut(b *testing.B) {
	value := bytes.Repeat([]byte("snapshot"), 4<<10/8)
	run := func(b *testing.B, st Store) {
		ctx := context.Background()
		b.SetBytes(int64(len(value)))
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if err := st.Put(ctx, fmt.Sprintf("s%d", i%1000), value); err != nil {
				b.Fatal(err)
			}
			i++
		}
	}
	b.Run("bolt", func(b *testing.B) { run(b, openTestBolt(b)) })
	b.Run("kv", func(b *testing.B) { run(b, openTestKV(b, sharedNATS(b), KVOptions{})) })
}
