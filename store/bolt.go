package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/raxol-ssh/raxol-ssh/internal/fsutil"
)

// DefaultLockTimeout is how long OpenBolt waits for another process to
// release the file when BoltOptions.LockTimeout is 0.
const DefaultLockTimeout = time.Second

// BoltOptions configures OpenBolt.
type BoltOptions struct {
	// LockTimeout is how long to wait for the file's lock (another
	// process, or another OpenBolt in this one, holding it). 0 means
	// DefaultLockTimeout; it is never unbounded. Negative is an error.
	LockTimeout time.Duration
}

// Compaction on open: a file over compactMinSize of which less than half
// is in use is rewritten. Variables so that tests can read them.
var (
	compactMinSize int64 = 4 << 20
	compactTxSize  int64 = 4 << 20 // bytes per transaction while compacting
	createTemp           = os.CreateTemp
)

var bucketName = []byte("snapshots")

// Bolt is a Store in one bbolt file on the local disk, for a single node.
// Every Put and Delete is a transaction committed with fsync before it
// returns.
type Bolt struct {
	path string

	mu     sync.RWMutex // read-held by every operation, held by Close
	db     *bolt.DB
	closed bool

	compactErr error // why compaction on open failed; the store works anyway
}

var _ Store = (*Bolt)(nil)

// OpenBolt opens (creating it if need be) the snapshot file at path. A
// missing parent directory is created with mode 0700, a new file with
// mode 0600.
//
// The file is locked for as long as the store is open: when another
// process (or another OpenBolt of this process) holds it, OpenBolt gives
// up after o.LockTimeout with an error matching ErrLocked.
//
// A file over 4 MiB of which less than half is in use (bbolt reuses the
// pages of deleted snapshots but never shrinks its file) is compacted
// first: copied into a temporary file in the same directory, synced,
// renamed over path, and opened again. If compaction fails the file is
// left as it was and the store works on it; Describe then says why.
// Leftover temporary files of a compaction cut short are removed.
func OpenBolt(path string, o BoltOptions) (*Bolt, error) {
	if path == "" {
		return nil, errors.New("store: open bbolt: empty path")
	}
	timeout := o.LockTimeout
	switch {
	case timeout < 0:
		return nil, fmt.Errorf("store: open bbolt %s: negative LockTimeout %v", path, timeout)
	case timeout == 0:
		timeout = DefaultLockTimeout
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("store: open bbolt %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, fmt.Errorf("store: open bbolt %s: create its directory: %w", abs, err)
	}
	db, err := openLocked(abs, timeout)
	if err != nil {
		return nil, err
	}
	// Holding the lock, any temporary file of a compaction is a leftover.
	removeCompactTemps(abs)
	if err := ensureBucket(db); err != nil {
		db.Close()
		return nil, fmt.Errorf("store: open bbolt %s: %w", abs, err)
	}
	b := &Bolt{path: abs, db: db}
	if need, err := needsCompaction(abs, db); err != nil {
		b.compactErr = err
	} else if need {
		b.db, b.compactErr, err = compact(abs, db, timeout)
		if err != nil {
			return nil, err
		}
	}
	return b, nil
}

// openLocked opens path with bbolt, waiting at most timeout for its lock.
// The lock is taken on the file open, so a file renamed over path while
// waiting (another process's compaction) would be a lock on a file
// nobody will read again: that is detected by comparing path before and
// after, and reported as ErrLocked.
func openLocked(path string, timeout time.Duration) (*bolt.DB, error) {
	before, statErr := os.Stat(path)
	start := time.Now()
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: timeout})
	if errors.Is(err, berrors.ErrTimeout) {
		return nil, fmt.Errorf("store: open bbolt %s: %w (waited %v for its lock: is another raxol-ssh using this data directory?)",
			path, ErrLocked, time.Since(start).Round(time.Millisecond))
	}
	if err != nil {
		return nil, fmt.Errorf("store: open bbolt %s: %w", path, err)
	}
	if statErr == nil {
		after, err := os.Stat(path)
		if err != nil || !os.SameFile(before, after) {
			db.Close()
			return nil, fmt.Errorf("store: open bbolt %s: %w (the file was replaced while this process waited for its lock)", path, ErrLocked)
		}
	}
	return db, nil
}

func ensureBucket(db *bolt.DB) error {
	return db.Update(func(tx *bolt.Tx) error {
		if _, err := tx.CreateBucketIfNotExists(bucketName); err != nil {
			return fmt.Errorf("create bucket %q: %w", bucketName, err)
		}
		return nil
	})
}

// needsCompaction reports whether the file at path is over compactMinSize
// and less than half of it is in use. It needs the free-page count of a
// committed write transaction (ensureBucket has run one).
func needsCompaction(path string, db *bolt.DB) (bool, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return false, fmt.Errorf("compaction: %w", err)
	}
	size := fi.Size()
	if size <= compactMinSize {
		return false, nil
	}
	var highWater int64
	if err := db.View(func(tx *bolt.Tx) error { highWater = tx.Size(); return nil }); err != nil {
		return false, fmt.Errorf("compaction: %w", err)
	}
	inUse := highWater - int64(db.Stats().FreeAlloc)
	return inUse*2 < size, nil
}

const compactSuffix = ".compact-"

// compact rewrites the file at path (open as db) into a fresh one and
// returns the database to use. A failure before the rename keeps db as it
// was (returned with the cause as compactErr); a failure to open the
// compacted file again is fatal (err).
func compact(path string, db *bolt.DB, timeout time.Duration) (_ *bolt.DB, compactErr, err error) {
	dir, base := filepath.Split(path)
	f, err := createTemp(dir, base+compactSuffix+"*")
	if err != nil {
		return db, fmt.Errorf("compaction: %w", err), nil
	}
	tmp := f.Name()
	f.Close()
	fail := func(err error) (*bolt.DB, error, error) {
		os.Remove(tmp)
		return db, fmt.Errorf("compaction into %s: %w", tmp, err), nil
	}
	// NoSync for the copy's many commits; one Sync at the end.
	dst, err := bolt.Open(tmp, 0o600, &bolt.Options{Timeout: timeout, NoSync: true})
	if err != nil {
		return fail(err)
	}
	if err := bolt.Compact(dst, db, compactTxSize); err != nil {
		dst.Close()
		return fail(err)
	}
	if err := dst.Sync(); err != nil {
		dst.Close()
		return fail(err)
	}
	if err := dst.Close(); err != nil {
		return fail(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fail(err)
	}
	// The rename is done: from here on the compacted file is the store.
	serr := fsutil.SyncDir(dir)
	db.Close()
	ndb, err := openLocked(path, timeout)
	if err != nil {
		return nil, nil, fmt.Errorf("store: open bbolt %s after compacting it: %w", path, err)
	}
	if serr != nil {
		serr = fmt.Errorf("compaction: sync directory %s: %w", dir, serr)
	}
	return ndb, serr, nil
}

// removeCompactTemps removes what a compaction cut short left next to
// path. Best effort: a file that cannot be removed only takes room.
func removeCompactTemps(path string) {
	dir, base := filepath.Split(path)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), base+compactSuffix) && e.Type().IsRegular() {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// Describe returns "bbolt <absolute path>", followed by why compaction on
// open failed if it did.
func (b *Bolt) Describe() string {
	if b.compactErr != nil {
		return fmt.Sprintf("bbolt %s (%v)", b.path, b.compactErr)
	}
	return "bbolt " + b.path
}

// Path returns the file's absolute path.
func (b *Bolt) Path() string { return b.path }

// begin validates id (unless op is "list") and read-locks the store for
// one operation.
func (b *Bolt) begin(ctx context.Context, op, id string) (func(), error) {
	if op != "list" {
		if err := ValidID(id); err != nil {
			return nil, fmt.Errorf("store: %s: %w", op, err)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("store: %s %s: %w", op, id, err)
	}
	b.mu.RLock()
	if b.closed {
		b.mu.RUnlock()
		return nil, fmt.Errorf("store: %s %s: %w", op, id, ErrClosed)
	}
	return b.mu.RUnlock, nil
}

// Put saves data under id in one fsynced transaction. bbolt is not
// interruptible: ctx is checked before the write only.
func (b *Bolt) Put(ctx context.Context, id string, data []byte) error {
	end, err := b.begin(ctx, "put", id)
	if err != nil {
		return err
	}
	defer end()
	if len(data) > bolt.MaxValueSize {
		return fmt.Errorf("store: put %s: %w (%d bytes, bbolt's limit is %d)", id, ErrTooLarge, len(data), bolt.MaxValueSize)
	}
	err = b.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketName).Put([]byte(id), data)
	})
	if err != nil {
		return fmt.Errorf("store: put %s in %s: %w", id, b.path, err)
	}
	return nil
}

// Get returns a copy of what is saved under id.
func (b *Bolt) Get(ctx context.Context, id string) ([]byte, error) {
	end, err := b.begin(ctx, "get", id)
	if err != nil {
		return nil, err
	}
	defer end()
	var out []byte
	found := false
	err = b.db.View(func(tx *bolt.Tx) error {
		// A cursor tells an empty value from a missing key, which Get does
		// not. The value is only valid inside the transaction: copy it.
		k, v := tx.Bucket(bucketName).Cursor().Seek([]byte(id))
		if k != nil && string(k) == id && v != nil {
			found = true
			out = bytes.Clone(v) // non-nil, even for an empty value
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: get %s from %s: %w", id, b.path, err)
	}
	if !found {
		return nil, fmt.Errorf("store: get %s: %w", id, ErrNotFound)
	}
	return out, nil
}

// Delete removes id in one fsynced transaction; a missing id is no error.
func (b *Bolt) Delete(ctx context.Context, id string) error {
	end, err := b.begin(ctx, "delete", id)
	if err != nil {
		return err
	}
	defer end()
	err = b.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketName).Delete([]byte(id))
	})
	if err != nil {
		return fmt.Errorf("store: delete %s from %s: %w", id, b.path, err)
	}
	return nil
}

// List returns the saved ids in byte order (bbolt's own), never nil.
func (b *Bolt) List(ctx context.Context) ([]string, error) {
	end, err := b.begin(ctx, "list", "")
	if err != nil {
		return nil, err
	}
	defer end()
	ids := []string{}
	err = b.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketName).ForEach(func(k, v []byte) error {
			if v != nil { // nil: a nested bucket, which this store never makes
				ids = append(ids, string(k))
			}
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("store: list %s: %w", b.path, err)
	}
	return ids, nil
}

// Close waits for the operations under way, then closes the file and
// releases its lock.
func (b *Bolt) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil
	}
	b.closed = true
	if err := b.db.Close(); err != nil {
		return fmt.Errorf("store: close %s: %w", b.path, err)
	}
	return nil
}
