package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// DefaultKVMaxValueSize is the largest value a KV store takes when
// KVOptions.MaxValueSize is 0: NATS's default max_payload (1 MiB) less 4
// KiB of headroom (a message carries its subject and headers too). It is
// lowered further when the server's max_payload is smaller.
const DefaultKVMaxValueSize = 1<<20 - 4<<10

// DefaultKVTimeout bounds a KV operation whose ctx has no deadline (the
// JetStream client's own default for API requests).
const DefaultKVTimeout = 5 * time.Second

// kvPrefix is the key prefix of a snapshot in the bucket: "snap." + id.
// Every character of an id (A-Z a-z 0-9 - _) is a valid KV key and NATS
// subject character, and an id has no dot, so "snap.<id>" is one valid
// key: one subject token after the prefix.
const kvPrefix = "snap."

// deleteMarkerTTL is how long the marker a Delete leaves in the bucket
// lives. Without a TTL, every id ever deleted would keep a marker in the
// stream for good; with it, the bucket holds only live snapshots (plus
// the markers of the last minute). A variable so that tests can shorten
// it.
var deleteMarkerTTL = time.Minute

// KVOptions configures OpenKV.
type KVOptions struct {
	// Replicas of the bucket's stream: 0 means 1. More than 1 needs a
	// JetStream cluster of at least that many servers. A bucket that
	// exists with another count is changed to this one (JetStream adds or
	// removes the copies).
	Replicas int
	// MaxValueSize is the largest value Put takes, in bytes; a larger one
	// is refused with ErrTooLarge before anything is sent. 0 means
	// DefaultKVMaxValueSize (or the server's max_payload less headroom, if
	// smaller). It is also the bucket's own limit. It cannot exceed the
	// server's max_payload.
	MaxValueSize int
}

// KV is a Store in a NATS JetStream key-value bucket, shared by the nodes
// of a cluster: a snapshot saved by one node can be read by another. Keys
// are "snap.<id>"; the bucket has file storage and history 1.
//
// The connection is the caller's: KV neither configures nor closes it.
// Give it nats.MaxReconnects(-1), or it closes for good after a minute of
// outage and every call fails from then on. An operation while the
// connection is down fails at once with ErrUnavailable; see Put for what
// an outage during a Put means.
type KV struct {
	nc       *nats.Conn
	js       jetstream.JetStream
	kv       jetstream.KeyValue
	cfg      jetstream.KeyValueConfig
	bucket   string
	maxValue int

	mu     sync.RWMutex // read-held by every operation, held by Close
	closed bool
}

var _ Store = (*KV)(nil)

// OpenKV opens the bucket on nc, creating it (or updating its settings)
// with CreateOrUpdateKeyValue. NATS must be reachable: else the error
// matches ErrUnavailable. The bucket's name must be a JetStream bucket
// name (A-Z a-z 0-9 - _). The server must support per-message TTLs (NATS
// 2.11 or later), which the delete markers use.
func OpenKV(ctx context.Context, nc *nats.Conn, bucket string, o KVOptions) (*KV, error) {
	if nc == nil {
		return nil, errors.New("store: open nats kv: nil connection")
	}
	if err := validBucket(bucket); err != nil {
		return nil, fmt.Errorf("store: open nats kv: %w", err)
	}
	replicas := o.Replicas
	switch {
	case replicas < 0:
		return nil, fmt.Errorf("store: open nats kv %s: negative Replicas %d", bucket, replicas)
	case replicas == 0:
		replicas = 1
	}
	if o.MaxValueSize < 0 {
		return nil, fmt.Errorf("store: open nats kv %s: negative MaxValueSize %d", bucket, o.MaxValueSize)
	}
	if !nc.IsConnected() {
		return nil, fmt.Errorf("store: open nats kv %s: %w (connection %s)", bucket, ErrUnavailable, nc.Status())
	}
	maxValue := o.MaxValueSize
	if payload := int(nc.MaxPayload()); maxValue == 0 {
		maxValue = min(DefaultKVMaxValueSize, payload-4<<10)
	} else if maxValue > payload {
		return nil, fmt.Errorf("store: open nats kv %s: MaxValueSize %d is over the NATS server's max_payload %d", bucket, maxValue, payload)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("store: open nats kv %s: %w", bucket, err)
	}
	k := &KV{
		nc: nc, js: js, bucket: bucket, maxValue: maxValue,
		cfg: jetstream.KeyValueConfig{
			Bucket:       bucket,
			Description:  "raxol-ssh session snapshots",
			MaxValueSize: int32(maxValue),
			History:      1,
			Storage:      jetstream.FileStorage,
			Replicas:     replicas,
			// Enables per-message TTLs (the delete markers'); the bucket
			// has no TTL of its own, so no limit marker is ever written.
			LimitMarkerTTL: time.Second,
		},
	}
	ctx, cancel := opCtx(ctx)
	defer cancel()
	if k.kv, err = js.CreateOrUpdateKeyValue(ctx, k.cfg); err != nil {
		return nil, fmt.Errorf("store: open nats kv %s with %d replicas: %w", bucket, replicas, k.classify(ctx, err))
	}
	return k, nil
}

// validBucket checks a JetStream bucket name, so that a bad one gets a
// clear error rather than the client's "invalid bucket name".
func validBucket(bucket string) error {
	if bucket == "" {
		return errors.New("empty bucket name")
	}
	for i := 0; i < len(bucket); i++ {
		if !idChar(bucket[i]) {
			return fmt.Errorf("bucket name %q has %q at byte %d (only A-Z a-z 0-9 - _ are allowed)", bucket, bucket[i], i)
		}
	}
	return nil
}

// opCtx gives ctx a DefaultKVTimeout deadline if it has none.
func opCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, DefaultKVTimeout)
}

// begin validates id (unless op is "list"), read-locks the store and
// checks the connection, for one operation.
func (k *KV) begin(op, id string) (func(), error) {
	if op != "list" {
		if err := ValidID(id); err != nil {
			return nil, fmt.Errorf("store: %s: %w", op, err)
		}
	}
	k.mu.RLock()
	if k.closed {
		k.mu.RUnlock()
		return nil, fmt.Errorf("store: %s %s: %w", op, id, ErrClosed)
	}
	if !k.nc.IsConnected() {
		k.mu.RUnlock()
		return nil, fmt.Errorf("store: %s %s in nats kv %s: %w (connection %s)", op, id, k.bucket, ErrUnavailable, k.nc.Status())
	}
	return k.mu.RUnlock, nil
}

// classify maps err from a NATS operation run under ctx: the caller
// cancelling is returned as is, a value over a limit is ErrTooLarge, and
// anything else (a timeout, a closed connection, no JetStream) is
// ErrUnavailable, with the cause wrapped.
func (k *KV) classify(ctx context.Context, err error) error {
	var apiErr *jetstream.APIError
	switch {
	case errors.Is(err, context.Canceled) && errors.Is(ctx.Err(), context.Canceled):
		return err
	case errors.Is(err, nats.ErrMaxPayload),
		errors.As(err, &apiErr) && apiErr.ErrorCode == jetstream.JSErrCodeStreamMessageExceedsMaximum:
		return fmt.Errorf("%w: %w", ErrTooLarge, err)
	case errors.Is(err, ErrUnavailable):
		return err
	}
	return fmt.Errorf("%w: %w", ErrUnavailable, err)
}

// gone reports whether err says the bucket's stream does not exist (NATS
// lost its data, or someone deleted the bucket): nobody answers a direct
// get or a publish on its subjects.
func gone(err error) bool {
	return errors.Is(err, jetstream.ErrStreamNotFound) || errors.Is(err, jetstream.ErrBucketNotFound) ||
		errors.Is(err, jetstream.ErrNoStreamResponse) || errors.Is(err, nats.ErrNoResponders)
}

// retry runs op; if the bucket is gone it creates it again (same
// settings) and runs op once more. Right after a bucket was deleted NATS
// may refuse to create it for a moment (still removing the old files):
// that call fails with ErrUnavailable, and a later one creates it.
func (k *KV) retry(ctx context.Context, op func() error) error {
	err := op()
	if err == nil || !gone(err) {
		return err
	}
	if _, cerr := k.js.CreateOrUpdateKeyValue(ctx, k.cfg); cerr != nil {
		return fmt.Errorf("%w (and creating the bucket again failed: %w)", err, cerr)
	}
	return op()
}

// Put saves data under id.
//
// A Put that fails with ErrUnavailable because its ctx ended (NATS went
// away while it was in flight) may still be written later: the connection
// buffers what it could not send and replays it once it reconnects. So an
// error from Put does not mean "not written"; the next Put or Delete of
// the same id decides. Give the connection nats.ReconnectBufSize(-1) for
// "error means not written" (writes in flight then fail at once). A Put
// made while the connection is known to be down is refused at once and
// is never written.
func (k *KV) Put(ctx context.Context, id string, data []byte) error {
	end, err := k.begin("put", id)
	if err != nil {
		return err
	}
	defer end()
	if len(data) > k.maxValue {
		return fmt.Errorf("store: put %s: %w (%d bytes, the limit is %d)", id, ErrTooLarge, len(data), k.maxValue)
	}
	ctx, cancel := opCtx(ctx)
	defer cancel()
	err = k.retry(ctx, func() error { _, err := k.kv.Put(ctx, kvPrefix+id, data); return err })
	if err != nil {
		return fmt.Errorf("store: put %s in nats kv %s: %w", id, k.bucket, k.classify(ctx, err))
	}
	return nil
}

// Get returns what is saved under id.
func (k *KV) Get(ctx context.Context, id string) ([]byte, error) {
	data, _, err := k.GetRev(ctx, id)
	return data, err
}

// Delete removes id: a purge whose marker expires after a minute, so that
// deleted ids do not pile up in the bucket. A missing id is no error.
func (k *KV) Delete(ctx context.Context, id string) error {
	end, err := k.begin("delete", id)
	if err != nil {
		return err
	}
	defer end()
	ctx, cancel := opCtx(ctx)
	defer cancel()
	err = k.retry(ctx, func() error { return k.kv.Purge(ctx, kvPrefix+id, jetstream.PurgeTTL(deleteMarkerTTL)) })
	if err != nil {
		return fmt.Errorf("store: delete %s from nats kv %s: %w", id, k.bucket, k.classify(ctx, err))
	}
	return nil
}

// List returns the saved ids, sorted, never nil. Keys in the bucket that
// are not "snap.<valid id>" are left out.
func (k *KV) List(ctx context.Context) ([]string, error) {
	end, err := k.begin("list", "")
	if err != nil {
		return nil, err
	}
	defer end()
	ctx, cancel := opCtx(ctx)
	defer cancel()
	var keys []string
	err = k.retry(ctx, func() error {
		keys = nil
		kl, err := k.kv.ListKeysFiltered(ctx, kvPrefix+"*")
		if err != nil {
			return err
		}
		for key := range kl.Keys() {
			keys = append(keys, key)
		}
		// The lister ends early, with no error, when ctx ends: a list cut
		// short must not pass for the whole.
		return ctx.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("store: list nats kv %s: %w", k.bucket, k.classify(ctx, err))
	}
	ids := []string{}
	for _, key := range keys {
		if id, ok := strings.CutPrefix(key, kvPrefix); ok && ValidID(id) == nil {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return slices.Compact(ids), nil
}

// Describe returns "nats kv <bucket>".
func (k *KV) Describe() string { return "nats kv " + k.bucket }

// Close waits for the operations under way and marks the store closed.
// The NATS connection stays open: it is the caller's.
func (k *KV) Close() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.closed = true
	return nil
}
