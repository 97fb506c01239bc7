// Package store keeps session snapshots durable, so that a restart or a
// dead node loses no session.
//
// What flows in: a session id and an opaque snapshot (a few KiB to about
// 1 MiB of bytes the server made; this package never looks inside) to
// [Store.Put]; ids to [Store.Get] and [Store.Delete]. What flows out: the
// bytes saved under an id (a copy the caller owns), the sorted ids saved
// ([Store.List]), where it saves ([Store.Describe], for the posture line),
// and errors that name the operation and the id and match one of the
// sentinels: [ErrNotFound], [ErrBadID], [ErrTooLarge], [ErrClosed],
// [ErrLocked] (bbolt), [ErrUnavailable] (NATS) and [ErrConflict] (a
// conditional write).
//
// Ids are session ids: 1 to 64 characters of the URL-safe base64 alphabet
// (A-Z a-z 0-9 - _), checked by [ValidID] before any backend sees them.
//
// # Backends
//
// [Bolt] ([OpenBolt]): one bbolt file on the local disk, for a single
// node. Bucket "snapshots", key = id. Every Put and Delete is a
// transaction committed with fsync: once it returns, the snapshot
// survives the process being killed (the tests kill a writer with
// SIGKILL). The file is locked while open; a second opener waits at most
// BoltOptions.LockTimeout and gets ErrLocked. bbolt reuses freed pages
// but never shrinks its file, so OpenBolt compacts a file over 4 MiB that
// is less than half in use.
//
// [KV] ([OpenKV]): a NATS JetStream key-value bucket, shared by the nodes
// of a cluster. Key = "snap." + id (every id character is valid in a KV
// key, and an id has no dot, so the key is "snap" and one more subject
// token); file storage, history 1, values up to KVOptions.MaxValueSize
// (under NATS's max_payload, 1 MiB by default). A delete is a purge whose
// marker expires after a minute, so deleted ids leave nothing behind for
// long. The connection is the caller's. JetStream's file store fsyncs on
// its own schedule (every 2 minutes by default): a snapshot survives
// NATS being killed, not necessarily the machine losing power, unless the
// server runs with sync_interval: always.
//
// # Writing only over one's own record
//
// A [Conditional] store (KV is one) gives each record a revision and
// writes or deletes it only at the revision the caller names
// ([Conditional.PutRev], [Conditional.DeleteRev]); else [ErrConflict].
// [Fenced] wraps one for a cluster node: it remembers the revision of
// every record it read or wrote and writes only at it, so a node whose
// session another node adopted (it read the record, and wrote it back)
// cannot write over or delete the adopter's record, even with a write
// that was in flight all the while. A write whose answer was lost is
// taken as the node's own when the record holds exactly its data.
//
// # Goroutines
//
// None of its own. Every method is safe for concurrent use; Close waits
// for the calls under way.
package store
