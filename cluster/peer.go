package cluster

import (
	"crypto/ed25519"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"golang.org/x/crypto/ssh"
)

// The headers SignRequest sets on a node-to-node HTTP request.
const (
	HeaderPeerNode = "Raxol-Peer-Node" // the signing node's id
	HeaderPeerTime = "Raxol-Peer-Time" // Unix seconds when it signed
	HeaderPeerMAC  = "Raxol-Peer-Mac"  // base64url HMAC-SHA256, see SignRequest
)

// MaxPeerSkew is how far a peer request's timestamp may be from the
// verifier's clock, either way.
const MaxPeerSkew = 30 * time.Second

// HKDF info strings: one key per use, derived from the cluster secret.
const (
	infoMAC = "raxol-ssh cluster peer http hmac-sha256 v1"
	infoSSH = "raxol-ssh cluster peer ssh ed25519 v1"
)

// macDomain starts every MAC'd message, so the MAC means nothing else.
const macDomain = "raxol-ssh peer request v1"

// IsPeerHeader reports whether name (any case) is one of the headers
// SignRequest sets, so that a proxy can strip them from client requests.
func IsPeerHeader(name string) bool {
	switch http.CanonicalHeaderKey(name) {
	case HeaderPeerNode, HeaderPeerTime, HeaderPeerMAC:
		return true
	}
	return false
}

// SignRequest adds the headers that prove to a peer that r comes from a
// node holding the cluster secret: this node's id, the time, and an
// HMAC-SHA256 (key derived from the secret) over the node id, the time,
// r's method, its host (r.Host, else r.URL.Host) and its request URI
// (r.URL.RequestURI()). Sign after the last change to any of those; the
// body is not covered. A signed request can be replayed for MaxPeerSkew.
func (n *Node) SignRequest(r *http.Request) { n.signAt(r, time.Now()) }

func (n *Node) signAt(r *http.Request, t time.Time) {
	host := r.Host
	if host == "" {
		host = r.URL.Host
	}
	ts := strconv.FormatInt(t.Unix(), 10)
	mac := peerMAC(n.macKey, n.opts.NodeID, ts, r.Method, host, r.URL.RequestURI())
	r.Header.Set(HeaderPeerNode, n.opts.NodeID)
	r.Header.Set(HeaderPeerTime, ts)
	r.Header.Set(HeaderPeerMAC, base64.RawURLEncoding.EncodeToString(mac))
}

// VerifyRequest checks the peer headers of an incoming request. With none
// of them present (an ordinary client) it returns ("", nil). Otherwise it
// returns the signing node's id, or an error matching ErrForgedPeer when a
// header is missing or repeated, the timestamp is more than MaxPeerSkew
// away, or the MAC (compared in constant time) does not match r's method,
// Host and RequestURI.
func (n *Node) VerifyRequest(r *http.Request) (peer string, err error) {
	return n.verifyAt(r, time.Now())
}

func (n *Node) verifyAt(r *http.Request, now time.Time) (string, error) {
	node, hasNode := r.Header[HeaderPeerNode]
	ts, hasTime := r.Header[HeaderPeerTime]
	mac, hasMAC := r.Header[HeaderPeerMAC]
	if !hasNode && !hasTime && !hasMAC {
		return "", nil
	}
	forged := func(why string) (string, error) {
		return "", fmt.Errorf("cluster: verify peer request: %w: %s", ErrForgedPeer, why)
	}
	if len(node) != 1 || len(ts) != 1 || len(mac) != 1 {
		return forged("peer headers missing or repeated")
	}
	if err := checkID("node id", node[0]); err != nil {
		return forged(err.Error())
	}
	sec, err := strconv.ParseInt(ts[0], 10, 64)
	if err != nil {
		return forged("timestamp is not Unix seconds")
	}
	if d := now.Sub(time.Unix(sec, 0)); d > MaxPeerSkew || d < -MaxPeerSkew {
		return forged(fmt.Sprintf("timestamp %v away from this node's clock (at most %v)", d.Round(time.Second), MaxPeerSkew))
	}
	got, err := base64.RawURLEncoding.DecodeString(mac[0])
	if err != nil {
		return forged("MAC is not base64url")
	}
	uri := r.RequestURI
	if uri == "" {
		uri = r.URL.RequestURI()
	}
	want := peerMAC(n.macKey, node[0], ts[0], r.Method, r.Host, uri)
	if !hmac.Equal(got, want) {
		return forged("MAC does not match (wrong secret, or the request was changed)")
	}
	return node[0], nil
}

// peerMAC is HMAC-SHA256 over the domain string and the fields, each
// length-prefixed so that no two field lists give the same message.
func peerMAC(key []byte, fields ...string) []byte {
	m := hmac.New(sha256.New, key)
	var l [4]byte
	for _, f := range append([]string{macDomain}, fields...) {
		binary.BigEndian.PutUint32(l[:], uint32(len(f)))
		m.Write(l[:])
		m.Write([]byte(f))
	}
	return m.Sum(nil)
}

// PeerSigner returns the SSH signer every node derives from the cluster
// secret (Ed25519, seed = HKDF-SHA256(secret, info)), the same on every
// node: a node uses it to authenticate to a peer's SSH server.
func (n *Node) PeerSigner() (ssh.Signer, error) {
	s, err := ssh.NewSignerFromKey(ed25519.NewKeyFromSeed(n.sshSeed))
	if err != nil {
		return nil, fmt.Errorf("cluster: peer SSH signer: %w", err)
	}
	return s, nil
}

// PeerPublicKey returns the public half of the key PeerSigner returns for
// secret, for an SSH server to recognise a peer node.
func PeerPublicKey(secret []byte) (ssh.PublicKey, error) {
	if len(secret) < MinSecretLen {
		return nil, fmt.Errorf("cluster: peer public key: the secret is %d bytes; at least %d are required", len(secret), MinSecretLen)
	}
	seed, err := deriveKey(secret, infoSSH)
	if err != nil {
		return nil, fmt.Errorf("cluster: peer public key: %w", err)
	}
	pub, err := ssh.NewPublicKey(ed25519.NewKeyFromSeed(seed).Public())
	if err != nil {
		return nil, fmt.Errorf("cluster: peer public key: %w", err)
	}
	return pub, nil
}

// deriveKey derives a 32-byte key for one use (info) from the secret.
func deriveKey(secret []byte, info string) ([]byte, error) {
	return hkdf.Key(sha256.New, secret, nil, info, 32)
}
