package cluster

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// peerNode is a node with only what signing needs: no NATS.
func peerNode(t testing.TB, secret []byte, id string) *Node {
	t.Helper()
	mac, err := deriveKey(secret, infoMAC)
	if err != nil {
		t.Fatal(err)
	}
	seed, err := deriveKey(secret, infoSSH)
	if err != nil {
		t.Fatal(err)
	}
	return &Node{opts: Options{NodeID: id}, macKey: mac, sshSeed: seed}
}

// serverSide turns a signed client request into what a server's handler
// sees: Host from the request line, RequestURI as sent.
func serverSide(r *http.Request) *http.Request {
	s := httptest.NewRequest(r.Method, r.URL.RequestURI(), nil)
	s.Host = r.Host
	if s.Host == "" {
		s.Host = r.URL.Host
	}
	s.Header = r.Header.Clone()
	return s
}

func TestASignedRequestVerifiesOverRealHTTP(t *testing.T) {
	a, b := peerNode(t, testSecret, "a"), peerNode(t, testSecret, "b")
	type seen struct {
		peer string
		err  error
	}
	got := make(chan seen, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		peer, err := b.VerifyRequest(r)
		got <- seen{peer, err}
	}))
	defer srv.Close()
	for _, path := range []string{"/mcp/s1?x=1&y=%2F", "/a%20b/c", "/"} {
		req, err := http.NewRequest("POST", srv.URL+path, strings.NewReader("body"))
		if err != nil {
			t.Fatal(err)
		}
		a.SignRequest(req)
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if s := <-got; s.err != nil || s.peer != "a" {
			t.Errorf("%s: VerifyRequest = %q, %v; want a", path, s.peer, s.err)
		}
	}
}

func TestPeerRequestsWithoutValidProofAreForged(t *testing.T) {
	a := peerNode(t, testSecret, "a")
	b := peerNode(t, testSecret, "b")
	other := peerNode(t, bytes.Repeat([]byte("x"), 32), "a")
	signed := func(n *Node, at time.Time) *http.Request {
		r := httptest.NewRequest("GET", "http://b.test:8080/mcp/s1?q=1", nil)
		r.Host = "b.test:8080"
		n.signAt(r, at)
		return serverSide(r)
	}
	now := time.Now()
	if peer, err := b.VerifyRequest(signed(a, now)); err != nil || peer != "a" {
		t.Fatalf("a fresh signed request: %q, %v", peer, err)
	}
	if peer, err := b.VerifyRequest(signed(a, now.Add(-20*time.Second))); err != nil || peer != "a" {
		t.Fatalf("a request signed 20 s ago (within the skew): %q, %v", peer, err)
	}
	cases := map[string]*http.Request{
		"tampered path": func() *http.Request {
			r := signed(a, now)
			r.RequestURI = "/mcp/s2?q=1"
			return r
		}(),
		"tampered query": func() *http.Request {
			r := signed(a, now)
			r.RequestURI = "/mcp/s1?q=2"
			return r
		}(),
		"tampered method": func() *http.Request { r := signed(a, now); r.Method = "POST"; return r }(),
		"tampered host":   func() *http.Request { r := signed(a, now); r.Host = "c.test:8080"; return r }(),
		"other node id": func() *http.Request {
			r := signed(a, now)
			r.Header.Set(HeaderPeerNode, "c")
			return r
		}(),
		"wrong secret":       signed(other, now),
		"60 s old":           signed(a, now.Add(-60*time.Second)),
		"60 s in the future": signed(a, now.Add(60*time.Second)),
		"missing MAC":        func() *http.Request { r := signed(a, now); r.Header.Del(HeaderPeerMAC); return r }(),
		"missing timestamp":  func() *http.Request { r := signed(a, now); r.Header.Del(HeaderPeerTime); return r }(),
		"only the node id": func() *http.Request {
			r := httptest.NewRequest("GET", "/", nil)
			r.Header.Set(HeaderPeerNode, "a")
			return r
		}(),
		"only an empty MAC": func() *http.Request {
			r := httptest.NewRequest("GET", "/", nil)
			r.Header.Set(HeaderPeerMAC, "")
			return r
		}(),
		"repeated node id":    func() *http.Request { r := signed(a, now); r.Header.Add(HeaderPeerNode, "a"); return r }(),
		"garbled MAC":         func() *http.Request { r := signed(a, now); r.Header.Set(HeaderPeerMAC, "!!"); return r }(),
		"timestamp not a num": func() *http.Request { r := signed(a, now); r.Header.Set(HeaderPeerTime, "soon"); return r }(),
	}
	for name, r := range cases {
		peer, err := b.VerifyRequest(r)
		if !errors.Is(err, ErrForgedPeer) || peer != "" {
			t.Errorf("%s: VerifyRequest = %q, %v; want ErrForgedPeer", name, peer, err)
		}
	}
	// An ordinary client has no peer header at all.
	r := httptest.NewRequest("GET", "/mcp/s1", nil)
	r.Header.Set("Authorization", "Bearer x")
	if peer, err := b.VerifyRequest(r); peer != "" || err != nil {
		t.Errorf("a request without peer headers: %q, %v; want \"\", nil", peer, err)
	}
}

func TestAnyChangeToMethodHostOrURIAfterSigningFailsVerification(t *testing.T) {
	a, b := peerNode(t, testSecret, "a"), peerNode(t, testSecret, "b")
	uriChar := rapid.SampledFrom([]rune("abcz09/-._~%?&=+"))
	rapid.Check(t, func(t *rapid.T) {
		method := rapid.SampledFrom([]string{"GET", "POST", "PUT", "DELETE", "PATCH", "get"}).Draw(t, "method")
		host := rapid.StringMatching(`[a-z0-9.-]{1,20}(:[0-9]{1,5})?`).Draw(t, "host")
		uri := "/" + string(rapid.SliceOfN(uriChar, 0, 30).Draw(t, "path"))
		u, err := url.ParseRequestURI(uri)
		if err != nil {
			t.Skip("not a request URI")
		}
		r := &http.Request{Method: method, Host: host, URL: u, Header: http.Header{}}
		a.SignRequest(r)
		s := &http.Request{Method: method, Host: host, URL: u, RequestURI: u.RequestURI(), Header: r.Header}
		if peer, err := b.VerifyRequest(s); err != nil || peer != "a" {
			t.Fatalf("unchanged request: %q, %v", peer, err)
		}
		m := *s
		switch rapid.IntRange(0, 2).Draw(t, "field") {
		case 0:
			m.Method = rapid.StringMatching(`[A-Za-z]{1,8}`).Filter(func(x string) bool { return x != method }).Draw(t, "new method")
		case 1:
			m.Host = rapid.StringMatching(`[A-Za-z0-9.:-]{0,20}`).Filter(func(x string) bool { return x != host }).Draw(t, "new host")
		case 2:
			m.RequestURI = rapid.StringMatching(`/[ -~]{0,30}`).Filter(func(x string) bool { return x != s.RequestURI }).Draw(t, "new uri")
		}
		if _, err := b.VerifyRequest(&m); !errors.Is(err, ErrForgedPeer) {
			t.Fatalf("changed request (%q %q %q) verified: %v", m.Method, m.Host, m.RequestURI, err)
		}
	})
}

func TestIsPeerHeaderNamesWhatSignRequestSets(t *testing.T) {
	r := httptest.NewRequest("GET", "/", nil)
	peerNode(t, testSecret, "a").SignRequest(r)
	if len(r.Header) != 3 {
		t.Fatalf("SignRequest set %v", r.Header)
	}
	for name := range r.Header {
		if !IsPeerHeader(name) || !IsPeerHeader(strings.ToLower(name)) {
			t.Errorf("IsPeerHeader(%q) = false", name)
		}
	}
	for _, name := range []string{"Authorization", "Raxol-Peer", "X-Raxol-Peer-Node", ""} {
		if IsPeerHeader(name) {
			t.Errorf("IsPeerHeader(%q) = true", name)
		}
	}
}

func TestThePeerSSHKeyIsDerivedFromTheSecret(t *testing.T) {
	s1, err := peerNode(t, testSecret, "a").PeerSigner()
	if err != nil {
		t.Fatal(err)
	}
	s2, err := peerNode(t, bytes.Clone(testSecret), "b").PeerSigner()
	if err != nil {
		t.Fatal(err)
	}
	s3, err := peerNode(t, bytes.Repeat([]byte("y"), 32), "a").PeerSigner()
	if err != nil {
		t.Fatal(err)
	}
	k1, k2, k3 := s1.PublicKey().Marshal(), s2.PublicKey().Marshal(), s3.PublicKey().Marshal()
	if !bytes.Equal(k1, k2) {
		t.Error("two nodes with one secret derived different keys")
	}
	if bytes.Equal(k1, k3) {
		t.Error("two secrets derived the same key")
	}
	if s1.PublicKey().Type() != "ssh-ed25519" {
		t.Errorf("key type %s", s1.PublicKey().Type())
	}
	pub, err := PeerPublicKey(testSecret)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(pub.Marshal(), k1) {
		t.Error("PeerPublicKey does not match PeerSigner")
	}
	sig, err := s2.Sign(nil, []byte("hello"))
	if err != nil {
		t.Fatal(err)
	}
	if err := pub.Verify([]byte("hello"), sig); err != nil {
		t.Errorf("PeerPublicKey does not verify PeerSigner's signature: %v", err)
	}
	if _, err := PeerPublicKey([]byte("short")); err == nil {
		t.Error("PeerPublicKey accepted a 5-byte secret")
	}
}
