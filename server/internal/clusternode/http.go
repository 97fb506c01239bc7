package clusternode

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"

	"github.com/raxol-ssh/raxol-ssh/cluster"
)

// PeerPathPrefix is where nodes serve each other's requests.
const PeerPathPrefix = "/_raxol/peer/"

// peerKey marks a request's context as a verified peer's.
type peerKey struct{}

// FromPeer reports whether r came from a node of the cluster (its proof
// of the secret verified by ServePeerChecked).
func FromPeer(r *http.Request) bool {
	_, ok := r.Context().Value(peerKey{}).(string)
	return ok
}

// ServePeerChecked refuses a request that claims to come from a peer
// without proof of the cluster secret, and marks one with proof, so that
// its X-Forwarded-For is believed and it is never passed on again; then
// serves a peer endpoint's (servePeerRequest, then the server's
// ServePeer), and any other with next.
func (n *Node) ServePeerChecked(w http.ResponseWriter, r *http.Request, next http.Handler) {
	peer, err := n.node.VerifyRequest(r)
	switch {
	case err != nil:
		n.RefuseForged(w, r, err)
		return
	case peer != "":
		r = r.WithContext(context.WithValue(r.Context(), peerKey{}, peer))
	}
	if strings.HasPrefix(r.URL.Path, PeerPathPrefix) {
		n.servePeerRequest(w, r, peer)
		return
	}
	next.ServeHTTP(w, r)
}

// RefuseForged answers a request that claims to come from a peer without
// valid proof: 403, counted and logged.
func (n *Node) RefuseForged(w http.ResponseWriter, r *http.Request, err error) {
	n.metrics.MCPRejected("forged_peer")
	n.log.Warn("cluster: refused a request claiming to come from a peer", "remote", r.RemoteAddr, "path", r.URL.Path, "err", err)
	http.Error(w, "forbidden: not a peer of this cluster", http.StatusForbidden)
}

// ServeSession serves /sessions/<id>/...: with local when this node holds
// the session, else passed to its home node. A session the directory
// does not know gets local's answer for an unknown session, so an
// unknown session and a wrong token look alike from any node.
func (n *Node) ServeSession(w http.ResponseWriter, r *http.Request, local http.Handler) {
	id := sessionIDOf(r.URL.Path)
	if id == "" {
		local.ServeHTTP(w, r)
		return
	}
	if _, ok := n.sessions.Get(id); ok {
		if n.node.ClaimLost(id) {
			// Another node claimed it: nothing is served here any more.
			n.refuseMoved(w)
			return
		}
		// A node whose lease lapsed (degraded: it cannot reach NATS)
		// keeps serving: reads are answered, and a change is applied but
		// answered not_saved, since the record cannot hold it (and may
		// be adopted elsewhere meanwhile): nothing is acknowledged.
		local.ServeHTTP(w, r)
		return
	}
	if FromPeer(r) {
		local.ServeHTTP(w, r)
		return
	}
	_, home, err := n.node.Lookup(r.Context(), id)
	switch {
	case err == nil && home.ID != n.node.ID():
		n.forward(w, r, home)
	case errors.Is(err, cluster.ErrUnavailable):
		w.Header().Set("Retry-After", "5")
		http.Error(w, "the cluster directory is unavailable; try again", http.StatusServiceUnavailable)
	default:
		local.ServeHTTP(w, r)
	}
}

// refuseMoved answers a request for a session another node claimed with
// 503 and a line the agent can act on (a degraded node, whose lease only
// lapsed, still serves its sessions).
func (n *Node) refuseMoved(w http.ResponseWriter) {
	w.Header().Set("Retry-After", "1")
	http.Error(w, "this session moved to another node of the cluster; retry to reach it there", http.StatusServiceUnavailable)
}

// sessionIDOf is the <id> of /sessions/<id>/..., or "".
func sessionIDOf(path string) string {
	rest, ok := strings.CutPrefix(path, "/sessions/")
	if !ok {
		return ""
	}
	id, _, _ := strings.Cut(rest, "/")
	return id
}

// homeKey carries, in a request's context, the URL of the node the proxy
// passes it to.
type homeKey struct{}

// newProxy is the one reverse proxy of the node: it passes a request to
// the URL under homeKey and streams the answer back, Streamable HTTP
// responses, its GET stream and legacy SSE alike (flushed as they come).
// The Host header is kept, so home checks it as if the client had come
// to it; the request carries this node's proof of the secret and the
// client's address alone in X-Forwarded-For (home believes a verified
// peer, and the client was already found here).
func (n *Node) newProxy() *httputil.ReverseProxy {
	return &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(pr.In.Context().Value(homeKey{}).(*url.URL))
			pr.Out.Host = pr.In.Host
			for name := range pr.Out.Header {
				if cluster.IsPeerHeader(name) {
					pr.Out.Header.Del(name)
				}
			}
			pr.Out.Header["X-Forwarded-For"] = []string{n.clientIP(pr.In)}
			n.node.SignRequest(pr.Out)
		},
		Transport:     n.transport,
		FlushInterval: -1,
		ErrorLog:      slog.NewLogLogger(n.log.Handler(), slog.LevelDebug),
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if r.Context().Err() == nil {
				n.log.Warn("cluster: the session's server did not answer", "url", r.URL.Host, "err", err)
			}
			http.Error(w, "the session's server cannot be reached", http.StatusBadGateway)
		},
	}
}

// forward passes r to home through the node's proxy.
func (n *Node) forward(w http.ResponseWriter, r *http.Request, home cluster.NodeInfo) {
	target, err := url.Parse(home.HTTPURL)
	if err != nil || target.Host == "" {
		n.log.Warn("cluster: a peer's HTTP URL is not usable", "node", home.ID, "url", home.HTTPURL)
		http.Error(w, "the session's server cannot be reached", http.StatusBadGateway)
		return
	}
	n.proxy.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), homeKey{}, target)))
}
