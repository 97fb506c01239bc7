package store

import (
	"context"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// Record is one id and what to save under it, for PutMany.
type Record struct {
	ID   string
	Data []byte
}

// Batcher is a Store that saves many records in one write: the saver of
// a busy server writes every session that changed in the last second
// with one fsync instead of one each.
type Batcher interface {
	Store
	// PutMany saves every record, all or none. A bad id or a value over
	// the backend's limit fails the whole batch before anything is
	// written.
	PutMany(ctx context.Context, recs []Record) error
}

var _ Batcher = (*Bolt)(nil)

// PutMany saves recs in one fsynced transaction.
func (b *Bolt) PutMany(ctx context.Context, recs []Record) error {
	if len(recs) == 0 {
		return nil
	}
	for _, r := range recs {
		if err := ValidID(r.ID); err != nil {
			return fmt.Errorf("store: put many: %w", err)
		}
		if len(r.Data) > bolt.MaxValueSize {
			return fmt.Errorf("store: put many: %s: %w (%d bytes, bbolt's limit is %d)", r.ID, ErrTooLarge, len(r.Data), bolt.MaxValueSize)
		}
	}
	end, err := b.begin(ctx, "list", "") // ids checked above
	if err != nil {
		return fmt.Errorf("store: put many: %w", err)
	}
	defer end()
	err = b.db.Update(func(tx *bolt.Tx) error {
		bk := tx.Bucket(bucketName)
		for _, r := range recs {
			if err := bk.Put([]byte(r.ID), r.Data); err != nil {
				return fmt.Errorf("%s: %w", r.ID, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: put many in %s: %w", b.path, err)
	}
	return nil
}
