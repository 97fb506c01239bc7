package store

import (
	"bytes"
	"context"
	"errors"
	"sync"
)

// Fenced is a Store over a Conditional one for a writer that must never
// write over a record someone else wrote since it last saw it: a cluster
// node saving its sessions, which another node may adopt while this one
// is cut off. It remembers the revision of every record it read or wrote
// (Get, Put) and writes and deletes only at that revision; a record that
// moved on is refused with ErrConflict. A record it never saw is created
// (Put) and not deleted (Delete does nothing). Forget drops what it
// remembers of a record it no longer writes.
//
// A Put whose outcome was unknown (ErrUnavailable: it may have landed)
// is remembered with its data: when the next write finds the record moved
// on to exactly that data, the record is the writer's own and the write
// goes on from there.
type Fenced struct {
	Conditional

	mu    sync.Mutex
	revs  map[string]uint64 // id -> revision last read or written
	tried map[string][]byte // id -> data of a Put whose outcome is unknown
}

// NewFenced returns a Fenced store over c.
func NewFenced(c Conditional) *Fenced {
	return &Fenced{Conditional: c, revs: map[string]uint64{}, tried: map[string][]byte{}}
}

// Get returns what is saved under id and remembers its revision.
func (f *Fenced) Get(ctx context.Context, id string) ([]byte, error) {
	data, rev, err := f.GetRev(ctx, id)
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case err == nil:
		f.revs[id] = rev
		delete(f.tried, id)
	case errors.Is(err, ErrNotFound):
		delete(f.revs, id)
		delete(f.tried, id)
	}
	return data, err
}

// Put writes data under id at the revision last seen (a create if none),
// or returns an error matching ErrConflict.
func (f *Fenced) Put(ctx context.Context, id string, data []byte) error {
	f.mu.Lock()
	rev, tried := f.revs[id], f.tried[id]
	f.mu.Unlock()
	next, err := f.PutRev(ctx, id, data, rev)
	if errors.Is(err, ErrConflict) && tried != nil {
		// The write whose answer was lost may be what moved it on.
		if cur, ours, _ := f.landed(ctx, id, tried); ours {
			next, err = f.PutRev(ctx, id, data, cur)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case err == nil:
		f.revs[id] = next
		delete(f.tried, id)
	case errors.Is(err, ErrUnavailable):
		f.tried[id] = bytes.Clone(data)
	}
	return err
}

// Delete deletes id at the revision last seen; one never seen is not
// this writer's, and is left alone (unless it holds exactly what a Put of
// this writer whose outcome is unknown tried to write).
func (f *Fenced) Delete(ctx context.Context, id string) error {
	f.mu.Lock()
	rev, seen := f.revs[id]
	tried := f.tried[id]
	f.mu.Unlock()
	var err error
	if seen {
		err = f.DeleteRev(ctx, id, rev)
	}
	if tried != nil && (!seen || errors.Is(err, ErrConflict)) {
		// The write whose answer was lost may be what is there now.
		cur, ours, gerr := f.landed(ctx, id, tried)
		switch {
		case ours:
			err = f.DeleteRev(ctx, id, cur)
		case errors.Is(gerr, ErrNotFound):
			err = nil // it never landed, or is gone
		case gerr != nil:
			err = gerr
		}
	}
	if err == nil && (seen || tried != nil) {
		f.Forget(id)
	}
	return err
}

// landed reads id and reports whether it holds exactly tried (a Put of
// this writer whose answer was lost), with its revision.
func (f *Fenced) landed(ctx context.Context, id string, tried []byte) (rev uint64, ours bool, err error) {
	got, rev, err := f.GetRev(ctx, id)
	if err != nil {
		return 0, false, err
	}
	return rev, bytes.Equal(got, tried), nil
}

// Forget drops what f remembers of id: the writer no longer writes it.
func (f *Fenced) Forget(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.revs, id)
	delete(f.tried, id)
}

// Remembered is how many records f remembers (for tests of its bound).
func (f *Fenced) Remembered() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.revs) + len(f.tried)
}
