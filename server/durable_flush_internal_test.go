package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"sync"
	"testing"

	"github.com/raxol-ssh/raxol-ssh/demo"
	"github.com/raxol-ssh/raxol-ssh/dispatcher"
	"github.com/raxol-ssh/raxol-ssh/server/internal/saver"
	"github.com/raxol-ssh/raxol-ssh/session"
	"github.com/raxol-ssh/raxol-ssh/store"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// stallingCodec is the demo's JSON codec whose Encode of any model that
// does not carry mark stalls, once armed, after a model carrying mark was
// encoded: a flush then holds a finished record of the marked session
// while it waits, which is the moment a rotation or an end can come in
// between.
type stallingCodec struct {
	mark []byte

	mu      sync.Mutex
	armed   bool
	seen    bool          // the marked model was encoded since arming
	stalled chan struct{} // receives once when an Encode stalls
	release chan struct{}
}

func (c *stallingCodec) codec() *SnapshotCodec {
	inner := JSONCodec[demo.Model](1)
	return &SnapshotCodec{Version: 1, Decode: inner.Decode, Encode: func(m ui.Model) ([]byte, error) {
		data, err := inner.Encode(m)
		c.mu.Lock()
		marked := bytes.Contains(data, c.mark)
		stall := c.armed && c.seen && !marked
		if c.armed && marked {
			c.seen = true
		}
		if stall {
			c.armed = false
		}
		release := c.release
		c.mu.Unlock()
		if stall {
			c.stalled <- struct{}{}
			<-release
		}
		return data, err
	}}
}

// arm makes the next flush stall if it encodes the marked session first.
func (c *stallingCodec) arm() {
	c.mu.Lock()
	c.armed, c.seen = true, false
	c.stalled, c.release = make(chan struct{}, 1), make(chan struct{})
	c.mu.Unlock()
}

func (c *stallingCodec) disarm() {
	c.mu.Lock()
	c.armed = false
	c.mu.Unlock()
}

// stalledFlush runs flushes of p until one stalls after encoding the
// marked session a (map order decides which session a flush encodes
// first), then calls between, lets the flush finish and waits for it.
func stalledFlush(t *testing.T, p *saver.Saver, c *stallingCodec, change func(), between func()) {
	t.Helper()
	for try := range 200 {
		change()
		c.arm()
		done := make(chan struct{})
		go func() { defer close(done); p.Flush(context.Background()) }()
		select {
		case <-c.stalled:
			between()
			close(c.release)
			<-done
			return
		case <-done:
			c.disarm()
			_ = try
		}
	}
	t.Fatal("no flush encoded the marked session before another in 200 tries")
}

func durableFlushServer(t *testing.T, c *stallingCodec) (*Server, *saver.Saver) {
	t.Helper()
	srv, p := startSnapshotted(t, c.codec(), Limits{})
	p.Stop() // the flushes are the test's
	return srv, p
}

func startTracked(t *testing.T, srv *Server, p *saver.Saver, text string) *session.Session {
	t.Helper()
	se, _, err := srv.StartHeadless(session.Owner{User: "durable", KeyFingerprint: "SHA256:durable"})
	if err != nil {
		t.Fatal(err)
	}
	p.Track(se, false, "durable")
	typeInto(t, se, text)
	return se
}

func typeInto(t *testing.T, se *session.Session, text string) {
	t.Helper()
	if err := se.Dispatcher.Call(context.Background(), dispatcher.Origin{Kind: dispatcher.OriginAgent, Name: "t"},
		ui.TextInputChanged{ID: demo.IDSearch, Text: text}); err != nil {
		t.Fatal(err)
	}
}

// storedToken is the token hash of id's record in p's store, "" when none.
func storedToken(t *testing.T, p *saver.Saver, id string) string {
	t.Helper()
	data, err := p.Store().Get(context.Background(), id)
	if errors.Is(err, store.ErrNotFound) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	r, err := saver.DecodeRecord(data)
	if err != nil {
		t.Fatal(err)
	}
	return r.TokenSHA256
}

func hashOf(tok string) string {
	h := sha256.Sum256([]byte(tok))
	return hex.EncodeToString(h[:])
}

// TestDurableFlushNeverUndoesARotation: a flush has encoded a session's
// record with its old token and waits (here: on another session's
// encode) when the token is rotated. The rotation's own save lands, and
// the flush's record, older, must not overwrite it: after the flush the
// store still names the new token, and a restart would let only it in.
func TestDurableFlushNeverUndoesARotation(t *testing.T) {
	t.Parallel()
	c := &stallingCodec{mark: []byte("MARKED-SESSION")}
	srv, p := durableFlushServer(t, c)
	a := startTracked(t, srv, p, "MARKED-SESSION")
	b := startTracked(t, srv, p, "other")
	n := 0
	var fresh string
	stalledFlush(t, p, c, func() {
		n++
		typeInto(t, a, "MARKED-SESSION "+string(rune('a'+n%26)))
		typeInto(t, b, "other "+string(rune('a'+n%26)))
	}, func() {
		var err error
		if fresh, err = a.RotateToken(); err != nil {
			t.Errorf("rotate: %v", err)
		}
		if got := storedToken(t, p, a.ID); got != hashOf(fresh) {
			t.Errorf("RotateToken returned and the store holds %q, not the new token's hash", got)
		}
	})
	if got := storedToken(t, p, a.ID); got != hashOf(fresh) {
		t.Fatalf("after the flush the store holds %q, not the rotated token's hash %q: the old token would come back", got, hashOf(fresh))
	}
	// The next flush saves the marked session's model change under the
	// new token: it is not left unsaved either.
	p.Flush(context.Background())
	data, err := p.Store().Get(context.Background(), a.ID)
	if err != nil {
		t.Fatal(err)
	}
	var r saver.Record
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	if r.TokenSHA256 != hashOf(fresh) || !bytes.Contains(r.Model, []byte("MARKED-SESSION "+string(rune('a'+n%26)))) {
		t.Fatalf("after the next flush the record holds token %q and model %s", r.TokenSHA256, r.Model)
	}
}

// TestDurableFlushNeverResurrectsAnEndedSession: a flush has encoded a
// session's record and waits when the session ends: the end's delete
// lands and the flush must not write the record back.
func TestDurableFlushNeverResurrectsAnEndedSession(t *testing.T) {
	t.Parallel()
	c := &stallingCodec{mark: []byte("MARKED-SESSION")}
	srv, p := durableFlushServer(t, c)
	a := startTracked(t, srv, p, "MARKED-SESSION")
	b := startTracked(t, srv, p, "other")
	n := 0
	stalledFlush(t, p, c, func() {
		n++
		typeInto(t, a, "MARKED-SESSION "+string(rune('a'+n%26)))
		typeInto(t, b, "other "+string(rune('a'+n%26)))
	}, func() {
		srv.sessions.End(a.ID)
		if got := storedToken(t, p, a.ID); got != "" {
			t.Errorf("the session ended and the store still holds it (token %s)", got)
		}
	})
	if got := storedToken(t, p, a.ID); got != "" {
		t.Fatalf("after the flush the ended session is back in the store (token %s)", got)
	}
	if got := storedToken(t, p, b.ID); got != hashOf(b.Token()) {
		t.Fatalf("the other session's record holds %q", got)
	}
}

// TestDurableFlushNeverUndoesAPause: as for a rotation, a flush holding a
// record encoded before the human paused the agents must not write it
// over the pause's own save.
func TestDurableFlushNeverUndoesAPause(t *testing.T) {
	t.Parallel()
	c := &stallingCodec{mark: []byte("MARKED-SESSION")}
	srv, p := durableFlushServer(t, c)
	a := startTracked(t, srv, p, "MARKED-SESSION")
	b := startTracked(t, srv, p, "other")
	n := 0
	paused := func() bool {
		data, err := p.Store().Get(context.Background(), a.ID)
		if err != nil {
			t.Fatal(err)
		}
		r, err := saver.DecodeRecord(data)
		if err != nil {
			t.Fatal(err)
		}
		return r.Control.Paused
	}
	stalledFlush(t, p, c, func() {
		n++
		typeInto(t, a, "MARKED-SESSION "+string(rune('a'+n%26)))
		typeInto(t, b, "other "+string(rune('a'+n%26)))
	}, func() {
		if err := a.SetControl(session.Control{Paused: true}); err != nil {
			t.Errorf("pause: %v", err)
		}
		if !paused() {
			t.Error("SetControl returned and the store's record is not paused")
		}
	})
	if !paused() {
		t.Fatal("after the flush the store's record is not paused: a restart would let the agents act")
	}
}

// BenchmarkDurableSave is what a save at once costs (a session's start, a
// rotation, a pause): encoding the demo's record and one fsynced bbolt
// commit.
//
//	go test ./server -run '^$' -bench DurableSave -benchtime 200x
func BenchmarkDurableSave(b *testing.B) {
	srv, p := startSnapshotted(b, JSONCodec[demo.Model](1), Limits{})
	se, _, err := srv.StartHeadless(session.Owner{User: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	p.Track(se, false, "bench")
	b.ResetTimer()
	for range b.N {
		if err := p.Save(se); err != nil {
			b.Fatal(err)
		}
	}
}
