// Package clusternode is a server's membership in a cluster (package
// cluster, on NATS JetStream KV), cut from package server: the directory
// kept up to date with this node's sessions, fencing, giving up a
// session another node claimed, HTTP for a session another node holds
// passed to it through one reverse proxy, peers' signed requests
// verified, the peer requests nodes send each other (signed, their body's
// digest in the URI, checked before the server answers them), and the
// adoption of saved sessions a lost or drained node left.
//
// What flows in: a Config (the cluster.Node joined, the session
// registry, Entries: what the directory should say about this node's
// sessions, the saver, how a request's client address is read, and
// ServePeer: the server's answer to a peer's /_raxol/peer/<op>
// request); Changed when a session changes. What flows out: directory
// writes, the node's load, requests passed to peers (ServeSession),
// peer requests verified (ServePeerChecked, FromPeer), the answers a
// saver.Home gives (Node is one), Drain and Close.
//
// It imports nothing of package server. What the cluster needs of the
// server's own types stays there: raxol_start, raxol_stop and raxol_list
// across nodes (server/cluster_mcp.go, made of the control endpoint's
// tool answers) and SSH terminals bridged to a session's home
// (server/cluster_ssh.go, made of the server's SSH connection).
package clusternode
