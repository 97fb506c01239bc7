package cluster

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go/jetstream"
)

// DefaultReplicas is the replica count of the buckets when Options.Replicas
// is 0 and the NATS cluster can hold it: a bucket then survives the loss
// of any one NATS server, and of its disk.
const DefaultReplicas = 3

// MaxReplicas is the most replicas JetStream gives a stream.
const MaxReplicas = 5

// ErrReplicas is returned by Join when the NATS servers cannot hold the
// buckets with the replicas Options.Replicas asks for: more than the
// cluster's JetStream servers, or more than 1 on a standalone server. It
// is a configuration error, so Join returns it at once instead of
// retrying until its ctx ends.
var ErrReplicas = errors.New("the NATS servers cannot hold that many replicas of the buckets")

// JetStream API error codes the replica count decides.
const (
	// errCodeNoPeers: a clustered JetStream found too few servers to place
	// the replicas (JSClusterNoPeersErrF).
	errCodeNoPeers = 10005
	// errCodeNotClustered: replicas > 1 on a standalone server
	// (JSStreamReplicasNotSupportedErr).
	errCodeNotClustered = 10074
)

// tooFewServers reports whether err says the NATS servers can never hold
// the replicas asked for (as opposed to a server being offline now: then
// JetStream names the offline peer, and a later attempt may succeed).
func tooFewServers(err error) bool {
	var apiErr *jetstream.APIError
	if !errors.As(err, &apiErr) {
		return false
	}
	switch apiErr.ErrorCode {
	case errCodeNotClustered:
		return true
	case errCodeNoPeers:
		return !strings.Contains(apiErr.Description, "offline")
	}
	return false
}

// Replicas returns the replica count of the cluster's buckets, decided by
// Join: Options.Replicas, or the default's choice. Other buckets of the
// cluster (the session snapshots) use it too.
func (n *Node) Replicas() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.replicas
}

// describeReplicas is the replica part of Describe.
func (n *Node) describeReplicas() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.replicas == 0 {
		return "replicas undecided"
	}
	return fmt.Sprintf("replicas %d (%s)", n.replicas, n.replicasWhy)
}

func (n *Node) setReplicas(r int, why string) {
	n.mu.Lock()
	n.replicas, n.replicasWhy = r, why
	n.mu.Unlock()
}

// createBucket creates bucket cfg, or opens it and makes its settings
// cfg's, with the node's replica count. The first call of a node without
// Options.Replicas decides the count: 1 on a standalone NATS server (no
// cluster name), DefaultReplicas if JetStream can place that many copies
// in the cluster, else 1. A bucket found with another replica count is
// changed to this one (JetStream adds or removes the copies) and a
// warning is logged.
func (n *Node) createBucket(ctx context.Context, cfg jetstream.KeyValueConfig) (jetstream.KeyValue, error) {
	// One look at the bucket first: its replica count now (0: no bucket,
	// or the look failed; then the create below says why).
	have := n.bucketReplicas(ctx, cfg.Bucket)
	r := n.Replicas()
	if r == 0 {
		cluster := n.nc.ConnectedClusterName()
		if cluster == "" && !n.nc.IsConnected() {
			return nil, errNotConnected // "" says nothing then
		}
		if cluster == "" {
			n.setReplicas(1, "default: the NATS server is standalone")
			r = 1
		} else {
			n.warnIfChanging(cfg.Bucket, have, DefaultReplicas)
			cfg.Replicas = DefaultReplicas
			kv, err := n.js.CreateOrUpdateKeyValue(ctx, cfg)
			switch {
			case err == nil:
				n.setReplicas(DefaultReplicas, fmt.Sprintf("default: NATS cluster %s has %d or more JetStream servers", cluster, DefaultReplicas))
				return kv, nil
			case !tooFewServers(err):
				return nil, fmt.Errorf("with %d replicas (the default): %w", DefaultReplicas, err)
			}
			n.setReplicas(1, fmt.Sprintf("default: NATS cluster %s has fewer than %d JetStream servers", cluster, DefaultReplicas))
			r = 1
		}
	}
	n.warnIfChanging(cfg.Bucket, have, r)
	cfg.Replicas = r
	kv, err := n.js.CreateOrUpdateKeyValue(ctx, cfg)
	if err != nil && tooFewServers(err) {
		return nil, fmt.Errorf("%w: %d replicas asked for: %w", ErrReplicas, r, err)
	}
	if err != nil {
		return nil, fmt.Errorf("with %d replicas: %w", r, err)
	}
	return kv, nil
}

// bucketReplicas returns the replica count of bucket's stream, or 0 if
// there is no such bucket or it cannot be read now.
func (n *Node) bucketReplicas(ctx context.Context, bucket string) int {
	st, err := n.js.Stream(ctx, "KV_"+bucket)
	if err != nil {
		return 0
	}
	return st.CachedInfo().Config.Replicas
}

// warnIfChanging logs a warning when the bucket exists (have > 0) with a
// replica count other than want (CreateOrUpdateKeyValue is about to
// change it).
func (n *Node) warnIfChanging(bucket string, have, want int) {
	if have > 0 && have != want {
		n.log.Warn("cluster: changing the replicas of a bucket (every node should be given the same --cluster-replicas)",
			"bucket", bucket, "from", have, "to", want)
	}
}
