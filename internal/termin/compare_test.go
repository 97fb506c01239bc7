package termin

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"testing"

	uv "github.com/charmbracelet/ultraviolet"
)

// reference decodes seq with ultraviolet's own terminal reader, keeping
// what the Decoder would pass on.
func reference(t testing.TB, seq []byte, term string) []uv.Event {
	t.Helper()
	r := uv.NewTerminalReader(bytes.NewReader(seq), term)
	evc := make(chan uv.Event, 256)
	if err := r.StreamEvents(context.Background(), evc); err != nil {
		t.Fatalf("reference reader: %v", err)
	}
	close(evc)
	var out []uv.Event
	for ev := range evc {
		d := &Decoder{}
		d.send = func(e uv.Event) { out = append(out, e) }
		d.deliver(ev)
	}
	return out
}

func decodeAll(seq []byte) []uv.Event {
	var out []uv.Event
	d := New(func(e uv.Event) { out = append(out, e) })
	d.Write(seq)
	d.expire()
	d.Close()
	return out
}

func corpus() [][]byte {
	var c [][]byte
	for b := 0; b < 0x80; b++ {
		c = append(c, []byte{byte(b)}, []byte{0x1b, byte(b)})
	}
	// The parameters of the keys terminals send: VT220 and xterm
	// function keys, modifiers (xterm's 1;2..1;8), rxvt's and the linux
	// console's own forms, paste brackets.
	params := []string{"", "1", "2", "3", "5", "6", "7", "8", "11", "15", "17", "21", "24", "25", "34", "200", "201", "[", "1;2", "1;3", "1;5", "1;8", "3;5", "5;5", "2;2"}
	for _, intro := range []string{"\x1b[", "\x1bO", "\x1b[["} {
		for _, p := range params {
			for f := 0x40; f <= 0x7e; f++ {
				c = append(c, []byte(intro+p+string(rune(f))))
			}
			for _, f := range []string{"$", "^", "@"} {
				c = append(c, []byte(intro+p+f))
			}
		}
	}
	return c
}

// TestSameEventsAsUltravioletReader decodes every sequence of the corpus
// with the Decoder and with the reader Bubble Tea would use, and wants
// the same events from both. The one known difference: the reader takes
// "CSI _" for a Windows console (win32-input-mode) key release, which an
// SSH client never sends.
func TestSameEventsAsUltravioletReader(t *testing.T) {
	known := map[string]bool{"\x1b[_": true}
	for _, term := range []string{"xterm-256color", "linux"} {
		for _, seq := range append(corpus(), pastes()...) {
			want := reference(t, seq, term)
			got := decodeAll(seq)
			if reflect.DeepEqual(got, want) || known[string(seq)] {
				continue
			}
			t.Errorf("TERM=%s %q: got %s, ultraviolet's reader %s", term, seq, show(got), show(want))
		}
	}
}

func pastes() [][]byte {
	return [][]byte{
		[]byte("\x1b[200~hello\x1b[201~"),
		[]byte("\x1b[200~two\r\nlines\ttab\x1b[201~"),
		[]byte("\x1b[200~esc \x1b[A inside\x1b[201~"),
		[]byte("a\x1b[200~\xff\xfebad utf8 é\x1b[201~b"),
		[]byte("\x1b[200~\x1b[201~"),
	}
}

func show(evs []uv.Event) string {
	var b bytes.Buffer
	for _, e := range evs {
		fmt.Fprintf(&b, "%T%v ", e, e)
	}
	return b.String()
}
