// Package cluster is the session directory and the node membership of a
// multi-node raxol-ssh deployment, kept in NATS JetStream key-value
// buckets.
//
// What flows in: this node's identity and addresses ([Options]: node id,
// the HTTP URL and SSH address peers use to reach it, the cluster secret),
// its load ([Node.SetLoad]), and its sessions' lives: [Node.Announce] when
// a session starts or changes state (attached or detached, agents),
// [Node.Forget] when it ends, [Node.Claim] when this node takes over an
// orphaned one. Node-to-node HTTP requests flow in to be signed
// ([Node.SignRequest]) or verified ([Node.VerifyRequest]).
//
// What flows out: where a session lives ([Node.Lookup]: its entry and its
// live home node), the cluster's sessions ([Node.Sessions]), the live
// nodes ([Node.Nodes], [Node.LeastLoaded]), the news that a peer is gone
// with the sessions it leaves behind ([Node.OnNodeLost]), the proof that
// a request came from a peer (the peer's id from VerifyRequest), and an
// SSH key every node derives from the secret ([Node.PeerSigner],
// [PeerPublicKey]). Callers branch on [ErrUnknownSession] (404),
// [ErrUnavailable] (503: NATS cannot be reached now), [ErrClaimLost] and
// [ErrForgedPeer]; errors name what was being done and wrap the cause.
//
// # Buckets
//
// Two buckets, named after Options.Bucket (default "raxol"), file storage,
// history 1, with Options.Replicas copies each ([Node.Replicas]; the
// server's snapshots bucket has as many). Zero means DefaultReplicas when
// JetStream can place that many copies in the NATS cluster, else 1 (a
// standalone server, or a cluster of fewer servers): the first bucket's
// create decides, and [Node.Describe] says which and why. A count the
// NATS servers can never hold makes Join fail at once with [ErrReplicas]
// (JetStream places a copy on a server that is down, so one server down
// does not lower the default); a bucket found with another count is
// changed to the node's, with a warning:
//
//   - <Bucket>_nodes: key node.<id> → JSON [NodeInfo]. The bucket's TTL is
//     Options.TTL (default 10 s) with limit markers on, so an entry not
//     rewritten for a TTL expires and every watcher sees it go. Each node
//     rewrites its own entry every Options.Heartbeat (default 3 s).
//   - <Bucket>_sessions: key sess.<id> → JSON [SessionEntry]. No TTL.
//
// Node and session ids must be valid key tokens: letters, digits and
// - _ = / . (not first or last, never two dots in a row); others are
// refused with an error naming the id.
//
// # Expiry
//
// A session entry lives as long as its home node's heartbeat: entries are
// not refreshed one by one (a thousand sessions are no thousand writes per
// heartbeat). Lookup and Sessions treat an entry whose home is not in the
// live-node view as unknown. The view is an in-memory cache fed by a
// watcher on the nodes bucket. A peer is declared lost only on evidence
// that survives an outage of the stream: its entry went (it expired, or a
// fresh watcher's snapshot lacks it), and it has written nothing for a
// TTL, by this node's clock, counted from both its last heartbeat seen
// and the moment this node's own heartbeats began to be stored again; its
// entry is read once more before. An expiry seen just after the streams
// come back (every entry aged past the TTL while nobody could write) is
// no such evidence. A deleted entry (a drained node) is a node gone at
// once. Every surviving node then calls its OnNodeLost callbacks with
// that node's entries (with their revisions, ready for Claim); a node
// without callbacks deletes those entries itself, each a compare-and-set
// on its revision, so the surviving nodes' races are harmless. A callback
// that returns an error (NATS did not answer its claim) is called again a
// heartbeat later with the entries read again, until it succeeds or the
// node is back. With the
// defaults, a killed node is gone from Lookup a TTL after its last
// heartbeat (plus up to one heartbeat), and its entries a moment later.
//
// # Fencing: one home per session
//
// A node holds its sessions on a lease: the TTL less [Node.LeaseMargin]
// (a heartbeat, at most a third of the TTL), from the start of its last
// stored heartbeat. Peers declare it lost no sooner than a TTL after
// that start, so its lease has lapsed by its own clock before any peer
// adopts its sessions. [Node.Fenced] tells the server whether it may
// acknowledge a write to a session: not once the lease lapsed
// ([ErrLeaseLapsed], matching ErrUnavailable: degraded; the session is
// kept, and served again once a heartbeat is stored and its entry is
// still this node's), nor once another node claimed it (ErrClaimLost:
// the entry is never written from here again, and the [Node.OnClaimLost]
// callbacks are told so the server ends its copy). A node learns of such
// a claim at once from a watcher on the sessions bucket (every change of
// the directory reaches every node; one of a local session's entry made
// by another node after this node's last write is a claim lost), and
// from any write of its own that finds the entry changed. A lease that
// lapsed holds again only after a resync has re-announced every local
// session. A degraded node claims
// and adopts nothing (Claim, ClaimAbsent and DropOrphan fail with
// ErrLeaseLapsed, and lost peers wait), and ClaimAbsent takes an entry
// whose home is not live only if this node saw that home go or has
// watched NATS for a TTL (else the home becomes a suspect, and its
// sessions come through OnNodeLost if it stays silent).
//
// Claim is a compare-and-set on the revision read: of several nodes
// claiming one orphan exactly one wins, the others get ErrClaimLost.
// Every write of Announce is one too (a create for the first, an update
// on the last revision after), so it never overwrites another node's
// claim (it returns ErrClaimLost instead).
//
// # Reconnects
//
// The connection retries forever, and has no reconnect buffer: an
// operation during an outage fails at once (ErrUnavailable) rather than
// being replayed later. Lookup checks the connection first, so it answers
// ErrUnavailable at once while NATS is down. Announce and Forget made
// during an outage are remembered and carried out when NATS is back; a
// failed write is retried with the next heartbeat.
//
// After every reconnect the node makes NATS right again, since NATS may
// have lost its data (or the peers may have deleted this node's entries,
// believing it dead): it creates the buckets if they are gone, rewrites its
// node entry, re-announces every session it remembers (one claimed by
// another node meanwhile is dropped here), and replaces its nodes watcher
// with a fresh one. Being cut off is no reason to declare a peer dead:
// nothing is swept while this node's heartbeats fail, and a peer missing
// from the fresh watcher's snapshot is a suspect like an expired one. The
// same resync runs when a heartbeat
// fails, or when this node's own entry vanishes while it runs.
//
// # Join, Close and Drain
//
// [Join] blocks until the node is ready (buckets open, node entry
// written, view loaded) or its ctx ends. NATS may be down at boot: Join
// keeps trying until the ctx ends, and then returns an error matching
// ErrUnavailable and the ctx's error, having closed what it opened. The
// ctx decides whether a server waits for NATS or fails its boot. On Join, a
// node deletes the session entries a previous run with the same id left
// behind (a crash and a restart within the TTL, unseen by its peers); so
// node ids must be unique, or two nodes delete each other's sessions (Join
// logs a warning when its id already has a live entry).
//
// [Node.Close] is what a crash looks like to the peers: it stops the
// heartbeat and closes the connection, removing nothing; the node and its
// sessions expire after the TTL. [Node.Drain] is a clean leave: it marks
// the node draining (LeastLoaded skips it), stops the heartbeat and the
// view (which then stays as it was), deletes the node's session entries
// and then its node entry, so the peers see it gone at once. Call Close
// after Drain to close the connection.
//
// # Goroutines
//
// Join starts two, owned by the [Node]: run (heartbeat, the nodes and
// sessions watchers, resync) and reap (the orphans of lost nodes, OnNodeLost callbacks, one
// at a time). Close and Drain cancel and join both. The NATS client's own
// goroutines end when Close closes the connection.
//
// # Peer trust
//
// Node-to-node HTTP requests carry three headers (see [IsPeerHeader]): the
// peer's node id, Unix seconds, and an HMAC-SHA256 with a key derived
// (HKDF-SHA256) from the cluster secret over the id, time, method, host and
// request URI. VerifyRequest accepts a timestamp within ±[MaxPeerSkew] and
// compares in constant time. The body is not covered, and a request can be
// replayed within the skew; a proxy between nodes must not rewrite the
// Host or the URI, and one in front of clients must strip these headers.
// The peer SSH key is an Ed25519 key whose seed is derived from the secret
// with another HKDF info string, the same on every node.
package cluster
