package cluster

import "github.com/nats-io/nats.go"

// Conn is the node's NATS connection, for other JetStream buckets of the
// cluster (the session snapshots). It is closed by Close; callers must
// not close it.
func (n *Node) Conn() *nats.Conn { return n.nc }

// Bucket is the prefix of the cluster's KV bucket names.
func (n *Node) Bucket() string { return n.opts.Bucket }
