package clusternode

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/raxol-ssh/raxol-ssh/cluster"
	"github.com/raxol-ssh/raxol-ssh/mcpbridge"
	"github.com/raxol-ssh/raxol-ssh/session"
)

// Peer requests: a node's POST to another's /_raxol/peer/<op> (the
// server's raxol_start and raxol_stop across nodes). They carry the
// node's HMAC (cluster.Node.SignRequest) over their method, host and
// URI, and the URI carries the SHA-256 of the body, so the MAC covers
// the body too. Anything under PeerPathPrefix without a valid MAC, with
// a body that does not match, or that came through a node's proxy
// (X-Forwarded-For) is refused with 403 and counted as
// raxol_mcp_rejections_total{reason="forged_peer"}. What a request means
// is the server's (Config.ServePeer).

const (
	// PeerBodyLimit bounds a peer request's body and its answer.
	PeerBodyLimit = 64 << 10
	// peerCallTimeout bounds one request to a peer (a start waits for
	// the peer's directory write, AnnounceWait at most).
	peerCallTimeout = 5 * time.Second
)

// ErrPeerFailed is wrapped by the error of a peer request that got no
// answer of the protocol's: the peer is unreachable, failed, or is not
// a node of this version.
var ErrPeerFailed = errors.New("the peer node gave no usable answer")

// Caller is the API key owner a peer request acts for, as the node the
// client called authenticated it, and the client's address, for the
// logs: the body of /_raxol/peer/start.
type Caller struct {
	User           string `json:"user"`
	KeyFingerprint string `json:"key_fingerprint"`
	Remote         string `json:"remote,omitempty"`
}

// StopRequest is the body of /_raxol/peer/stop.
type StopRequest struct {
	Caller
	ID string `json:"id"`
}

var (
	apiUserRe = regexp.MustCompile(`^api:([0-9a-f]{8})$`)
	apiKeyRe  = regexp.MustCompile(`^api-key:([0-9a-f]{16})$`)
)

// Owner checks that p is an API key owner as the server's /mcp makes
// them (user api:<8 hex>, key api-key:<16 hex> beginning with them).
func (p Caller) Owner() (session.Owner, error) {
	u, k := apiUserRe.FindStringSubmatch(p.User), apiKeyRe.FindStringSubmatch(p.KeyFingerprint)
	if u == nil || k == nil || !strings.HasPrefix(k[1], u[1]) {
		return session.Owner{}, fmt.Errorf("not an API key owner: user %q, key %q", truncate(p.User, 32), truncate(p.KeyFingerprint, 32))
	}
	if len(p.Remote) > 256 {
		return session.Owner{}, errors.New("remote address longer than 256 bytes")
	}
	return session.Owner{User: p.User, KeyFingerprint: p.KeyFingerprint}, nil
}

// CallerFor is the Caller of owner, whose client came from remote.
func CallerFor(owner session.Owner, remote string) Caller {
	return Caller{User: owner.User, KeyFingerprint: owner.KeyFingerprint, Remote: remote}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// bodySum is the digest of a peer request's body its URI carries.
func bodySum(body []byte) string {
	sum := sha256.Sum256(body)
	return hex.EncodeToString(sum[:])
}

// CallPeer POSTs in, as JSON, to the peer ni's /_raxol/peer/<op>,
// signed, and decodes its answer into out. The error wraps ErrPeerFailed
// unless the peer gave a 200 answer of the protocol.
func (n *Node) CallPeer(ctx context.Context, ni cluster.NodeInfo, op string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("peer %s request to node %s: %w", op, ni.ID, err)
	}
	ctx, cancel := context.WithTimeout(ctx, peerCallTimeout)
	defer cancel()
	u := strings.TrimRight(ni.HTTPURL, "/") + PeerPathPrefix + op + "?sum=" + bodySum(body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("%w: node %s's HTTP URL %q: %w", ErrPeerFailed, ni.ID, ni.HTTPURL, err)
	}
	req.Header.Set("Content-Type", "application/json")
	n.node.SignRequest(req)
	resp, err := n.transport.RoundTrip(req)
	if err != nil {
		return fmt.Errorf("%w: peer %s request to node %s: %w", ErrPeerFailed, op, ni.ID, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, PeerBodyLimit+1))
	switch {
	case err != nil:
		return fmt.Errorf("%w: peer %s answer of node %s: %w", ErrPeerFailed, op, ni.ID, err)
	case len(data) > PeerBodyLimit:
		return fmt.Errorf("%w: peer %s answer of node %s is over %d bytes", ErrPeerFailed, op, ni.ID, PeerBodyLimit)
	case resp.StatusCode != http.StatusOK:
		return fmt.Errorf("%w: node %s answered peer %s with %s: %s", ErrPeerFailed, ni.ID, op, resp.Status, truncate(strings.TrimSpace(string(data)), 200))
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%w: peer %s answer of node %s is not JSON: %w", ErrPeerFailed, op, ni.ID, err)
	}
	return nil
}

// servePeerRequest checks a request to /_raxol/peer/<op> for peer, the
// node whose MAC ServePeerChecked verified ("" when the request carried
// none), and reads its body: a peer's own POST, its body the one signed.
// Then the server's ServePeer answers it.
func (n *Node) servePeerRequest(w http.ResponseWriter, r *http.Request, peer string) {
	switch {
	case peer == "":
		n.RefuseForged(w, r, fmt.Errorf("%w: no peer headers on a peer endpoint", cluster.ErrForgedPeer))
		return
	case len(r.Header.Values("X-Forwarded-For")) > 0:
		// Signed by a node's proxy: a client's request passed on, never
		// a node's own.
		n.RefuseForged(w, r, fmt.Errorf("%w: a proxied request on a peer endpoint", cluster.ErrForgedPeer))
		return
	case r.Method != http.MethodPost:
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "peer endpoints take POST", http.StatusMethodNotAllowed)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, PeerBodyLimit)
	if code, err := mcpbridge.ReadBody(w, r, n.bodyTimeout, 0); err != nil {
		http.Error(w, "peer request: "+err.Error(), code)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, "reading the request body: "+err.Error(), http.StatusBadRequest)
		return
	}
	if r.URL.Query().Get("sum") != bodySum(body) {
		n.RefuseForged(w, r, fmt.Errorf("%w: the body does not match the signed digest", cluster.ErrForgedPeer))
		return
	}
	n.servePeer(w, r, peer, strings.TrimPrefix(r.URL.Path, PeerPathPrefix), body)
}
