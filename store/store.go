package store

import (
	"context"
	"errors"
	"fmt"
)

// Store keeps session snapshots by session id. Safe for concurrent use.
//
// Every method validates the id first ([ValidID]): a bad id is an error
// matching [ErrBadID], whatever the backend. After Close every method
// but Describe and Close returns an error matching [ErrClosed].
type Store interface {
	// Put saves data under id, replacing what was there. The store keeps
	// its own copy: the caller may reuse data once Put returns.
	Put(ctx context.Context, id string, data []byte) error
	// Get returns what was saved under id, or an error matching
	// ErrNotFound. The slice is the caller's own. An empty value saved
	// comes back as an empty, non-nil slice.
	Get(ctx context.Context, id string) ([]byte, error)
	// Delete removes id; deleting a missing id is not an error.
	Delete(ctx context.Context, id string) error
	// List returns the ids saved, sorted. It is never nil: an empty store
	// gives an empty, non-nil slice and no error.
	List(ctx context.Context) ([]string, error)
	// Describe says where it saves, for the server's posture line
	// ("bbolt /path/sessions.db", "nats kv raxol_snapshots").
	Describe() string
	// Close releases the store (the bbolt file and its lock; for KV only
	// the store itself: the NATS connection is the caller's). A second
	// Close returns nil.
	Close() error
}

// Errors the backends wrap; test them with errors.Is. Each error returned
// also names the operation and the id, and wraps the backend's cause
// where there is one.
var (
	// ErrNotFound: nothing is saved under the id.
	ErrNotFound = errors.New("no snapshot saved under this id")
	// ErrClosed: the store was closed.
	ErrClosed = errors.New("snapshot store closed")
	// ErrTooLarge: the value is over the backend's limit (KVOptions.MaxValueSize
	// for NATS, bbolt's MaxValueSize for bbolt). Nothing was written.
	ErrTooLarge = errors.New("snapshot too large for the store")
	// ErrLocked: another process holds the bbolt file (or replaced it while
	// this one waited for its lock).
	ErrLocked = errors.New("snapshot file locked by another process")
	// ErrUnavailable: NATS cannot be reached now (disconnected, a timeout,
	// JetStream not answering). The NATS error is wrapped too. Retrying
	// later may succeed.
	ErrUnavailable = errors.New("snapshot store unavailable (NATS cannot be reached)")
	// ErrBadID: the id is not a session id (see ValidID).
	ErrBadID = errors.New("bad snapshot id")
)

// MaxIDLen is the longest id a store takes.
const MaxIDLen = 64

// ValidID returns nil if id can be a key of every backend: 1 to MaxIDLen
// characters of the URL-safe base64 alphabet (A-Z a-z 0-9 - _), which is
// what session ids are made of. Otherwise it returns an error matching
// ErrBadID that says what is wrong (the id is quoted, cut to MaxIDLen).
func ValidID(id string) error {
	if id == "" {
		return fmt.Errorf("%w: empty id", ErrBadID)
	}
	if len(id) > MaxIDLen {
		return fmt.Errorf("%w: %q... is %d bytes, more than %d", ErrBadID, id[:MaxIDLen], len(id), MaxIDLen)
	}
	for i := 0; i < len(id); i++ {
		if !idChar(id[i]) {
			return fmt.Errorf("%w: %q has %q at byte %d (only A-Z a-z 0-9 - _ are allowed)", ErrBadID, id, id[i], i)
		}
	}
	return nil
}

func idChar(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_'
}
