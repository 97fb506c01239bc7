package server_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	gossh "golang.org/x/crypto/ssh"

	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/server"
)

// peakOf samples each named count until stop is closed and returns the
// largest value each took; call the returned wait before reading them.
func peakOf(stop <-chan struct{}, counts map[string]func() int) (peaks map[string]*atomic.Int64, wait func()) {
	peaks = map[string]*atomic.Int64{}
	for name := range counts {
		peaks[name] = new(atomic.Int64)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			for name, f := range counts {
				if v := int64(f()); v > peaks[name].Load() {
					peaks[name].Store(v)
				}
			}
			select {
			case <-stop:
				return
			default:
				runtime.Gosched()
			}
		}
	}()
	return peaks, func() { <-done }
}

// racer is one SSH login of a race: a real client with a PTY running the
// shell, whose stderr is kept and whose end is seen.
type racer struct {
	conn   *gossh.Client
	sess   *gossh.Session
	stdin  io.WriteCloser
	stderr bytes.Buffer // written until exited is closed
	exited chan struct{}
	err    error // why it could not even start its shell
}

// race makes n logins at once; opts(i) is racer i's client options. One
// barrier releases them all: before they dial (the connection caps count
// there), or, with atShell, once each is connected with its PTY, before
// it asks for its shell (where its session starts). Each stays until the
// test ends (or closeAll).
func race(t *testing.T, addr string, n int, atShell bool, opts func(i int) clientOpts) []*racer {
	t.Helper()
	rs := make([]*racer, n)
	barrier := make(chan struct{})
	var ready, wg sync.WaitGroup
	for i := range rs {
		r := &racer{exited: make(chan struct{})}
		rs[i] = r
		o := opts(i)
		if o.key == nil {
			o.key = newKey(t)
		}
		ready.Add(1)
		wg.Go(func() {
			if !atShell {
				ready.Done()
				<-barrier
			}
			r.err = r.start(t, addr, o, func() {
				if atShell {
					ready.Done()
					<-barrier
				}
			})
			if r.err != nil {
				close(r.exited)
			}
		})
	}
	ready.Wait()
	close(barrier)
	wg.Wait()
	t.Cleanup(func() { closeAll(rs) })
	return rs
}

// start logs in; beforeShell runs before it asks for the shell, or when
// it failed before that.
func (r *racer) start(t *testing.T, addr string, o clientOpts, beforeShell func()) (err error) {
	waited := false
	defer func() {
		if !waited {
			beforeShell()
		}
	}()
	conn, err := dialSSH(t, addr, o)
	if err != nil {
		return err
	}
	r.conn = conn
	if r.sess, err = conn.NewSession(); err != nil {
		return err
	}
	if err := r.sess.RequestPty("xterm-256color", 30, 100, gossh.TerminalModes{}); err != nil {
		return err
	}
	// Stdin stays open (a nil Stdin would be an EOF: the client left).
	if r.stdin, err = r.sess.StdinPipe(); err != nil {
		return err
	}
	r.sess.Stdout = io.Discard
	r.sess.Stderr = &r.stderr
	waited = true
	beforeShell()
	if o.command != "" {
		err = r.sess.Start(o.command)
	} else {
		err = r.sess.Shell()
	}
	if err != nil {
		return err
	}
	go func() {
		_ = r.sess.Wait()
		close(r.exited)
	}()
	return nil
}

func (r *racer) done() bool {
	select {
	case <-r.exited:
		return true
	default:
		return false
	}
}

// refusal is what the server told a racer that ended ("" while it runs).
func (r *racer) refusal() string {
	if !r.done() {
		return ""
	}
	if r.err != nil {
		return r.err.Error()
	}
	return r.stderr.String()
}

func closeAll(rs []*racer) {
	for _, r := range rs {
		if r.conn != nil {
			_ = r.conn.Close()
		}
	}
}

// settle waits until every racer ended or has a live session, and returns
// the ones still running.
func settle(t *testing.T, srv *testServer, rs []*racer) (admitted []*racer) {
	t.Helper()
	count := func() (ended int) {
		for _, r := range rs {
			if r.done() {
				ended++
			}
		}
		return ended
	}
	testkit.Eventually(t, waitLong, func() bool { return count()+srv.Sessions().Count() == len(rs) },
		"%d racers ended and %d sessions live, of %d racers", count(), srv.Sessions().Count(), len(rs))
	for _, r := range rs {
		if !r.done() {
			admitted = append(admitted, r)
		}
	}
	return admitted
}

// TestCapsSSHConnectionsUnderConcurrentDials: SSH logins from one address
// and from several, released at once by a barrier, against the caps on
// connections per address and in total: the server's own counts, sampled
// while they race, never pass a cap, every refused login is told which,
// at most the caps' worth of logins stay, and once everyone has gone
// every slot is back (a new login is let in).
func TestCapsSSHConnectionsUnderConcurrentDials(t *testing.T) {
	testkit.EndToEnd(t) // here: its racers dial SSH on goroutines of their own
	t.Parallel()
	for _, tc := range []struct {
		name             string
		perIP, total     int
		addrs, perAddr   int
		wantRefusalsLike string
	}{
		{name: "one address", perIP: 3, total: 1000, addrs: 1, perAddr: 24, wantRefusalsLike: "too many connections from 127.0.0.1"},
		{name: "many addresses", perIP: 2, total: 5, addrs: 4, perAddr: 6, wantRefusalsLike: "too many connections from|the server is full"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := startServer(t, server.Options{Limits: server.Limits{MaxPerIP: tc.perIP, MaxConnections: tc.total}})
			addr := func(i int) string { return fmt.Sprintf("127.0.0.%d", 1+i%tc.addrs) }
			counts := map[string]func() int{"total": srv.SSHConnections}
			for i := range tc.addrs {
				counts[addr(i)] = func() int { return srv.SSHConnectionsFrom(addr(i)) }
			}
			stop := make(chan struct{})
			peaks, wait := peakOf(stop, counts)
			rs := race(t, srv.SSHAddr(), tc.addrs*tc.perAddr, false, func(i int) clientOpts { return clientOpts{local: addr(i)} })
			admitted := settle(t, srv, rs)
			close(stop)
			wait()

			if got := peaks["total"].Load(); got > int64(tc.total) {
				t.Errorf("%d connections admitted at one instant, cap %d", got, tc.total)
			}
			for i := range tc.addrs {
				if got := peaks[addr(i)].Load(); got > int64(tc.perIP) {
					t.Errorf("%d connections from %s admitted at one instant, cap %d", got, addr(i), tc.perIP)
				}
			}
			if want := min(tc.total, tc.perIP*tc.addrs); len(admitted) != want {
				t.Errorf("%d logins stayed, want %d (the caps' worth)", len(admitted), want)
			}
			perAddr := map[string]int{}
			for i, r := range rs {
				if !r.done() {
					perAddr[addr(i)]++
					continue
				}
				if why := r.refusal(); !matchesAny(why, tc.wantRefusalsLike) {
					t.Errorf("racer %d refused with %q, want %q", i, why, tc.wantRefusalsLike)
				}
			}
			for a, n := range perAddr {
				if n > tc.perIP {
					t.Errorf("%d logins from %s stayed, cap %d", n, a, tc.perIP)
				}
			}

			closeAll(rs)
			waitCount(t, srv, 0)
			waitConnections(t, srv, 0)
			for i := range tc.addrs {
				if n := srv.SSHConnectionsFrom(addr(i)); n != 0 {
					t.Errorf("%s still holds %d slots", addr(i), n)
				}
			}
			c := connect(t, srv.SSHAddr(), clientOpts{})
			waitDemo(t, c)
		})
	}
}

// matchesAny reports whether s contains any of the |-separated parts.
func matchesAny(s, parts string) bool {
	for p := range strings.SplitSeq(parts, "|") {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}

// TestCapsSessionsPerOwnerUnderConcurrentLogins: logins of one key (under
// two user names: one owner), connected with their PTYs and released at
// once by a barrier to ask for their shells (where sessions start), with a cap of
// 3 sessions per owner: never more than 3 sessions live at any instant
// (sampled while they race), exactly 3 stay, the others are told the
// cap; once they leave the owner's slots are back.
func TestCapsSessionsPerOwnerUnderConcurrentLogins(t *testing.T) {
	testkit.EndToEnd(t) // here: its racers dial SSH on goroutines of their own
	t.Parallel()
	const limit, racers = 3, 16
	srv := startServer(t, server.Options{Limits: server.Limits{MaxSessionsPerUser: limit}})
	key := newKey(t)
	stop := make(chan struct{})
	peaks, wait := peakOf(stop, map[string]func() int{"sessions": srv.Sessions().Count})
	rs := race(t, srv.SSHAddr(), racers, true, func(i int) clientOpts {
		return clientOpts{key: key, user: []string{"alice", "bob"}[i%2]}
	})
	admitted := settle(t, srv, rs)
	close(stop)
	wait()

	if got := peaks["sessions"].Load(); got > limit {
		t.Errorf("%d sessions of one owner live at one instant, cap %d", got, limit)
	}
	if len(admitted) != limit {
		t.Errorf("%d logins stayed, want %d", len(admitted), limit)
	}
	for i, r := range rs {
		if why := r.refusal(); r.done() && !strings.Contains(why, "too many sessions for your key") {
			t.Errorf("racer %d refused with %q", i, why)
		}
	}

	closeAll(rs)
	waitCount(t, srv, 0)
	for range limit {
		waitDemo(t, connect(t, srv.SSHAddr(), clientOpts{key: key, user: "carol"}))
	}
}

// TestCapsChannelsPerConnectionUnderConcurrentOpens: session channels
// opened at once on one connection never pass the cap (sampled while they
// race); exactly the cap's worth are accepted, the rest refused as
// resource shortage; closed ones give their places back.
func TestCapsChannelsPerConnectionUnderConcurrentOpens(t *testing.T) {
	t.Parallel()
	const limit, racers = 3, 30
	srv := startServer(t, server.Options{Limits: server.Limits{MaxChannelsPerConnection: limit}})
	conn, err := dialSSH(t, srv.SSHAddr(), clientOpts{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })

	stop := make(chan struct{})
	peaks, wait := peakOf(stop, map[string]func() int{"channels": srv.SSHChannelsOpen})
	barrier := make(chan struct{})
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		open    []gossh.Channel
		refused int
		others  []error
	)
	for range racers {
		wg.Go(func() {
			<-barrier
			ch, reqs, err := conn.OpenChannel("session", nil)
			mu.Lock()
			defer mu.Unlock()
			var oce *gossh.OpenChannelError
			switch {
			case err == nil:
				go gossh.DiscardRequests(reqs)
				open = append(open, ch)
			case errors.As(err, &oce) && oce.Reason == gossh.ResourceShortage:
				refused++
			default:
				others = append(others, err)
			}
		})
	}
	close(barrier)
	wg.Wait()
	close(stop)
	wait()

	if len(others) > 0 {
		t.Fatalf("%d opens failed otherwise, first: %v", len(others), others[0])
	}
	if got := peaks["channels"].Load(); got > limit {
		t.Errorf("%d channels counted at one instant, cap %d", got, limit)
	}
	if len(open) != limit || refused != racers-limit {
		t.Errorf("%d channels accepted, %d refused, want %d and %d", len(open), refused, limit, racers-limit)
	}
	for _, ch := range open {
		_ = ch.Close()
	}
	testkit.Eventually(t, waitLong, func() bool { return srv.SSHChannelsOpen() == 0 },
		"%d channels still counted after all closed", srv.SSHChannelsOpen())
	for range limit {
		ch, reqs, err := conn.OpenChannel("session", nil)
		if err != nil {
			t.Fatalf("a channel after the others closed: %v", err)
		}
		go gossh.DiscardRequests(reqs)
		defer ch.Close()
	}
}
