package server_test

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pires/go-proxyproto"
	gossh "golang.org/x/crypto/ssh"

	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/server"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// proxyV1 is the PROXY protocol v1 header a load balancer would send for
// a client at src (an "ip:port").
func proxyV1(t testing.TB, src string) []byte {
	t.Helper()
	ap := netip.MustParseAddrPort(src)
	return fmt.Appendf(nil, "PROXY TCP4 %s 127.0.0.1 %d 2222\r\n", ap.Addr(), ap.Port())
}

// proxyV2 is the binary PROXY protocol v2 header for a client at src.
func proxyV2(t testing.TB, src string) []byte {
	t.Helper()
	ap := netip.MustParseAddrPort(src)
	h := proxyproto.Header{
		Version:           2,
		Command:           proxyproto.PROXY,
		TransportProtocol: proxyproto.TCPv4,
		SourceAddr:        net.TCPAddrFromAddrPort(ap),
		DestinationAddr:   &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 2222},
	}
	b, err := h.Format()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// dialWithHeader opens a TCP connection to addr from the local address
// local, sends header (nil: none) as a proxy would, and logs in over it
// with a real SSH client.
func dialWithHeader(t testing.TB, addr, local string, header []byte, o clientOpts) (*gossh.Client, error) {
	t.Helper()
	if o.user == "" {
		o.user = "tester"
	}
	if o.key == nil {
		o.key = newKey(t)
	}
	d := net.Dialer{Timeout: waitShort, LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}
	nc, err := d.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	_ = nc.SetDeadline(time.Now().Add(waitLong))
	if header != nil {
		if _, err := nc.Write(header); err != nil {
			_ = nc.Close()
			return nil, err
		}
	}
	cfg := &gossh.ClientConfig{User: o.user, Auth: []gossh.AuthMethod{gossh.PublicKeys(o.key)},
		HostKeyCallback: gossh.InsecureIgnoreHostKey(), Timeout: waitShort}
	c, chans, reqs, err := gossh.NewClientConn(nc, addr, cfg)
	if err != nil {
		_ = nc.Close()
		return nil, err
	}
	_ = nc.SetDeadline(time.Time{})
	cl := gossh.NewClient(c, chans, reqs)
	t.Cleanup(func() { _ = cl.Close() })
	return cl, nil
}

// connectWithHeader is dialWithHeader plus a shell, as connect.
func connectWithHeader(t testing.TB, addr, local string, header []byte, o clientOpts) *client {
	t.Helper()
	conn, err := dialWithHeader(t, addr, local, header, o)
	if err != nil {
		t.Fatalf("dial %s from %s with header %q: %v", addr, local, header, err)
	}
	c := connectOn(t, conn, o)
	c.ownsConn = true
	return c
}

// identityOf returns the identity the app was given for user's session.
func identityOf(t testing.TB, seen func() []ui.Identity, user string) ui.Identity {
	t.Helper()
	for _, id := range seen() {
		if id.User == user {
			return id
		}
	}
	t.Fatalf("no session of %q among %+v", user, seen())
	return ui.Identity{}
}

// teeLogger logs to the test's log and to logs.
func teeLogger(t testing.TB, logs io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(io.MultiWriter(logs, testkit.NewLogWriter(t)), &slog.HandlerOptions{Level: slog.LevelDebug}))
}

func loopbackProxy() []netip.Prefix { return []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")} }

// TestProxyProtocolGivesTheClientAddress: behind a trusted load balancer
// (127.0.0.1) every client connects from the balancer's address, yet the
// per-address cap counts the address of the PROXY header (v1 and v2): a
// second client claiming 203.0.113.7 is over a cap of 1 while
// 203.0.113.8 gets in; the app's identity and the session's log line show
// the claimed address. The balancer itself must send a header (a v2
// LOCAL one leaves its own address; a health check that sends nothing is
// logged at debug only); a client from another address is served
// directly with its own.
func TestProxyProtocolGivesTheClientAddress(t *testing.T) {
	t.Parallel()
	var logs testkit.SyncBuffer
	srv, seen := whoServer(t, server.Options{
		SSH:    server.SSHOptions{ProxyProtocol: true, TrustedProxies: loopbackProxy()},
		Limits: server.Limits{MaxPerIP: 1},
		Logger: teeLogger(t, &logs),
	})
	if line := postureLine(t, &logs); !strings.Contains(line, `ssh_proxy_protocol="required from 127.0.0.1/32`) {
		t.Errorf("posture line does not show the PROXY protocol:\n%s", line)
	}
	alice := connectWithHeader(t, srv.SSHAddr(), "127.0.0.1", proxyV1(t, "203.0.113.7:40001"), clientOpts{user: "alice"})
	alice.WaitFor(t, "user=alice", waitLong)

	// Same claimed address, over its cap of 1: refused with the address
	// named, though the TCP peer is the balancer's as for everyone.
	bob := connectWithHeader(t, srv.SSHAddr(), "127.0.0.1", proxyV1(t, "203.0.113.7:40002"), clientOpts{user: "bob"})
	requireRefused(t, bob, "too many connections from 203.0.113.7")

	// Another claimed address (in a v2 header) is another client.
	carol := connectWithHeader(t, srv.SSHAddr(), "127.0.0.1", proxyV2(t, "203.0.113.8:40003"), clientOpts{user: "carol"})
	carol.WaitFor(t, "user=carol", waitLong)

	if id := identityOf(t, seen, "alice"); id.RemoteAddr != "203.0.113.7:40001" {
		t.Errorf("alice's RemoteAddr %q, want the PROXY v1 header's 203.0.113.7:40001", id.RemoteAddr)
	}
	if id := identityOf(t, seen, "carol"); id.RemoteAddr != "203.0.113.8:40003" {
		t.Errorf("carol's RemoteAddr %q, want the PROXY v2 header's 203.0.113.8:40003", id.RemoteAddr)
	}
	for _, id := range seen() {
		if id.User == "bob" {
			t.Errorf("bob, over the cap, got a session: %+v", id)
		}
	}

	// A direct client from an address that is no proxy is served with its
	// own address, alongside.
	dave := connectWithHeader(t, srv.SSHAddr(), "127.0.0.2", nil, clientOpts{user: "dave"})
	dave.WaitFor(t, "user=dave", waitLong)
	if id := identityOf(t, seen, "dave"); !strings.HasPrefix(id.RemoteAddr, "127.0.0.2:") {
		t.Errorf("direct client's RemoteAddr %q, want 127.0.0.2:…", id.RemoteAddr)
	}
	// The balancer without a header is refused: it would be counted as
	// one client for all.
	if _, err := dialWithHeader(t, srv.SSHAddr(), "127.0.0.1", nil, clientOpts{}); err == nil {
		t.Error("a connection from the trusted proxy without a PROXY header was served")
	}
	testkit.Eventually(t, waitLong, func() bool { return strings.Contains(logs.String(), "no valid PROXY protocol header") },
		"no log of the refused headerless proxy connection:\n%s", &logs)

	alice.Close()
	testkit.Eventually(t, waitLong, func() bool {
		for _, l := range strings.Split(logs.String(), "\n") {
			if strings.Contains(l, `msg="ssh session ended"`) && strings.Contains(l, "user=alice") {
				return strings.Contains(l, "remote=203.0.113.7:40001")
			}
		}
		return false
	}, "alice's session-ended line does not show 203.0.113.7:40001:\n%s", &logs)
	// Her slot is the claimed address's: freed, it admits that address again.
	waitConnections(t, srv, 2)
	again := connectWithHeader(t, srv.SSHAddr(), "127.0.0.1", proxyV1(t, "203.0.113.7:40004"), clientOpts{user: "erin"})
	again.WaitFor(t, "user=erin", waitLong)

	// A v2 LOCAL header (the balancer speaking for itself) leaves the
	// balancer's address.
	local, err := (&proxyproto.Header{Version: 2, Command: proxyproto.LOCAL}).Format()
	if err != nil {
		t.Fatal(err)
	}
	probe := connectWithHeader(t, srv.SSHAddr(), "127.0.0.1", local, clientOpts{user: "probe"})
	probe.WaitFor(t, "user=probe", waitLong)
	if id := identityOf(t, seen, "probe"); !strings.HasPrefix(id.RemoteAddr, "127.0.0.1:") {
		t.Errorf("LOCAL header: RemoteAddr %q, want the balancer's 127.0.0.1:…", id.RemoteAddr)
	}
	// A TCP health check that connects and closes is no warning.
	hc, err := (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.1")}}).Dial("tcp", srv.SSHAddr())
	if err != nil {
		t.Fatal(err)
	}
	hc.Close()
	testkit.Eventually(t, waitLong, func() bool { return strings.Contains(logs.String(), "closed without sending a PROXY protocol header") },
		"no log of the health check's connection:\n%s", &logs)
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, "closed without sending") && !strings.Contains(l, "level=DEBUG") {
			t.Errorf("a health check's connection is logged above debug: %s", l)
		}
	}
}

// TestProxyProtocolFailedLoginsCountTheClient: failed logins through the
// balancer (an unknown key, and a known key whose signature does not
// verify, which is told apart by the connection's auth trace) spend the
// claimed address's failed-login budget, so that address is refused
// afterwards while another client of the same balancer still logs in.
func TestProxyProtocolFailedLoginsCountTheClient(t *testing.T) {
	t.Parallel()
	good, other := newKey(t), newKey(t)
	keys := filepath.Join(t.TempDir(), "authorized_keys")
	writeAuthorizedKeys(t, keys, good)
	srv := startServer(t, server.Options{
		SSH:    server.SSHOptions{AuthorizedKeysFile: keys, ProxyProtocol: true, TrustedProxies: loopbackProxy()},
		Limits: server.Limits{MaxAuthFailures: 2, AuthFailureWindow: time.Hour},
	})
	if _, err := dialWithHeader(t, srv.SSHAddr(), "127.0.0.1", proxyV1(t, "203.0.113.7:40001"), clientOpts{}); err == nil {
		t.Fatal("an unknown key logged in")
	}
	bad := badSigner{key: good.PublicKey(), sign: func(data []byte) (*gossh.Signature, error) { return other.Sign(rand.Reader, data) }}
	if _, err := dialWithHeader(t, srv.SSHAddr(), "127.0.0.1", proxyV2(t, "203.0.113.7:40002"), clientOpts{key: bad}); err == nil {
		t.Fatal("a bad signature logged in")
	}
	testkit.Eventually(t, waitShort, func() bool {
		return scrapeMetric(t, srv.HTTPAddr(), "raxol_ssh_auth_failures_total") == 2
	}, "raxol_ssh_auth_failures_total to count both failed logins, have %v", scrapeMetric(t, srv.HTTPAddr(), "raxol_ssh_auth_failures_total"))
	if _, err := dialWithHeader(t, srv.SSHAddr(), "127.0.0.1", proxyV1(t, "203.0.113.7:40003"), clientOpts{key: good}); err == nil {
		t.Fatal("203.0.113.7 still logs in after using up its failed logins")
	}
	if v := scrapeMetric(t, srv.HTTPAddr(), `raxol_ssh_limit_rejections_total{limit="auth_failures"}`); v < 1 {
		t.Errorf(`raxol_ssh_limit_rejections_total{limit="auth_failures"} = %v, want >= 1`, v)
	}
	if _, err := dialWithHeader(t, srv.SSHAddr(), "127.0.0.1", proxyV2(t, "203.0.113.8:40004"), clientOpts{key: good}); err != nil {
		t.Fatalf("another client of the balancer was refused for 203.0.113.7's failures: %v", err)
	}
}

// TestProxyHeaderFromAnUntrustedAddressIsRefused: only 10.0.0.0/8 may
// send PROXY headers; a client at 127.0.0.1 that sends one (claiming
// 203.0.113.7, in v1 or v2) is refused, and the claimed address appears
// nowhere: not in an identity, not in the logs, which name the client's
// real address. Without a header the same client is served directly.
func TestProxyHeaderFromAnUntrustedAddressIsRefused(t *testing.T) {
	t.Parallel()
	var logs testkit.SyncBuffer
	srv, seen := whoServer(t, server.Options{
		SSH:    server.SSHOptions{ProxyProtocol: true, TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}},
		Logger: teeLogger(t, &logs),
	})
	for name, header := range map[string][]byte{"v1": proxyV1(t, "203.0.113.7:40001"), "v2": proxyV2(t, "203.0.113.7:40002")} {
		if _, err := dialWithHeader(t, srv.SSHAddr(), "127.0.0.1", header, clientOpts{user: "mallory-" + name}); err == nil {
			t.Errorf("a PROXY %s header from an untrusted address was served", name)
		}
	}
	testkit.Eventually(t, waitLong, func() bool {
		return strings.Count(logs.String(), "a PROXY protocol header from an address not in") == 2
	}, "want two refusals logged:\n%s", &logs)
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, "a PROXY protocol header from an address not in") && !strings.Contains(l, "remote=127.0.0.1:") {
			t.Errorf("refusal line does not name the real client address: %s", l)
		}
	}
	honest := connectWithHeader(t, srv.SSHAddr(), "127.0.0.1", nil, clientOpts{user: "honest"})
	honest.WaitFor(t, "user=honest", waitLong)
	if id := identityOf(t, seen, "honest"); !strings.HasPrefix(id.RemoteAddr, "127.0.0.1:") {
		t.Errorf("direct client's RemoteAddr %q, want 127.0.0.1:…", id.RemoteAddr)
	}
	for _, id := range seen() {
		if strings.HasPrefix(id.User, "mallory") || strings.Contains(id.RemoteAddr, "203.0.113.7") {
			t.Errorf("a spoofing client got a session: %+v", id)
		}
	}
	if strings.Contains(logs.String(), "203.0.113.7") {
		t.Errorf("the claimed address reached the logs:\n%s", logs.String())
	}
	waitConnections(t, srv, 1) // the refused connections gave their slots back
}

// TestProxyProtocolNeedsTrustedProxies: turning the PROXY protocol on
// without saying whose headers to believe is an OptionError naming
// TrustedProxies (anyone could claim any address otherwise); so is a
// prefix that is no prefix, on either side.
func TestProxyProtocolNeedsTrustedProxies(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		opts  server.Options
		field string
	}{
		{"no trusted proxies", server.Options{SSH: server.SSHOptions{ProxyProtocol: true}}, "Options.SSH.TrustedProxies"},
		{"invalid SSH prefix", server.Options{SSH: server.SSHOptions{ProxyProtocol: true, TrustedProxies: []netip.Prefix{{}}}}, "Options.SSH.TrustedProxies"},
		{"invalid HTTP prefix", server.Options{MCP: server.MCPOptions{TrustedProxies: []netip.Prefix{{}}}}, "Options.MCP.TrustedProxies"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := newServerOpts(t, tc.opts)
			var oe *server.OptionError
			if !errors.As(err, &oe) || oe.Field != tc.field {
				t.Fatalf("New = %v, want an *OptionError for %s", err, tc.field)
			}
			if !strings.Contains(err.Error(), tc.field) {
				t.Errorf("error %q does not name %s", err, tc.field)
			}
		})
	}
	// Named by the setting's own name when Options.Setting names it.
	_, err := newServerOpts(t, server.Options{SSH: server.SSHOptions{ProxyProtocol: true},
		Setting: func(f string) string {
			return map[string]string{"Options.SSH.ProxyProtocol": "--p", "Options.SSH.TrustedProxies": "--t"}[f]
		}})
	if err == nil || !strings.Contains(err.Error(), "--t: required when --p is set") {
		t.Errorf("New = %v, want it to name --t and --p", err)
	}
}
