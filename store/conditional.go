package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

// ErrConflict: a conditional write or delete found the record at another
// revision than the caller's: someone else wrote or deleted it since
// (another node of a cluster that took the session over). Nothing was
// written.
var ErrConflict = errors.New("the snapshot was written or deleted by someone else since")

// Conditional is a Store whose records carry a revision, and that writes
// and deletes one only if it is still at the revision the caller last
// saw: a writer that lost a record to another (a node whose session was
// adopted while it was cut off, a write that was in flight all the
// while) cannot write over the newer one. The KV store is one; a bbolt
// file, which one process holds, needs none.
type Conditional interface {
	Store
	// GetRev is Get, with the record's revision.
	GetRev(ctx context.Context, id string) ([]byte, uint64, error)
	// PutRev saves data under id if the record's revision is rev (0: if
	// there is no live record) and returns its new revision; else an
	// error matching ErrConflict. An error matching ErrUnavailable
	// leaves open whether it was written (see KV.Put).
	PutRev(ctx context.Context, id string, data []byte, rev uint64) (uint64, error)
	// DeleteRev deletes id if the record's revision is rev; else an error
	// matching ErrConflict. Rev 0 deletes whatever is there, as Delete.
	DeleteRev(ctx context.Context, id string, rev uint64) error
}

var _ Conditional = (*KV)(nil)

// GetRev returns what is saved under id and its revision.
func (k *KV) GetRev(ctx context.Context, id string) ([]byte, uint64, error) {
	end, err := k.begin("get", id)
	if err != nil {
		return nil, 0, err
	}
	defer end()
	ctx, cancel := opCtx(ctx)
	defer cancel()
	var e jetstream.KeyValueEntry
	err = k.retry(ctx, func() (err error) { e, err = k.kv.Get(ctx, kvPrefix+id); return err })
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound), errors.Is(err, jetstream.ErrKeyDeleted):
		return nil, 0, fmt.Errorf("store: get %s: %w", id, ErrNotFound)
	case err != nil:
		return nil, 0, fmt.Errorf("store: get %s from nats kv %s: %w", id, k.bucket, k.classify(ctx, err))
	}
	v := e.Value()
	if v == nil {
		v = []byte{}
	}
	return v, e.Revision(), nil
}

// PutRev writes data under id if its revision is rev: a KV Update with
// rev, or a Create for 0 (which also takes a key whose last operation
// was a delete).
func (k *KV) PutRev(ctx context.Context, id string, data []byte, rev uint64) (uint64, error) {
	end, err := k.begin("put", id)
	if err != nil {
		return 0, err
	}
	defer end()
	if len(data) > k.maxValue {
		return 0, fmt.Errorf("store: put %s: %w (%d bytes, the limit is %d)", id, ErrTooLarge, len(data), k.maxValue)
	}
	ctx, cancel := opCtx(ctx)
	defer cancel()
	var next uint64
	err = k.retry(ctx, func() (err error) {
		if rev == 0 {
			next, err = k.kv.Create(ctx, kvPrefix+id, data)
		} else {
			next, err = k.kv.Update(ctx, kvPrefix+id, data, rev)
		}
		return err
	})
	switch {
	case conflict(err):
		return 0, fmt.Errorf("store: put %s at revision %d in nats kv %s: %w", id, rev, k.bucket, ErrConflict)
	case err != nil:
		return 0, fmt.Errorf("store: put %s in nats kv %s: %w", id, k.bucket, k.classify(ctx, err))
	}
	return next, nil
}

// DeleteRev deletes id (a purge, as Delete) if its revision is rev.
func (k *KV) DeleteRev(ctx context.Context, id string, rev uint64) error {
	end, err := k.begin("delete", id)
	if err != nil {
		return err
	}
	defer end()
	ctx, cancel := opCtx(ctx)
	defer cancel()
	err = k.retry(ctx, func() error {
		return k.kv.Purge(ctx, kvPrefix+id, jetstream.PurgeTTL(deleteMarkerTTL), jetstream.LastRevision(rev))
	})
	switch {
	case conflict(err):
		return fmt.Errorf("store: delete %s at revision %d from nats kv %s: %w", id, rev, k.bucket, ErrConflict)
	case err != nil:
		return fmt.Errorf("store: delete %s from nats kv %s: %w", id, k.bucket, k.classify(ctx, err))
	}
	return nil
}

// conflict reports whether err is JetStream's "wrong last sequence": the
// key is not at the revision the write expected.
func conflict(err error) bool {
	if errors.Is(err, jetstream.ErrKeyExists) {
		return true
	}
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) &&
		(apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence ||
			apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant)
}
