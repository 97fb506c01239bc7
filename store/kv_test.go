package store

import (
	"bytes"
	"context"
	"errors"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
)

// rawKV opens k's bucket on a connection of the test's own, to look at
// what is stored.
func rawKV(t *testing.T, s *server.Server, bucket string) (jetstream.JetStream, jetstream.KeyValue) {
	t.Helper()
	js, err := jetstream.New(connect(t, s.ClientURL()))
	if err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(ctxT(t), bucket)
	if err != nil {
		t.Fatal(err)
	}
	return js, kv
}

func TestKVBucketAndKeys(t *testing.T) {
	s := sharedNATS(t)
	k := openTestKV(t, s, KVOptions{})
	ctx := ctxT(t)
	if got, want := k.Describe(), "nats kv "+k.bucket; got != want {
		t.Errorf("Describe = %q; want %q", got, want)
	}
	if err := k.Put(ctx, "Sess-1_x", []byte("v")); err != nil {
		t.Fatal(err)
	}
	_, raw := rawKV(t, s, k.bucket)
	e, err := raw.Get(ctx, "snap.Sess-1_x")
	if err != nil || string(e.Value()) != "v" {
		t.Fatalf("raw Get(snap.Sess-1_x) = %v; want the value under snap.<id>", err)
	}
	st, err := raw.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.History() != 1 || st.BackingStore() != "JetStream" {
		t.Errorf("bucket history %d, backing %q", st.History(), st.BackingStore())
	}
	info := st.(*jetstream.KeyValueBucketStatus).StreamInfo()
	if info.Config.Storage != jetstream.FileStorage || info.Config.Replicas != 1 || info.Config.MaxMsgSize != DefaultKVMaxValueSize {
		t.Errorf("stream config: storage %v, replicas %d, max msg size %d", info.Config.Storage, info.Config.Replicas, info.Config.MaxMsgSize)
	}
	// A key that is no id (written by someone else) is not listed.
	raw.Put(ctx, "snap.a=b", []byte("x"))
	raw.Put(ctx, "other", []byte("x"))
	if ids, err := k.List(ctx); err != nil || !slices.Equal(ids, []string{"Sess-1_x"}) {
		t.Errorf("List = %q, %v; want only the snapshot", ids, err)
	}
	// Opening the bucket again is fine (CreateOrUpdate).
	k2, err := OpenKV(ctx, connect(t, s.ClientURL()), k.bucket, KVOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer k2.Close()
	if got, err := k2.Get(ctx, "Sess-1_x"); err != nil || string(got) != "v" {
		t.Errorf("Get through a second OpenKV = %q, %v", got, err)
	}
}

func TestKVOptionErrors(t *testing.T) {
	s := sharedNATS(t)
	nc := connect(t, s.ClientURL())
	ctx := ctxT(t)
	for _, c := range []struct {
		name, bucket, want string
		o                  KVOptions
		nc                 *nats.Conn
	}{
		{"nil conn", "b", "nil connection", KVOptions{}, nil},
		{"empty bucket", "", "empty bucket", KVOptions{}, nc},
		{"bad bucket", "a.b", `"a.b"`, KVOptions{}, nc},
		{"negative replicas", "b", "Replicas", KVOptions{Replicas: -1}, nc},
		{"replicas on one server", "b", "replicas", KVOptions{Replicas: 3}, nc},
		{"negative size", "b", "MaxValueSize", KVOptions{MaxValueSize: -1}, nc},
		{"size over max_payload", "b", "max_payload", KVOptions{MaxValueSize: 2 << 20}, nc},
	} {
		k, err := OpenKV(ctx, c.nc, c.bucket, c.o)
		if err == nil {
			k.Close()
			t.Errorf("%s: OpenKV succeeded", c.name)
		} else if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want an error saying %q", c.name, err, c.want)
		}
	}
}

// A value over the limit is refused before anything is sent; one the
// client lets through but the bucket does not is ErrTooLarge too.
func TestKVTooLarge(t *testing.T) {
	s := sharedNATS(t)
	ctx := ctxT(t)
	k := openTestKV(t, s, KVOptions{})
	if err := k.Put(ctx, "big", make([]byte, DefaultKVMaxValueSize)); err != nil {
		t.Fatalf("Put of exactly the limit: %v", err)
	}
	sent := k.nc.Stats().OutMsgs
	err := k.Put(ctx, "big", make([]byte, DefaultKVMaxValueSize+1))
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Put over the limit = %v; want ErrTooLarge", err)
	}
	if n := k.nc.Stats().OutMsgs - sent; n != 0 {
		t.Errorf("the refused Put sent %d messages; want none", n)
	}
	if got, _ := k.Get(ctx, "big"); len(got) != DefaultKVMaxValueSize {
		t.Errorf("the refused Put changed the value (%d bytes)", len(got))
	}
	small := openTestKV(t, s, KVOptions{MaxValueSize: 1000})
	if err := small.Put(ctx, "x", make([]byte, 1001)); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "1000") {
		t.Errorf("Put over MaxValueSize 1000 = %v; want ErrTooLarge naming the limit", err)
	}
	// The bucket's own limit, reached by a store that thinks it may send
	// more (an older bucket setting, another writer's options).
	small.maxValue = 5000
	if err := small.Put(ctx, "x", make([]byte, 2000)); !errors.Is(err, ErrTooLarge) {
		t.Errorf("Put over the bucket's limit = %v; want ErrTooLarge", err)
	}
}

// A delete leaves a marker that expires: the bucket does not keep one per
// id ever deleted.
func TestKVDeleteMarkersExpire(t *testing.T) {
	old := deleteMarkerTTL
	deleteMarkerTTL = time.Second
	t.Cleanup(func() { deleteMarkerTTL = old })
	s := sharedNATS(t)
	ctx := ctxT(t)
	k := openTestKV(t, s, KVOptions{})
	for _, id := range []string{"a", "b", "c"} {
		k.Put(ctx, id, []byte(id))
		k.Delete(ctx, id)
	}
	k.Delete(ctx, "never-there")
	_, raw := rawKV(t, s, k.bucket)
	msgs := func() uint64 {
		st, err := raw.Status(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return st.Values()
	}
	if n := msgs(); n != 4 {
		t.Fatalf("%d messages in the bucket after 4 deletes; want 4 markers", n)
	}
	testkit.Eventually(t, 10*time.Second, func() bool { return msgs() == 0 }, "delete markers expire (%d messages left)", msgs())
	if ids, err := k.List(ctx); err != nil || len(ids) != 0 {
		t.Errorf("List = %q, %v; want empty", ids, err)
	}
	if _, err := k.Get(ctx, "a"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get(a) = %v; want ErrNotFound", err)
	}
}

// A bucket that vanished (NATS restarted without its data, someone
// deleted it) is created again on the next call.
func TestKVBucketRecreated(t *testing.T) {
	s := sharedNATS(t)
	ctx := ctxT(t)
	k := openTestKV(t, s, KVOptions{})
	k.Put(ctx, "a", []byte("1"))
	js, _ := rawKV(t, s, k.bucket)
	if err := js.DeleteKeyValue(ctx, k.bucket); err != nil {
		t.Fatal(err)
	}
	// Right after a delete, NATS may still be removing the old stream's
	// files and refuse to create it again (err 10049): that call is
	// ErrUnavailable, a later one succeeds.
	var err error
	testkit.Eventually(t, 5*time.Second, func() bool {
		_, err = k.Get(ctx, "a")
		if err != nil && !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrUnavailable) {
			t.Fatalf("Get in the vanished bucket = %v; want ErrNotFound (or ErrUnavailable for a moment)", err)
		}
		return errors.Is(err, ErrNotFound)
	}, "Get in the vanished bucket gives ErrNotFound")
	if err := js.DeleteKeyValue(ctx, k.bucket); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 5*time.Second, func() bool {
		err = k.Put(ctx, "b", []byte("2"))
		if err != nil && !errors.Is(err, ErrUnavailable) {
			t.Fatalf("Put in the vanished bucket = %v", err)
		}
		return err == nil
	}, "Put in the vanished bucket succeeds")
	if ids, err := k.List(ctx); err != nil || !slices.Equal(ids, []string{"b"}) {
		t.Fatalf("List = %q, %v; want [b]", ids, err)
	}
}

// NATS stopped: every call fails with ErrUnavailable, in bounded time;
// NATS back on the same port and directory: the data is there and calls
// work again.
func TestKVOutage(t *testing.T) {
	dir := t.TempDir()
	s := runNATS(t, dir, server.RANDOM_PORT)
	port := natsPort(s)
	nc := connect(t, s.ClientURL())
	k, err := OpenKV(ctxT(t), nc, uniqueBucket(), KVOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	ctx := ctxT(t)
	value := bytes.Repeat([]byte("x"), 4<<10)
	for _, id := range []string{"a", "b"} {
		if err := k.Put(ctx, id, value); err != nil {
			t.Fatal(err)
		}
	}

	s.Shutdown()
	s.WaitForShutdown()
	testkit.Eventually(t, 5*time.Second, func() bool { return !nc.IsConnected() }, "the client notices NATS is gone")
	calls := map[string]func(context.Context) error{
		"Put":    func(ctx context.Context) error { return k.Put(ctx, "c", value) },
		"Get":    func(ctx context.Context) error { _, err := k.Get(ctx, "a"); return err },
		"Delete": func(ctx context.Context) error { return k.Delete(ctx, "b") },
		"List":   func(ctx context.Context) error { _, err := k.List(ctx); return err },
	}
	for name, call := range calls {
		cctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		start := time.Now()
		err := call(cctx)
		cancel()
		if !errors.Is(err, ErrUnavailable) {
			t.Errorf("%s during the outage = %v; want ErrUnavailable", name, err)
		}
		if d := time.Since(start); d > 2500*time.Millisecond {
			t.Errorf("%s took %v; want at most the ctx's 2 s", name, d)
		}
	}
	// Open during the outage fails the same way.
	if _, err := OpenKV(ctx, nc, uniqueBucket(), KVOptions{}); !errors.Is(err, ErrUnavailable) {
		t.Errorf("OpenKV during the outage = %v; want ErrUnavailable", err)
	}

	runNATS(t, dir, port)
	testkit.Eventually(t, 10*time.Second, nc.IsConnected, "the client reconnects")
	for _, id := range []string{"a", "b"} {
		got, err := k.Get(ctx, id)
		if err != nil || !bytes.Equal(got, value) {
			t.Errorf("Get(%s) after the restart: %d bytes, %v", id, len(got), err)
		}
	}
	if _, err := k.Get(ctx, "c"); !errors.Is(err, ErrNotFound) {
		t.Errorf("the Put refused during the outage was written: Get(c) = %v", err)
	}
	if err := k.Put(ctx, "c", []byte("after")); err != nil {
		t.Fatal(err)
	}
	if err := k.Delete(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if ids, err := k.List(ctx); err != nil || !slices.Equal(ids, []string{"b", "c"}) {
		t.Errorf("List after the restart = %q, %v; want [b c]", ids, err)
	}
}

// The caller cancelling is its own error, not NATS being unavailable.
func TestKVCancelled(t *testing.T) {
	k := openTestKV(t, sharedNATS(t), KVOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := k.Put(ctx, "a", []byte("1"))
	if !errors.Is(err, context.Canceled) || errors.Is(err, ErrUnavailable) {
		t.Errorf("Put with a cancelled ctx = %v; want context.Canceled alone", err)
	}
}

// gateProxy forwards TCP to a NATS server; paused, it holds what it reads
// instead of passing it on, like a network that has gone silent without
// closing anything.
type gateProxy struct {
	ln       net.Listener
	upstream string
	mu       sync.Mutex
	open     *sync.Cond
	paused   bool
	closed   bool
	conns    []net.Conn
	wg       sync.WaitGroup
}

func startGateProxy(t *testing.T, upstream string) *gateProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &gateProxy{ln: ln, upstream: upstream}
	p.open = sync.NewCond(&p.mu)
	p.wg.Go(p.accept)
	t.Cleanup(p.close)
	return p
}

func (p *gateProxy) url() string { return "nats://" + p.ln.Addr().String() }

func (p *gateProxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		u, err := net.Dial("tcp", p.upstream)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, u)
		p.mu.Unlock()
		p.wg.Go(func() { p.pipe(u, c) })
		p.wg.Go(func() { p.pipe(c, u) })
	}
}

func (p *gateProxy) pipe(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			for p.paused && !p.closed {
				p.open.Wait()
			}
			p.mu.Unlock()
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			dst.Close()
			return
		}
	}
}

func (p *gateProxy) setPaused(paused bool) {
	p.mu.Lock()
	p.paused = paused
	p.mu.Unlock()
	p.open.Broadcast()
}

func (p *gateProxy) close() {
	p.ln.Close()
	p.mu.Lock()
	p.closed = true
	for _, c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.open.Broadcast()
	p.wg.Wait()
}

// NATS gone silent (the connection still looks up): calls end with
// ErrUnavailable when their ctx does; and a Put that failed so may be
// written once the network is back, the trap Put documents.
func TestKVSilentOutage(t *testing.T) {
	s := sharedNATS(t)
	p := startGateProxy(t, s.Addr().String())
	nc := connect(t, p.url())
	k, err := OpenKV(ctxT(t), nc, uniqueBucket(), KVOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	if err := k.Put(ctxT(t), "a", []byte("before")); err != nil {
		t.Fatal(err)
	}

	p.setPaused(true)
	for name, call := range map[string]func(context.Context) error{
		"Put": func(ctx context.Context) error { return k.Put(ctx, "a", []byte("during")) },
		"Get": func(ctx context.Context) error { _, err := k.Get(ctx, "a"); return err },
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		start := time.Now()
		err := call(ctx)
		cancel()
		if !errors.Is(err, ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s while NATS is silent = %v; want ErrUnavailable and the deadline", name, err)
		}
		if d := time.Since(start); d > 1500*time.Millisecond {
			t.Errorf("%s took %v; want about the ctx's 500 ms", name, d)
		}
	}
	p.setPaused(false)
	testkit.Eventually(t, 5*time.Second, func() bool {
		got, err := k.Get(ctxT(t), "a")
		return err == nil && string(got) == "during"
	}, "the Put that failed during the silence is written once the network is back")
}
