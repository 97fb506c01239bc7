package termin

import (
	"reflect"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	uv "github.com/charmbracelet/ultraviolet"
	"go.uber.org/goleak"
	"pgregory.net/rapid"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// collector gathers what a Decoder sends, safe for the escape timer's
// goroutine.
type collector struct {
	mu  sync.Mutex
	evs []uv.Event
}

func (c *collector) send(e uv.Event) {
	c.mu.Lock()
	c.evs = append(c.evs, e)
	c.mu.Unlock()
}

func (c *collector) events() []uv.Event {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]uv.Event(nil), c.evs...)
}

// TestChunkingDoesNotChangeEvents: however the input is cut into reads,
// the events are those of the whole input at once. The pieces are escape
// sequences, text and pastes; not lone control bytes and ESC-prefixed
// bytes, whose runs ("ESC ESC ESC NUL") are ambiguous however they are
// read: a terminal sends those one key press, one read, at a time.
func TestChunkingDoesNotChangeEvents(t *testing.T) {
	pieces := append(corpus()[256:856], pastes()...)
	pieces = append(pieces, []byte("héllo wörld 日本"), []byte("\x1b[<0;10;5M"), []byte("\x1b[I"), []byte("\x1b[O"))
	rapid.Check(t, func(t *rapid.T) {
		var in []byte
		for _, i := range rapid.SliceOfN(rapid.IntRange(0, len(pieces)-1), 1, 12).Draw(t, "pieces") {
			in = append(in, pieces[i]...)
		}
		want := decodeAll(in)
		var c collector
		d := New(c.send)
		d.timeout = time.Hour // only an explicit expire ends a sequence here
		for rest := in; len(rest) > 0; {
			n := rapid.IntRange(1, len(rest)).Draw(t, "read")
			d.Write(rest[:n])
			rest = rest[n:]
		}
		d.expire()
		d.Close()
		if got := c.events(); !reflect.DeepEqual(got, want) {
			t.Fatalf("%q in reads: %s; at once: %s", in, show(got), show(want))
		}
	})
}

// TestLoneEscapeIsTheEscapeKeyAfterTheTimeout runs on a synctest
// bubble's clock, like the two other tests of the escape timer below: the
// waits for it cost no wall-clock time.
func TestLoneEscapeIsTheEscapeKeyAfterTheTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var c collector
		d := New(c.send)
		defer d.Close()
		d.Write([]byte("\x1b"))
		if evs := c.events(); len(evs) != 0 {
			t.Fatalf("ESC decoded before the timeout: %s", show(evs))
		}
		deadline := time.Now().Add(2 * time.Second)
		for len(c.events()) == 0 && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		want := []uv.Event{uv.KeyPressEvent{Code: uv.KeyEscape}}
		if got := c.events(); !reflect.DeepEqual(got, want) {
			t.Fatalf("after the timeout: %s, want the Escape key", show(got))
		}
	})
}

func TestSequenceSplitAcrossReadsIsOneKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var c collector
		d := New(c.send)
		defer d.Close()
		d.Write([]byte("\x1b"))
		d.Write([]byte("[A"))
		want := []uv.Event{uv.KeyPressEvent{Code: uv.KeyUp}}
		if got := c.events(); !reflect.DeepEqual(got, want) {
			t.Fatalf("ESC then [A: %s, want Up", show(got))
		}
		time.Sleep(3 * EscTimeout) // the bubble's clock: the timer would have fired
		synctest.Wait()
		if got := c.events(); len(got) != 1 {
			t.Fatalf("the timeout sent more: %s", show(got))
		}
	})
}

func TestRepliesAndUnknownSequencesAreNotInput(t *testing.T) {
	in := "\x1b]11;rgb:0000/0000/0000\x07" + // background colour reply
		"\x1b[?62;22c" + // primary device attributes
		"\x1b[12;40R" + // cursor position report
		"\x1b[?2004;1$y" + // mode report
		"\x1bP>|xterm(390)\x1b\\" + // version
		"x"
	got := decodeAll([]byte(in))
	want := []uv.Event{uv.KeyPressEvent{Code: 'x', Text: "x"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %s, want only the x key", show(got))
	}
}

func TestPasteIsBounded(t *testing.T) {
	var c collector
	d := New(c.send)
	defer d.Close()
	d.Write([]byte("\x1b[200~"))
	chunk := []byte(strings.Repeat("a", 64<<10))
	for range 3 * MaxPaste / len(chunk) {
		d.Write(chunk)
	}
	d.mu.Lock()
	held := cap(d.paste)
	d.mu.Unlock()
	if held > 2*MaxPaste {
		t.Fatalf("a paste of %d bytes holds %d", 3*MaxPaste, held)
	}
	d.Write([]byte("\x1b[201~"))
	var paste string
	for _, e := range c.events() {
		if p, ok := e.(uv.PasteEvent); ok {
			paste = p.Content
		}
	}
	if len(paste) != MaxPaste {
		t.Fatalf("paste of %d bytes, want it cut at %d", len(paste), MaxPaste)
	}
}

func TestUnfinishedSequenceIsBounded(t *testing.T) {
	var c collector
	d := New(c.send)
	defer d.Close()
	d.timeout = time.Hour
	d.Write([]byte("\x1b]0;")) // an OSC that never ends
	chunk := []byte(strings.Repeat("z", 4<<10))
	for range 4 * MaxPending / len(chunk) {
		d.Write(chunk)
		d.mu.Lock()
		n := len(d.pending)
		d.mu.Unlock()
		if n > MaxPending+len(chunk) {
			t.Fatalf("%d bytes of one unfinished sequence held", n)
		}
	}
	d.Write([]byte("q"))
	d.expire()
	evs := c.events()
	if len(evs) == 0 || !reflect.DeepEqual(evs[len(evs)-1], uv.Event(uv.KeyPressEvent{Code: 'q', Text: "q"})) {
		t.Fatalf("input after the flood is lost: %s", show(evs))
	}
}

func TestWriteAfterCloseSendsNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var c collector
		d := New(c.send)
		d.Write([]byte("\x1b"))
		d.Close()
		d.Write([]byte("abc"))
		time.Sleep(3 * EscTimeout) // the bubble's clock: the timer would have fired
		synctest.Wait()
		if got := c.events(); len(got) != 0 {
			t.Fatalf("sent after Close: %s", show(got))
		}
	})
}
