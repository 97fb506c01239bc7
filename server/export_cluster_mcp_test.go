package server

import (
	"context"

	"github.com/raxol-ssh/raxol-ssh/cluster"
)

// ClusterSessions is the cluster's session directory as this node reads
// it (every session whose home node is live).
func (s *Server) ClusterSessions(ctx context.Context) ([]cluster.SessionEntry, error) {
	return s.cluster.node.Sessions(ctx)
}

// ClusterNodes is this node's view of the live nodes, itself included.
func (s *Server) ClusterNodes() []cluster.NodeInfo { return s.cluster.node.Nodes() }
