package server

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/pires/go-proxyproto"

	"github.com/raxol-ssh/raxol-ssh/server/internal/clusternode"
)

// This file is what the server believes of a client's address behind a
// load balancer: PROXY protocol headers on SSH (Options.SSH.ProxyProtocol)
// and X-Forwarded-For on HTTP (Options.MCP.TrustedProxies), each believed
// from the configured proxies only.

// trustedProxies are the addresses whose word on a client's address is
// believed. Nil trusts nobody.
type trustedProxies []netip.Prefix

// newTrustedProxies checks the prefixes of field and returns them masked,
// IPv4-mapped IPv6 prefixes as IPv4 (addresses are compared unmapped).
func (o Options) newTrustedProxies(field string, ps []netip.Prefix) (trustedProxies, error) {
	if len(ps) == 0 {
		return nil, nil
	}
	out := make(trustedProxies, 0, len(ps))
	for _, p := range ps {
		if !p.IsValid() {
			return nil, o.optionError(field, fmt.Errorf("%q is not a valid CIDR prefix", p))
		}
		if a := p.Addr(); a.Is4In6() && p.Bits() >= 96 {
			p = netip.PrefixFrom(a.Unmap(), p.Bits()-96)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// contains reports whether a is a trusted proxy's address.
func (t trustedProxies) contains(a netip.Addr) bool {
	a = a.Unmap().WithZone("")
	for _, p := range t {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// String lists the prefixes, for the posture line.
func (t trustedProxies) String() string {
	s := make([]string, len(t))
	for i, p := range t {
		s[i] = p.String()
	}
	return strings.Join(s, ",")
}

// addrOf is the IP address of a network address (unmapped, without zone),
// or the zero Addr when it has none.
func addrOf(a net.Addr) netip.Addr {
	var ip netip.Addr
	switch a := a.(type) {
	case nil:
	case *net.TCPAddr:
		ip, _ = netip.AddrFromSlice(a.IP)
	default:
		ip = parseHostAddr(a.String())
	}
	return ip.Unmap().WithZone("")
}

// parseHostAddr parses an IP address, with or without a port ("1.2.3.4",
// "1.2.3.4:80", "[2001:db8::1]:80", "2001:db8::1"); the zero Addr if it is
// none.
func parseHostAddr(s string) netip.Addr {
	s = strings.TrimSpace(s)
	if a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")); err == nil {
		return a.Unmap().WithZone("")
	}
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap().WithZone("")
	}
	return netip.Addr{}
}

// clientIP is the address of the client that sent r, as every per-address
// limit and log of a request reads it: the TCP peer's, unless the peer is
// a trusted proxy; then the right-most X-Forwarded-For address that is not
// itself a trusted proxy. Each proxy appends the address it got the
// request from, so the entries right of that one were written by trusted
// proxies and the ones left of it by the client, which may claim
// anything. An entry that is no address (so no proxy of ours wrote it)
// ends the walk at the proxy that passed it on; a chain of trusted
// proxies only is the left-most of them.
func (t trustedProxies) clientIP(r *http.Request) string {
	peer := parseHostAddr(r.RemoteAddr)
	if !peer.IsValid() {
		return r.RemoteAddr
	}
	client := peer
	// A node of the cluster that passed the request on (its proof of the
	// secret verified) wrote the right-most entry itself.
	if t.contains(peer) || clusternode.FromPeer(r) {
		client = t.forwardedFor(peer, r.Header.Values("X-Forwarded-For"))
	}
	return client.String()
}

// forwardedFor walks X-Forwarded-For (all its header lines, in order) from
// the right, starting from peer, a trusted proxy.
func (t trustedProxies) forwardedFor(peer netip.Addr, values []string) netip.Addr {
	var hops []string
	for _, v := range values {
		hops = append(hops, strings.Split(v, ",")...)
	}
	client := peer
	for i := len(hops) - 1; i >= 0 && t.contains(client); i-- {
		a := parseHostAddr(hops[i])
		if !a.IsValid() {
			break
		}
		client = a
	}
	return client
}

// sshProxyProtocol reads the PROXY protocol headers of the SSH listener's
// connections (Options.SSH.ProxyProtocol). The zero value (nil) reads
// none.
type sshProxyProtocol struct {
	trusted trustedProxies
	// timeout bounds the wait for a trusted proxy's header.
	timeout time.Duration
}

// sshProxyProtocol is the PROXY protocol reader the options ask for, or
// nil without Options.SSH.ProxyProtocol.
func (o Options) sshProxyProtocol() (*sshProxyProtocol, error) {
	trusted, err := o.newTrustedProxies("Options.SSH.TrustedProxies", o.SSH.TrustedProxies)
	if err != nil || !o.SSH.ProxyProtocol {
		return nil, err
	}
	if len(trusted) == 0 {
		return nil, o.optionError("Options.SSH.TrustedProxies", fmt.Errorf("required when %s is set: without it any client could claim any address", o.setting("Options.SSH.ProxyProtocol")))
	}
	return &sshProxyProtocol{trusted: trusted, timeout: o.Limits.HandshakeTimeout}, nil
}

// describe says, for the posture line, which PROXY headers are believed.
func (p *sshProxyProtocol) describe() string {
	if p == nil {
		return "off"
	}
	return "required from " + p.trusted.String() + " (the client address is the header's); refused from any other address"
}

// accept prepares a new connection before admission, so that admission
// and everything after it read the client's address from RemoteAddr. A
// trusted proxy's connection has its header read now (in the
// connection's own goroutine, within timeout), and a connection without
// a valid one is refused with the error (wrapping errSilentProxyConn if
// it sent nothing). Any other connection is a direct client served as it
// is, except that its first bytes are checked for a PROXY header when the
// handshake reads them: if it sent one, the handshake fails (see
// isUntrustedProxyHeader), and its RemoteAddr is its own all along.
func (p *sshProxyProtocol) accept(c net.Conn) (net.Conn, error) {
	if p == nil {
		return c, nil
	}
	peer := c.RemoteAddr()
	if !p.trusted.contains(addrOf(peer)) {
		pc := proxyproto.NewConn(c, proxyproto.WithPolicy(proxyproto.REJECT), proxyproto.SetReadHeaderTimeout(p.timeout))
		return &directConn{Conn: pc, peer: peer}, nil
	}
	br := bufio.NewReaderSize(c, proxyHeaderBuffer)
	h, err := proxyproto.ReadHeaderTimeout(c, br, p.timeout)
	switch {
	case err != nil && br.Buffered() == 0:
		return nil, fmt.Errorf("trusted proxy %s: %w", peer, errSilentProxyConn)
	case err != nil:
		return nil, fmt.Errorf("trusted proxy %s sent no valid PROXY protocol header (v1 or v2): %w", peer, err)
	}
	remote := peer
	// A LOCAL header (a proxy's own health check) or an UNKNOWN source
	// leaves the proxy's own address.
	if h.Command.IsProxy() && h.SourceAddr != nil {
		remote = h.SourceAddr
	}
	return &headerConn{Conn: c, r: br, remote: remote}, nil
}

// proxyHeaderBuffer is the read buffer of a trusted proxy's connection:
// a v1 header is at most 107 bytes, v2 ones without large TLVs are
// shorter; longer ones are read in several fills.
const proxyHeaderBuffer = 256

// headerConn is a trusted proxy's connection whose PROXY header was read:
// reads go on from what followed the header, and RemoteAddr is the
// header's client.
type headerConn struct {
	net.Conn
	r      *bufio.Reader // reads only from the connection's one reader
	remote net.Addr
}

func (c *headerConn) Read(b []byte) (int, error) { return c.r.Read(b) }
func (c *headerConn) RemoteAddr() net.Addr       { return c.remote }

// directConn is a direct client's connection on a PROXY protocol
// listener: its reads fail if it opens with a PROXY header, and its
// address is the TCP peer's (read without waiting for the first bytes,
// as proxyproto.Conn's RemoteAddr would).
type directConn struct {
	*proxyproto.Conn
	peer net.Addr
}

func (c *directConn) RemoteAddr() net.Addr { return c.peer }

// isUntrustedProxyHeader reports whether a handshake failed because the
// client sent a PROXY header from an address that may not.
func isUntrustedProxyHeader(err error) bool {
	return errors.Is(err, proxyproto.ErrSuperfluousProxyHeader)
}

// proxiedRequests caps the requests in flight through trusted proxies per
// client address (Limits.MaxHTTPPerIP): perIPListener cannot count those
// clients, whose connections are all the proxy's.
type proxiedRequests struct {
	trusted trustedProxies
	max     int
	refused func()

	mu sync.Mutex // protects n
	n  map[string]int
}

// inFlight is how many requests client has in flight now.
func (p *proxiedRequests) inFlight(client string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.n[client]
}

// limit serves next, refusing with 429 a request through a trusted proxy
// from a client that already has max in flight. Requests from any other
// peer pass: perIPListener counted their connections.
func (p *proxiedRequests) limit(next http.Handler) http.Handler {
	if len(p.trusted) == 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !p.trusted.contains(parseHostAddr(r.RemoteAddr)) {
			next.ServeHTTP(w, r)
			return
		}
		ip := p.trusted.clientIP(r)
		p.mu.Lock()
		over := p.n[ip] >= p.max
		if !over {
			p.n[ip]++
		}
		p.mu.Unlock()
		if over {
			p.refused()
			http.Error(w, "too many requests in flight from your address", http.StatusTooManyRequests)
			return
		}
		defer func() {
			p.mu.Lock()
			if p.n[ip]--; p.n[ip] <= 0 {
				delete(p.n, ip)
			}
			p.mu.Unlock()
		}()
		next.ServeHTTP(w, r)
	})
}
