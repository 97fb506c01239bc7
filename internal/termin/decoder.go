package termin

import (
	"sync"
	"time"
	"unicode/utf8"

	uv "github.com/charmbracelet/ultraviolet"
	"github.com/charmbracelet/x/ansi"
)

const (
	// EscTimeout is how long an unfinished sequence waits for the rest of
	// it before it is taken for what it is so far (a lone ESC is then the
	// Escape key): ultraviolet's default.
	EscTimeout = uv.DefaultEscTimeout
	// MaxPaste bounds one bracketed paste; what comes after is dropped.
	MaxPaste = 1 << 20
	// MaxPending bounds the bytes of an unfinished sequence; once over,
	// they are decoded at once as if the escape timeout had passed.
	MaxPending = 64 << 10
)

// Decoder decodes one terminal's input. Its methods are safe to call
// from several goroutines; events are sent in input order, one at a time.
type Decoder struct {
	send    func(uv.Event)
	timeout time.Duration

	mu      sync.Mutex
	dec     uv.EventDecoder
	pending []byte
	paste   []byte // non-nil inside a bracketed paste
	timer   *time.Timer
	closed  bool
}

// New returns a Decoder that sends each event it decodes to send.
// send may block: input waits behind it.
func New(send func(uv.Event)) *Decoder {
	return &Decoder{send: send, timeout: EscTimeout}
}

// Write decodes p. Bytes that may start an unfinished sequence wait for
// the next Write or for the escape timeout.
func (d *Decoder) Write(p []byte) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return
	}
	if d.timer != nil {
		d.timer.Stop()
	}
	d.pending = append(d.pending, p...)
	d.scan(len(d.pending) > MaxPending)
	if len(d.pending) == 0 {
		// Let a large read's buffer go rather than keep it for ever.
		if cap(d.pending) > 4<<10 {
			d.pending = nil
		}
		return
	}
	if d.timer == nil {
		d.timer = time.AfterFunc(d.timeout, d.expire)
	} else {
		d.timer.Reset(d.timeout)
	}
}

// Close stops the escape timer and drops what is pending; later Writes
// do nothing.
func (d *Decoder) Close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = true
	if d.timer != nil {
		d.timer.Stop()
	}
	d.pending, d.paste = nil, nil
}

// expire decodes what is pending as complete: nothing more came within
// the escape timeout.
func (d *Decoder) expire() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed || len(d.pending) == 0 {
		return
	}
	d.scan(true)
}

// scan decodes d.pending, sends what it finds and keeps what may be the
// start of an unfinished sequence. expired says that nothing more is
// coming for now, so nothing is kept back.
func (d *Decoder) scan(expired bool) {
	buf := d.pending
	done := 0
	for len(buf) > 0 {
		esc := buf[0] == ansi.ESC
		n, ev := d.dec.Decode(buf)
		if n <= 0 {
			break
		}
		if d.paste != nil {
			if _, end := ev.(uv.PasteEndEvent); !end {
				switch ev := ev.(type) {
				case uv.KeyPressEvent:
					if len(ev.Text) > 0 {
						d.addPaste([]byte(ev.Text))
						break
					}
					if esc && n <= 2 && !expired {
						d.keep(done)
						return
					}
					d.addPaste(buf[:n])
				case uv.UnknownEvent:
					if !expired {
						d.keep(done)
						return
					}
				}
				buf, done = buf[n:], done+n
				continue
			}
		}
		switch ev.(type) {
		case uv.UnknownEvent:
			if !expired {
				d.keep(done)
				return
			}
			// Not input we know: dropped.
			buf, done = buf[n:], done+n
			continue
		case uv.UnknownCsiEvent:
			// "CSI M" is an X10 mouse report only with its three bytes
			// after it: until they come (or the timeout), wait for them,
			// or a report cut across reads would be taken for keys.
			if !expired && buf[n-1] == 'M' && len(buf) < n+3 {
				d.keep(done)
				return
			}
		case uv.PasteStartEvent:
			d.paste = []byte{}
		case uv.PasteEndEvent:
			text := validRunes(d.paste)
			d.paste = nil
			d.deliver(uv.PasteEvent{Content: text})
		}
		if esc && n <= 2 && !expired {
			d.keep(done)
			return
		}
		d.deliver(ev)
		buf, done = buf[n:], done+n
	}
	d.keep(done)
}

// keep drops the first n pending bytes, which were decoded.
func (d *Decoder) keep(n int) {
	rest := copy(d.pending, d.pending[n:])
	d.pending = d.pending[:rest]
}

// deliver sends ev (each part of a MultiEvent) if it is input.
func (d *Decoder) deliver(ev uv.Event) {
	if m, ok := ev.(uv.MultiEvent); ok {
		for _, e := range m {
			d.deliver(e)
		}
		return
	}
	if isInput(ev) {
		d.send(ev)
	}
}

func (d *Decoder) addPaste(b []byte) {
	if room := MaxPaste - len(d.paste); room > 0 {
		d.paste = append(d.paste, b[:min(len(b), room)]...)
	}
}

// isInput says whether ev is something a user did: a key, the mouse,
// focus or a paste. Replies to terminal queries and sequences the parser
// skips are not.
func isInput(ev uv.Event) bool {
	switch ev.(type) {
	case uv.KeyPressEvent, uv.KeyReleaseEvent,
		uv.MouseClickEvent, uv.MouseReleaseEvent, uv.MouseMotionEvent, uv.MouseWheelEvent,
		uv.PasteStartEvent, uv.PasteEndEvent, uv.PasteEvent,
		uv.FocusEvent, uv.BlurEvent:
		return true
	}
	return false
}

// validRunes is b as text without its invalid UTF-8, as ultraviolet's
// reader makes a paste.
func validRunes(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	out := make([]rune, 0, len(b))
	for len(b) > 0 {
		r, w := utf8.DecodeRune(b)
		if r != utf8.RuneError {
			out = append(out, r)
		}
		b = b[w:]
	}
	return string(out)
}
