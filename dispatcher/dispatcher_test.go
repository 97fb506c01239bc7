package dispatcher

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	tea "charm.land/bubbletea/v2"
	"go.uber.org/goleak"

	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// counter is the test app. Update uses a value receiver and never changes
// shared memory, as ui.Model requires.
type counter struct {
	n          int
	seq        []int // values of appendMsg, in fold order
	viewPanics bool
	next       int  // next expected orderMsg
	outOfOrder bool // an orderMsg arrived out of order
	initCmd    tea.Cmd
}

type (
	inc          struct{ n int }
	boom         struct{ secret string } // Update panics, quoting secret
	nilModel     struct{}
	setViewPanic bool
	withCmd      struct{ cmd tea.Cmd }
	appendMsg    int
	orderMsg     int
	block        struct{ started, release chan struct{} }
)

func (c counter) Init() tea.Cmd { return c.initCmd }

func (c counter) Update(msg tea.Msg) (ui.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case inc:
		c.n += msg.n
	case boom:
		panic("boom: " + msg.secret)
	case nilModel:
		return nil, nil
	case setViewPanic:
		c.viewPanics = bool(msg)
	case withCmd:
		return c, msg.cmd
	case appendMsg:
		c.seq = append(c.seq[:len(c.seq):len(c.seq)], int(msg))
	case orderMsg:
		if int(msg) != c.next {
			c.outOfOrder = true
		}
		c.next++
	case block:
		close(msg.started)
		<-msg.release
		c.n++
	}
	return c, nil
}

func (c counter) View() ui.Node {
	if c.viewPanics {
		panic("view")
	}
	return ui.Text{Text: strconv.Itoa(c.n)}
}

var agent = Origin{Kind: OriginAgent, Name: "claude-code"}

func newD(t testing.TB, opts *Options) *Dispatcher {
	t.Helper()
	d := New(counter{}, opts)
	t.Cleanup(d.Close)
	return d
}

func model(d *Dispatcher) counter { return d.Snapshot().Model.(counter) }

func treeText(s Snapshot) string { return s.Tree.(ui.Text).Text }

func TestOriginString(t *testing.T) {
	for _, tc := range []struct {
		o    Origin
		want string
	}{
		{agent, "agent:claude-code"},
		{Origin{Kind: OriginHuman, Name: "t1"}, "human:t1"},
		{Origin{Kind: OriginTimer}, "timer"},
	} {
		if got := tc.o.String(); got != tc.want {
			t.Errorf("%#v.String() = %q, want %q", tc.o, got, tc.want)
		}
	}
}

func TestFirstSnapshot(t *testing.T) {
	d := newD(t, nil)
	s := d.Snapshot()
	if s.Version != 1 || treeText(s) != "0" || s.Origin != initOrigin || s.At.IsZero() {
		t.Fatalf("first snapshot = %+v", s)
	}
}

func TestCallReturnsAfterFold(t *testing.T) {
	d := newD(t, nil)
	for i := 1; i <= 3; i++ {
		if err := d.Call(t.Context(), agent, inc{5}); err != nil {
			t.Fatal(err)
		}
		s := d.Snapshot()
		if got := s.Model.(counter).n; got != 5*i {
			t.Fatalf("n = %d right after Call, want %d", got, 5*i)
		}
		if treeText(s) != strconv.Itoa(5*i) || s.Version != uint64(1+i) || s.Origin != agent {
			t.Fatalf("snapshot = %+v", s)
		}
	}
	// A Call with no messages is a barrier and publishes nothing.
	if err := d.Call(t.Context(), agent); err != nil {
		t.Fatal(err)
	}
	if v := d.Snapshot().Version; v != 4 {
		t.Fatalf("version after empty Call = %d, want 4", v)
	}
}

func TestUpdatePanicRollsBack(t *testing.T) {
	var failed atomic.Int32
	d := newD(t, &Options{Hooks: Hooks{OnUpdateFailed: func() { failed.Add(1) }}})
	if err := d.Call(t.Context(), agent, inc{1}); err != nil {
		t.Fatal(err)
	}
	before := d.Snapshot()

	// The second message panics: the first one's effect is rolled back too.
	err := d.Call(t.Context(), agent, inc{10}, boom{secret: "hunter2"})
	if !errors.Is(err, ErrUpdateFailed) {
		t.Fatalf("err = %v, want ErrUpdateFailed", err)
	}
	var ue *UpdateError
	if !errors.As(err, &ue) || ue.Panic == nil {
		t.Fatalf("err = %#v, want *UpdateError with a panic", err)
	}
	if msg := err.Error(); !strings.HasPrefix(msg, "update_failed: ") ||
		!strings.Contains(msg, "dispatcher.boom") || strings.Contains(msg, "hunter2") {
		t.Fatalf("Error() = %q", msg)
	}
	after := d.Snapshot()
	if after.Model.(counter).n != 1 || after.Version != before.Version {
		t.Fatalf("after failed Call: n = %d, version %d; want 1, %d",
			after.Model.(counter).n, after.Version, before.Version)
	}
	if failed.Load() != 1 {
		t.Fatalf("OnUpdateFailed called %d times, want 1", failed.Load())
	}

	// The session keeps working.
	if err := d.Call(t.Context(), agent, inc{2}); err != nil {
		t.Fatal(err)
	}
	if n := model(d).n; n != 3 {
		t.Fatalf("n = %d, want 3", n)
	}
}

func TestNilModelIsUpdateFailed(t *testing.T) {
	d := newD(t, nil)
	err := d.Call(t.Context(), agent, inc{4}, nilModel{})
	var ue *UpdateError
	if !errors.Is(err, ErrUpdateFailed) || !errors.As(err, &ue) || ue.Panic != nil {
		t.Fatalf("err = %#v, want *UpdateError without a panic", err)
	}
	if !strings.Contains(err.Error(), "nil model") {
		t.Fatalf("Error() = %q", err)
	}
	if n := model(d).n; n != 0 {
		t.Fatalf("n = %d, want 0", n)
	}
	if err := d.Call(t.Context(), agent, inc{1}); err != nil {
		t.Fatal(err)
	}
}

func TestViewPanicKeepsLastGoodTree(t *testing.T) {
	var viewFailed atomic.Int32
	d := newD(t, &Options{Hooks: Hooks{OnViewFailed: func() { viewFailed.Add(1) }}})
	if err := d.Call(t.Context(), agent, inc{1}); err != nil {
		t.Fatal(err)
	}
	if err := d.Call(t.Context(), agent, setViewPanic(true), inc{1}); err != nil {
		t.Fatalf("View panic must not fail the Call: %v", err)
	}
	s := d.Snapshot()
	if treeText(s) != "1" {
		t.Fatalf("tree = %q, want the last good one, %q", treeText(s), "1")
	}
	if s.Model.(counter).n != 2 || s.Version != 3 {
		t.Fatalf("n = %d, version = %d; want 2, 3", s.Model.(counter).n, s.Version)
	}
	if viewFailed.Load() != 1 {
		t.Fatalf("OnViewFailed called %d times, want 1", viewFailed.Load())
	}
	if err := d.Call(t.Context(), agent, setViewPanic(false)); err != nil {
		t.Fatal(err)
	}
	if got := treeText(d.Snapshot()); got != "2" {
		t.Fatalf("tree = %q after View recovers, want %q", got, "2")
	}
}

// The timeout tests run in a synctest bubble: their clock is virtual, so
// they check that a Call gives up after exactly its timeout.

func TestCallTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newD(t, nil)
		b := block{started: make(chan struct{}), release: make(chan struct{})}
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
		defer cancel()
		start := time.Now()
		err := d.Call(ctx, agent, b)
		if !errors.Is(err, ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want ErrTimeout wrapping DeadlineExceeded", err)
		}
		if el := time.Since(start); el != 20*time.Millisecond {
			t.Fatalf("Call gave up after %v, want its context's 20ms", el)
		}
		if !strings.Contains(err.Error(), "may still be applied") {
			t.Fatalf("Error() = %q", err)
		}
		<-b.started
		close(b.release)
		// The timed-out message is still applied.
		if err := d.Call(t.Context(), agent); err != nil {
			t.Fatal(err)
		}
		if n := model(d).n; n != 1 {
			t.Fatalf("n = %d, want 1", n)
		}
	})
}

func TestCallDefaultTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newD(t, &Options{CallTimeout: 20 * time.Millisecond})
		b := block{started: make(chan struct{}), release: make(chan struct{})}
		defer close(b.release)
		start := time.Now()
		err := d.Call(context.Background(), agent, b)
		if !errors.Is(err, ErrTimeout) || errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want plain ErrTimeout", err)
		}
		if el := time.Since(start); el != 20*time.Millisecond {
			t.Fatalf("Call gave up after %v, want CallTimeout 20ms", el)
		}
		// A context with a later deadline does not extend it.
		ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
		defer cancel()
		start = time.Now()
		if err := d.Call(ctx, agent, inc{1}); !errors.Is(err, ErrTimeout) {
			t.Fatalf("err = %v, want ErrTimeout", err)
		}
		if el := time.Since(start); el != 20*time.Millisecond {
			t.Fatalf("Call with an hour's deadline gave up after %v, want CallTimeout 20ms", el)
		}
		// Waiting to enqueue is bounded too: fill the queue behind the block.
		for d.Send(agent, inc{1}) == nil {
		}
		start = time.Now()
		if err := d.Call(context.Background(), agent, inc{1}); !errors.Is(err, ErrTimeout) {
			t.Fatalf("err = %v, want ErrTimeout", err)
		}
		if el := time.Since(start); el != 20*time.Millisecond {
			t.Fatalf("Call on a full queue gave up after %v, want CallTimeout 20ms", el)
		}
	})
}

func TestOrderAcrossSends(t *testing.T) {
	d := newD(t, nil)
	const n = 1000
	for i := 0; i < n; {
		switch err := d.Send(agent, orderMsg(i)); {
		case err == nil:
			i++
		case errors.Is(err, ErrQueueFull):
			time.Sleep(time.Microsecond)
		default:
			t.Fatal(err)
		}
	}
	if err := d.Call(t.Context(), agent); err != nil {
		t.Fatal(err)
	}
	m := model(d)
	if m.next != n || m.outOfOrder {
		t.Fatalf("folded %d messages, out of order: %v", m.next, m.outOfOrder)
	}
	// Within one envelope too.
	msgs := make([]tea.Msg, 100)
	for i := range msgs {
		msgs[i] = appendMsg(i)
	}
	if err := d.Call(t.Context(), agent, msgs...); err != nil {
		t.Fatal(err)
	}
	for i, v := range model(d).seq {
		if v != i {
			t.Fatalf("seq[%d] = %d", i, v)
		}
	}
}

func TestCommandResultFoldsBack(t *testing.T) {
	d := newD(t, nil)
	sub := d.Subscribe()
	defer sub.Close()
	cmd := func() tea.Msg { return inc{7} }
	if err := d.Call(t.Context(), agent, withCmd{cmd}); err != nil {
		t.Fatal(err)
	}
	want := Origin{Kind: OriginCommand, Name: "agent:claude-code"}
	for {
		s := sub.Latest()
		if s.Model.(counter).n == 7 {
			if s.Origin != want {
				t.Fatalf("origin = %v, want %v", s.Origin, want)
			}
			break
		}
		select {
		case <-sub.C():
		case <-time.After(10 * time.Second):
			t.Fatal("command result never folded")
		}
	}
	// A command returned while folding a command result keeps the
	// original attribution.
	if got := commandOrigin(want); got != want {
		t.Fatalf("commandOrigin(%v) = %v", want, got)
	}
}

func TestInitCommand(t *testing.T) {
	d := New(counter{initCmd: func() tea.Msg { return inc{3} }}, nil)
	defer d.Close()
	testkit.Eventually(t, 10*time.Second, func() bool { return model(d).n == 3 }, "init command")
	if o := d.Snapshot().Origin; o != (Origin{Kind: OriginCommand, Name: "system:init"}) {
		t.Fatalf("origin = %v", o)
	}
}

func TestBatch(t *testing.T) {
	d := newD(t, nil)
	cmd := tea.Batch(
		func() tea.Msg { return inc{1} },
		nil,
		func() tea.Msg { return inc{2} },
		func() tea.Msg { return tea.Batch(func() tea.Msg { return inc{4} }, func() tea.Msg { return inc{8} })() },
	)
	if err := d.Call(t.Context(), agent, withCmd{cmd}); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 10*time.Second, func() bool { return model(d).n == 15 }, "batch results")
	// A BatchMsg sent as a message runs like a command.
	if err := d.Send(agent, tea.BatchMsg{func() tea.Msg { return inc{16} }, func() tea.Msg { return inc{32} }}); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 10*time.Second, func() bool { return model(d).n == 63 }, "sent batch")
}

func TestSequence(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newD(t, nil)
		// Each step records how many earlier results it could already see:
		// step i must see exactly i, since results are folded before the next
		// step starts. Earlier steps sleep longer, so a concurrent run would
		// mix up the order.
		const steps = 6
		var mu sync.Mutex
		seen := make([]int, steps)
		step := func(i int) tea.Cmd {
			return func() tea.Msg {
				mu.Lock()
				seen[i] = len(model(d).seq)
				mu.Unlock()
				time.Sleep(time.Duration(steps-i) * time.Millisecond)
				return appendMsg(i)
			}
		}
		// Steps 2 and 3 form a batch inside the sequence: step 4 starts only
		// after both are folded.
		cmd := tea.Sequence(step(0), step(1), tea.Batch(step(2), step(3)), step(4), step(5))
		if err := d.Call(t.Context(), agent, withCmd{cmd}); err != nil {
			t.Fatal(err)
		}
		testkit.Eventually(t, 10*time.Second, func() bool { return len(model(d).seq) == steps }, "sequence")
		mu.Lock()
		defer mu.Unlock()
		want := []int{0, 1, 2, 2, 4, 5}
		for i := range seen {
			if seen[i] != want[i] {
				t.Fatalf("step %d saw %d earlier results, want %d (seen %v)", i, seen[i], want[i], seen)
			}
		}
		got := model(d).seq
		if got[0] != 0 || got[1] != 1 || got[4] != 4 || got[5] != 5 {
			t.Fatalf("fold order = %v", got)
		}
	})
}

func TestMaxCommands(t *testing.T) {
	d := newD(t, &Options{MaxCommands: 2})
	var running, peak atomic.Int32
	release := make(chan struct{})
	cmds := make([]tea.Cmd, 6)
	for i := range cmds {
		cmds[i] = func() tea.Msg {
			r := running.Add(1)
			for {
				p := peak.Load()
				if r <= p || peak.CompareAndSwap(p, r) {
					break
				}
			}
			<-release
			running.Add(-1)
			return inc{1}
		}
	}
	if err := d.Call(t.Context(), agent, withCmd{tea.Batch(cmds...)}); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 10*time.Second, func() bool { return running.Load() == 2 }, "two commands running")
	// The loop is not blocked by waiting commands.
	if err := d.Call(t.Context(), agent, inc{100}); err != nil {
		t.Fatal(err)
	}
	close(release)
	testkit.Eventually(t, 10*time.Second, func() bool { return model(d).n == 106 }, "all commands")
	if p := peak.Load(); p != 2 {
		t.Fatalf("peak concurrency = %d, want 2", p)
	}
}

func TestQuitIsIgnored(t *testing.T) {
	d := newD(t, nil)
	if err := d.Call(t.Context(), agent, withCmd{tea.Quit}, tea.QuitMsg{}, nil, inc{1}); err != nil {
		t.Fatal(err)
	}
	if err := d.Call(t.Context(), agent, inc{1}); err != nil {
		t.Fatal(err)
	}
	if n := model(d).n; n != 2 {
		t.Fatalf("n = %d, want 2", n)
	}
}

func TestCommandPanicIsContained(t *testing.T) {
	d := newD(t, nil)
	if err := d.Call(t.Context(), agent, withCmd{func() tea.Msg { panic("cmd") }}); err != nil {
		t.Fatal(err)
	}
	if err := d.Call(t.Context(), agent, withCmd{func() tea.Msg { return inc{1} }}); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 10*time.Second, func() bool { return model(d).n == 1 }, "second command")
}

func TestSlowSubscriberDoesNotBlock(t *testing.T) {
	d := newD(t, nil)
	idle := d.Subscribe() // never read
	defer idle.Close()
	reader := d.Subscribe()
	defer reader.Close()

	const folds = 10000
	const last = 1 + folds
	readerDone := make(chan uint64)
	go func() {
		var v uint64
		for v < last {
			select {
			case <-reader.C():
				v = reader.Latest().Version
			case <-time.After(20 * time.Second):
				readerDone <- v
				return
			}
		}
		readerDone <- v
	}()

	start := time.Now()
	for range folds {
		if err := d.Call(t.Context(), agent, inc{1}); err != nil {
			t.Fatal(err)
		}
	}
	if el := time.Since(start); el > 20*time.Second {
		t.Fatalf("%d Calls took %v", folds, el)
	}
	if v := <-readerDone; v != last {
		t.Fatalf("reader's last version = %d, want %d", v, last)
	}
	if n := model(d).n; n != folds {
		t.Fatalf("n = %d", n)
	}
}

func TestSubscriptionCoalescesAndCloses(t *testing.T) {
	d := newD(t, nil)
	s := d.Subscribe()
	for range 5 {
		if err := d.Call(t.Context(), agent, inc{1}); err != nil {
			t.Fatal(err)
		}
	}
	<-s.C()
	select {
	case <-s.C():
		t.Fatal("signals did not coalesce")
	default:
	}
	if v := s.Latest().Version; v != 6 {
		t.Fatalf("Latest().Version = %d, want 6", v)
	}
	s.Close()
	s.Close()
	if err := d.Call(t.Context(), agent, inc{1}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.C():
		t.Fatal("signalled after Close")
	default:
	}
}

func TestQueueFull(t *testing.T) {
	d := newD(t, &Options{QueueSize: 2})
	b := block{started: make(chan struct{}), release: make(chan struct{})}
	if err := d.Send(agent, b); err != nil {
		t.Fatal(err)
	}
	<-b.started // the loop is busy; the queue is empty
	for range 2 {
		if err := d.Send(agent, inc{1}); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	if err := d.Send(agent, inc{1}); !errors.Is(err, ErrQueueFull) {
		t.Fatalf("err = %v, want ErrQueueFull", err)
	}
	if err := d.SendFunc(agent, func(ui.Node) ([]tea.Msg, error) { return nil, nil }); !errors.Is(err, ErrQueueFull) {
		t.Fatalf("SendFunc err = %v, want ErrQueueFull", err)
	}
	if el := time.Since(start); el > time.Second {
		t.Fatalf("Send on a full queue took %v", el)
	}
	close(b.release)
	if err := d.Call(t.Context(), agent); err != nil {
		t.Fatal(err)
	}
	if n := model(d).n; n != 3 {
		t.Fatalf("n = %d, want 3", n)
	}
}

func TestClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := New(counter{}, nil)
		b := block{started: make(chan struct{}), release: make(chan struct{})}
		if err := d.Send(agent, b); err != nil {
			t.Fatal(err)
		}
		<-b.started
		// A Call queued behind the blocked Update gets ErrClosed.
		pending := make(chan error)
		go func() { pending <- d.Call(context.Background(), agent, inc{1}) }()
		testkit.Eventually(t, 10*time.Second, func() bool { return len(d.queue) == 1 }, "queued call")
		closed := make(chan struct{})
		go func() { d.Close(); close(closed) }()
		synctest.Wait() // Close is waiting for the blocked Update
		select {
		case <-closed:
			t.Fatal("Close returned while an Update was still running")
		default:
		}
		close(b.release)
		<-closed
		if err := <-pending; !errors.Is(err, ErrClosed) {
			t.Fatalf("pending Call err = %v, want ErrClosed", err)
		}
		d.Close() // idempotent
		select {
		case <-d.Done():
		default:
			t.Fatal("Done not closed")
		}
		nop := func(ui.Node) ([]tea.Msg, error) { return nil, nil }
		for name, err := range map[string]error{
			"Send":     d.Send(agent, inc{1}),
			"SendFunc": d.SendFunc(agent, nop),
			"Call":     d.Call(t.Context(), agent, inc{1}),
			"CallFunc": d.CallFunc(t.Context(), agent, nop),
		} {
			if !errors.Is(err, ErrClosed) {
				t.Errorf("%s after Close: %v, want ErrClosed", name, err)
			}
		}
		// Snapshot still works after Close.
		if n := model(d).n; n != 1 {
			t.Fatalf("n = %d, want 1", n)
		}
		// No goroutine is left: checked by goleak in TestMain.
	})
}

func TestCloseWithStuckCommand(t *testing.T) {
	release := make(chan struct{})
	d := New(counter{}, nil)
	if err := d.Call(t.Context(), agent, withCmd{func() tea.Msg { <-release; return inc{1} }}); err != nil {
		t.Fatal(err)
	}
	d.Close()
	close(release) // the command returns; its result is dropped
	if n := model(d).n; n != 0 {
		t.Fatalf("n = %d, want 0", n)
	}
}

var errNoWidget = errors.New("no such widget")

func TestResolver(t *testing.T) {
	d := newD(t, nil)
	if err := d.Call(t.Context(), agent, inc{3}); err != nil {
		t.Fatal(err)
	}
	var sawTree string
	err := d.CallFunc(t.Context(), agent, func(tree ui.Node) ([]tea.Msg, error) {
		sawTree = tree.(ui.Text).Text
		return []tea.Msg{inc{1}, inc{1}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if sawTree != "3" {
		t.Fatalf("resolver saw tree %q, want %q", sawTree, "3")
	}
	if n := model(d).n; n != 5 {
		t.Fatalf("n = %d, want 5", n)
	}

	v := d.Snapshot().Version
	err = d.CallFunc(t.Context(), agent, func(ui.Node) ([]tea.Msg, error) {
		return []tea.Msg{inc{100}}, errNoWidget
	})
	if err != errNoWidget {
		t.Fatalf("err = %v, want the resolver's error as-is", err)
	}
	if s := d.Snapshot(); s.Version != v || s.Model.(counter).n != 5 {
		t.Fatalf("resolver error folded something: %+v", s)
	}

	err = d.CallFunc(t.Context(), agent, func(ui.Node) ([]tea.Msg, error) { panic("resolver") })
	if !errors.Is(err, ErrUpdateFailed) {
		t.Fatalf("err = %v, want ErrUpdateFailed", err)
	}

	if err := d.SendFunc(agent, func(ui.Node) ([]tea.Msg, error) { return []tea.Msg{inc{1}}, nil }); err != nil {
		t.Fatal(err)
	}
	if err := d.Call(t.Context(), agent); err != nil {
		t.Fatal(err)
	}
	if n := model(d).n; n != 6 {
		t.Fatalf("n = %d, want 6", n)
	}
}

func TestHooksOnFold(t *testing.T) {
	var folds atomic.Int32
	d := newD(t, &Options{Hooks: Hooks{OnFold: func(d time.Duration) {
		if d < 0 {
			panic("negative duration")
		}
		folds.Add(1)
	}}})
	for range 3 {
		if err := d.Call(t.Context(), agent, inc{1}); err != nil {
			t.Fatal(err)
		}
	}
	_ = d.Call(t.Context(), agent, boom{})
	if f := folds.Load(); f != 3 {
		t.Fatalf("OnFold called %d times, want 3", f)
	}
}

func TestNewNilModelPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("New(nil) did not panic")
		}
	}()
	New(nil, nil)
}

func TestCmdList(t *testing.T) {
	a := func() tea.Msg { return nil }
	if _, seq, ok := cmdList(tea.BatchMsg{a, a}); !ok || seq {
		t.Fatal("BatchMsg not a concurrent list")
	}
	if cmds, seq, ok := cmdList(tea.Sequence(a, a)()); !ok || !seq || len(cmds) != 2 {
		t.Fatal("tea.Sequence result not a sequential list")
	}
	for _, m := range []tea.Msg{nil, inc{1}, []int{1}, []tea.Msg{nil}} {
		if _, _, ok := cmdList(m); ok {
			t.Fatalf("%T taken for a command list", m)
		}
	}
}

func BenchmarkCall(b *testing.B) {
	d := New(counter{}, nil)
	defer d.Close()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := d.Call(ctx, agent, inc{1}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSendFold(b *testing.B) {
	d := New(counter{}, nil)
	defer d.Close()
	b.ReportAllocs()
	for b.Loop() {
		for d.Send(agent, inc{1}) != nil {
			// Queue full: let the loop catch up.
			time.Sleep(time.Microsecond)
		}
	}
	if err := d.Call(context.Background(), agent); err != nil {
		b.Fatal(err)
	}
}

// badInit panics in Init; its View panics until n > 0.
type badInit struct{ counter }

func (badInit) Init() tea.Cmd { panic("init") }

func (b badInit) Update(msg tea.Msg) (ui.Model, tea.Cmd) {
	m, cmd := b.counter.Update(msg)
	return badInit{m.(counter)}, cmd
}

func (b badInit) View() ui.Node {
	if b.n == 0 {
		panic("view")
	}
	return b.counter.View()
}

func TestInitAndFirstViewPanic(t *testing.T) {
	var updateFailed, viewFailed atomic.Int32
	d := New(badInit{}, &Options{Hooks: Hooks{
		OnUpdateFailed: func() { updateFailed.Add(1) },
		OnViewFailed:   func() { viewFailed.Add(1) },
	}})
	defer d.Close()
	if s := d.Snapshot(); s.Version != 1 || s.Tree != nil {
		t.Fatalf("first snapshot = %+v, want version 1 with no tree", s)
	}
	if updateFailed.Load() != 1 || viewFailed.Load() != 1 {
		t.Fatalf("hooks: update failed %d, view failed %d; want 1, 1", updateFailed.Load(), viewFailed.Load())
	}
	if err := d.Call(t.Context(), agent, inc{1}); err != nil {
		t.Fatal(err)
	}
	if got := treeText(d.Snapshot()); got != "1" {
		t.Fatalf("tree = %q, want %q", got, "1")
	}
}

func TestOnAppliedSeesOriginAndMessages(t *testing.T) {
	type seen struct {
		o    Origin
		msgs []tea.Msg
	}
	ch := make(chan seen, 4)
	d := New(counter{}, &Options{Hooks: Hooks{OnApplied: func(o Origin, msgs []tea.Msg) { ch <- seen{o, msgs} }}})
	defer d.Close()
	o := Origin{Kind: OriginHuman, Name: "t"}
	if err := d.Call(context.Background(), o, inc{2}, nil, inc{3}); err != nil {
		t.Fatal(err)
	}
	got := <-ch
	if got.o != o || len(got.msgs) != 2 {
		t.Fatalf("OnApplied(%v, %v)", got.o, got.msgs)
	}
	// A rolled-back envelope reports nothing.
	_ = d.Call(context.Background(), o, inc{1}, boom{})
	select {
	case s := <-ch:
		t.Fatalf("rolled-back envelope reported %v", s)
	default:
	}
}

// BenchmarkPacedCall is one Call at a time, every 5 ms (the loop lingering
// between them, as for an agent at a modest rate): the latency of the hop
// to the loop and back, p50 and p99 in microseconds.
//
//	go test ./dispatcher -run '^$' -bench PacedCall -benchtime 400x
func BenchmarkPacedCall(b *testing.B) {
	b.Run("alone", func(b *testing.B) { pacedCalls(b, 0) })
	b.Run("watched", func(b *testing.B) { pacedCalls(b, 1) })
}

// pacedCalls is BenchmarkPacedCall with that many goroutines waiting
// for snapshots (as a session's MCP watcher and terminals do).
func pacedCalls(b *testing.B, subscribers int) {
	d := New(counter{}, nil)
	defer d.Close()
	for range subscribers {
		s := d.Subscribe()
		defer s.Close()
		go func() {
			for {
				select {
				case <-s.C():
				case <-s.Done():
					return
				}
			}
		}()
	}
	ctx := context.Background()
	lat := make([]time.Duration, 0, b.N)
	for b.Loop() {
		time.Sleep(5 * time.Millisecond)
		t0 := time.Now()
		if err := d.Call(ctx, agent, inc{1}); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds())/1e3, "p50-us")
	b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds())/1e3, "p99-us")
}
