package saver

import (
	"context"

	"github.com/raxol-ssh/raxol-ssh/session"
)

// IsStored reports whether a record of session id is in the store: a
// draining cluster node leaves such sessions for its peers to adopt.
func (p *Saver) IsStored(id string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	t, ok := p.tracked[id]
	return ok && t.stored
}

// Abandon stops saving se without deleting its record: another node
// claimed the session, and the record is the winner's now. Called before
// se is ended (Ended then finds nothing to delete); a write already under
// way finishes first (p.writing).
func (p *Saver) Abandon(se *session.Session) {
	if p == nil {
		return
	}
	p.writing.Lock()
	p.mu.Lock()
	if t, ok := p.tracked[se.ID]; ok && t.se == se {
		delete(p.tracked, se.ID)
	}
	delete(p.deletes, se.ID)
	p.mu.Unlock()
	p.forget(se.ID)
	p.writing.Unlock()
	se.SetSaver(nil)
	// A change still folded into this copy is not the session's: it
	// is answered as not saved.
	se.SetCommitter(func(context.Context, uint64) error { return ErrAbandoned })
}

// Halt is what a crash leaves: the saver stops, saving nothing more, and
// the sessions that end from now on keep their records. For tests of a
// node's death (the server's KillCluster).
func (p *Saver) Halt() {
	if p == nil {
		return
	}
	p.Stop()
	p.mu.Lock()
	p.draining = true
	p.mu.Unlock()
}

// SavedVersion is the dispatcher version of session id's model that the
// store holds, and whether it holds any.
func (p *Saver) SavedVersion(id string) (uint64, bool) {
	if p == nil {
		return 0, false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	t, ok := p.tracked[id]
	if !ok || !t.stored {
		return 0, false
	}
	return t.version, true
}
