package server_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/server"
)

// writeAuthorizedKeys writes an authorized_keys file listing keys.
func writeAuthorizedKeys(t testing.TB, path string, keys ...gossh.Signer) {
	t.Helper()
	var b strings.Builder
	b.WriteString("# test keys\n\n")
	for _, k := range keys {
		b.Write(gossh.MarshalAuthorizedKey(k.PublicKey()))
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestProdRequiresAuthorizedKeys: production never runs anonymous.
func TestProdRequiresAuthorizedKeys(t *testing.T) {
	t.Parallel()
	_, err := newServerOpts(t, server.Options{Env: server.EnvProd})
	if err == nil || !strings.Contains(err.Error(), "Options.SSH.AuthorizedKeysFile") {
		t.Fatalf("New(prod, no keys) = %v, want an error mentioning --authorized-keys", err)
	}
	// An empty file is no better.
	empty := filepath.Join(t.TempDir(), "authorized_keys")
	if err := os.WriteFile(empty, []byte("# nobody\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := newServerOpts(t, server.Options{Env: server.EnvProd, SSH: server.SSHOptions{AuthorizedKeysFile: empty}}); err == nil {
		t.Fatalf("New(prod, empty keys file) succeeded")
	}
}

// TestAuthorizedKeys: with an authorized_keys file only its keys get in,
// in production and in dev alike, and the file is re-read when it changes.
func TestAuthorizedKeys(t *testing.T) {
	t.Parallel()
	for _, env := range []string{server.EnvProd, server.EnvDev} {
		t.Run(env, func(t *testing.T) {
			t.Parallel()
			keyA, keyB := newKey(t), newKey(t)
			path := filepath.Join(t.TempDir(), "authorized_keys")
			writeAuthorizedKeys(t, path, keyA)
			srv := startServer(t, server.Options{Env: env, SSH: server.SSHOptions{AuthorizedKeysFile: path}})

			conn, err := dialSSH(t, srv.SSHAddr(), clientOpts{key: keyB})
			if err == nil {
				conn.Close()
				t.Fatalf("a client with an unlisted key authenticated")
			}
			t.Logf("unlisted key: %v", err)
			testkit.Eventually(t, waitShort, func() bool {
				return scrapeMetric(t, srv.HTTPAddr(), "raxol_ssh_auth_failures_total") >= 1
			}, "raxol_ssh_auth_failures_total did not count the failure")
			// Counted when the connection closes, just after the failure.
			testkit.Eventually(t, waitShort, func() bool {
				return scrapeMetric(t, srv.HTTPAddr(), `raxol_ssh_connections_total{outcome="auth_failed"}`) >= 1
			}, `raxol_ssh_connections_total{outcome="auth_failed"} did not count the failed connection`)

			// Keyboard-interactive is no way around the keys.
			cfg := &gossh.ClientConfig{
				User: "tester",
				Auth: []gossh.AuthMethod{gossh.KeyboardInteractive(func(string, string, []string, []bool) ([]string, error) {
					return nil, nil
				})},
				HostKeyCallback: gossh.InsecureIgnoreHostKey(),
				Timeout:         waitShort,
			}
			if conn, err := gossh.Dial("tcp", srv.SSHAddr(), cfg); err == nil {
				conn.Close()
				t.Fatalf("keyboard-interactive authenticated without a key")
			}

			a := connect(t, srv.SSHAddr(), clientOpts{key: keyA})
			waitDemo(t, a)
			sess := onlySession(t, srv)
			if want := gossh.FingerprintSHA256(keyA.PublicKey()); sess.Owner.KeyFingerprint != want {
				t.Errorf("session owner key %q, want %q", sess.Owner.KeyFingerprint, want)
			}

			// Adding B to the file lets B in without a restart.
			writeAuthorizedKeys(t, path, keyA, keyB)
			b := connect(t, srv.SSHAddr(), clientOpts{key: keyB})
			waitDemo(t, b)
		})
	}
}

// TestDevAnonymousOnlyOnLoopback: an anonymous dev server refuses a public
// address unless told otherwise.
func TestDevAnonymousOnlyOnLoopback(t *testing.T) {
	t.Parallel()
	_, err := newServerOpts(t, server.Options{SSH: server.SSHOptions{Addr: "0.0.0.0:0"}})
	if err == nil || !strings.Contains(err.Error(), "Options.SSH.AllowAnonymousPublic") {
		t.Fatalf("New(dev, 0.0.0.0, no keys) = %v, want an error mentioning --allow-anonymous-public", err)
	}
	// Created, not started: nothing listens on a public address.
	srv, err := newServerOpts(t, server.Options{SSH: server.SSHOptions{Addr: "0.0.0.0:0", AllowAnonymousPublic: true}})
	if err != nil {
		t.Fatalf("New(dev, 0.0.0.0, AllowAnonymousPublic) = %v", err)
	}
	if err := srv.Shutdown(context.Background()); err != nil {
		t.Errorf("Shutdown of an unstarted server: %v", err)
	}
	// With keys a public address is fine too.
	path := filepath.Join(t.TempDir(), "authorized_keys")
	writeAuthorizedKeys(t, path, newKey(t))
	if _, err := newServerOpts(t, server.Options{SSH: server.SSHOptions{Addr: "0.0.0.0:0", AuthorizedKeysFile: path}}); err != nil {
		t.Fatalf("New(dev, 0.0.0.0, keys) = %v", err)
	}
}

// TestDevKeyboardInteractive: a dev server also takes clients without a
// key; their sessions have no key fingerprint.
func TestDevKeyboardInteractive(t *testing.T) {
	t.Parallel()
	srv := startServer(t, server.Options{})
	cfg := &gossh.ClientConfig{
		User: "nokey",
		Auth: []gossh.AuthMethod{gossh.KeyboardInteractive(func(string, string, []string, []bool) ([]string, error) {
			return nil, nil
		})},
		HostKeyCallback: gossh.InsecureIgnoreHostKey(),
		Timeout:         waitShort,
	}
	conn, err := gossh.Dial("tcp", srv.SSHAddr(), cfg)
	if err != nil {
		t.Fatalf("keyboard-interactive on a dev server: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	c := connectOn(t, conn, clientOpts{})
	waitDemo(t, c)
	sess := onlySession(t, srv)
	if sess.Owner.User != "nokey" || sess.Owner.KeyFingerprint != "" {
		t.Errorf("owner %+v, want user nokey without a key", sess.Owner)
	}
}

// recordHostKey returns a host key callback that records the fingerprints
// it is shown.
func recordHostKey() (gossh.HostKeyCallback, func() []string) {
	var mu sync.Mutex
	var seen []string
	cb := func(_ string, _ net.Addr, key gossh.PublicKey) error {
		mu.Lock()
		seen = append(seen, gossh.FingerprintSHA256(key))
		mu.Unlock()
		return nil
	}
	return cb, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), seen...)
	}
}

// TestHostKeyReuse: a server restarted on the same data directory keeps
// its host key, so clients don't see a changed identity.
func TestHostKeyReuse(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()

	srv1 := startServer(t, server.Options{DataDir: dir})
	fp1 := srv1.HostKeyFingerprint()
	if !strings.HasPrefix(fp1, "SHA256:") {
		t.Fatalf("fingerprint %q", fp1)
	}
	cb, seen := recordHostKey()
	c1 := connect(t, srv1.SSHAddr(), clientOpts{hostKey: cb})
	waitDemo(t, c1)
	if got := seen(); len(got) != 1 || got[0] != fp1 {
		t.Fatalf("client saw host keys %v, server says %s", got, fp1)
	}
	c1.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := srv1.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}

	srv2 := startServer(t, server.Options{DataDir: dir})
	if fp2 := srv2.HostKeyFingerprint(); fp2 != fp1 {
		t.Fatalf("host key changed across restarts: %s, then %s", fp1, fp2)
	}
	cb2, seen2 := recordHostKey()
	c2 := connect(t, srv2.SSHAddr(), clientOpts{hostKey: cb2})
	waitDemo(t, c2)
	if got := seen2(); len(got) != 1 || got[0] != fp1 {
		t.Fatalf("client saw host keys %v after the restart, want %s", got, fp1)
	}

	// Another data directory is another identity.
	srv3, err := newServerOpts(t, server.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if srv3.HostKeyFingerprint() == fp1 {
		t.Errorf("a fresh data directory got the same host key")
	}
}

// TestFailedLoginsAreRateLimitedPerAddress: after MaxAuthFailures failed
// logins an address is refused, even with a good key, until it recovers;
// another address is not affected.
func TestFailedLoginsAreRateLimitedPerAddress(t *testing.T) {
	t.Parallel()
	good, bad := newKey(t), newKey(t)
	path := filepath.Join(t.TempDir(), "authorized_keys")
	writeAuthorizedKeys(t, path, good)
	srv := startServer(t, server.Options{Env: server.EnvProd, SSH: server.SSHOptions{AuthorizedKeysFile: path}, Limits: server.Limits{MaxAuthFailures: 3, AuthFailureWindow: 3 * time.Second}})
	for i := range 3 {
		if conn, err := dialSSH(t, srv.SSHAddr(), clientOpts{key: bad, local: "127.0.0.1"}); err == nil {
			conn.Close()
			t.Fatalf("attempt %d with a bad key authenticated", i)
		}
	}
	testkit.Eventually(t, waitShort, func() bool {
		return scrapeMetric(t, srv.HTTPAddr(), "raxol_ssh_auth_failures_total") >= 3
	}, "failures counted")
	if conn, err := dialSSH(t, srv.SSHAddr(), clientOpts{key: good, local: "127.0.0.1"}); err == nil {
		conn.Close()
		t.Fatal("an address over its failed-login limit was let in")
	}
	if v := scrapeMetric(t, srv.HTTPAddr(), `raxol_ssh_limit_rejections_total{limit="auth_failures"}`); v < 1 {
		t.Fatalf("auth_failures rejections = %v", v)
	}
	// Another address is unaffected.
	c := connect(t, srv.SSHAddr(), clientOpts{key: good, local: "127.0.0.2"})
	waitDemo(t, c)
	// The address recovers as its failures refill (3 per 3s).
	testkit.Eventually(t, 5*time.Second, func() bool {
		conn, err := dialSSH(t, srv.SSHAddr(), clientOpts{key: good, local: "127.0.0.1"})
		if err == nil {
			conn.Close()
		}
		return err == nil
	}, "the address to recover")
	// Let the server see the probes close before the cleanup's Shutdown:
	// charm ssh's Shutdown waits on a WaitGroup that a handshake still
	// finishing adds to, which the race detector reports.
	testkit.Eventually(t, waitShort, func() bool { return srv.SSHConnections() == 1 }, "the closed connections to be released")
}

// badSigner claims key's public key but signs with something else: the
// client sends a real signed publickey request whose signature does not
// verify.
type badSigner struct {
	key  gossh.PublicKey
	sign func(data []byte) (*gossh.Signature, error)
}

func (b badSigner) PublicKey() gossh.PublicKey { return b.key }

func (b badSigner) Sign(_ io.Reader, data []byte) (*gossh.Signature, error) { return b.sign(data) }

// dialWith connects from local with auth and returns the error.
func dialWith(t testing.TB, addr, local string, auth ...gossh.AuthMethod) error {
	t.Helper()
	d := net.Dialer{Timeout: waitShort, LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}
	nc, err := d.Dial("tcp", addr)
	if err != nil {
		return err
	}
	_ = nc.SetDeadline(time.Now().Add(waitLong))
	c, chans, reqs, err := gossh.NewClientConn(nc, addr, &gossh.ClientConfig{
		User: "tester", Auth: auth, HostKeyCallback: gossh.InsecureIgnoreHostKey(), Timeout: waitShort,
	})
	if err != nil {
		_ = nc.Close()
		return err
	}
	_ = gossh.NewClient(c, chans, reqs).Close()
	return nil
}

// TestBadSignatureIsAFailedLogin: a client offering an acceptable key
// with a signature that does not verify fails a login, counted and
// spending its address's budget; enough of them block the address even
// for the right key. Another address is unaffected.
func TestBadSignatureIsAFailedLogin(t *testing.T) {
	t.Parallel()
	other := newKey(t)
	for name, tc := range map[string]struct {
		env  string
		sign func(data []byte) (*gossh.Signature, error)
	}{
		"another key's signature": {server.EnvProd, func(data []byte) (*gossh.Signature, error) {
			return other.Sign(rand.Reader, data)
		}},
		"garbage signature": {server.EnvProd, func([]byte) (*gossh.Signature, error) {
			blob := make([]byte, ed25519.SignatureSize)
			_, _ = rand.Read(blob)
			return &gossh.Signature{Format: gossh.KeyAlgoED25519, Blob: blob}, nil
		}},
		"short signature": {server.EnvProd, func([]byte) (*gossh.Signature, error) {
			return &gossh.Signature{Format: gossh.KeyAlgoED25519, Blob: []byte("x")}, nil
		}},
		// A dev server without authorized keys takes any key, but the
		// client must still prove it.
		"dev, another key's signature": {server.EnvDev, func(data []byte) (*gossh.Signature, error) {
			return other.Sign(rand.Reader, data)
		}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			good := newKey(t)
			opts := server.Options{Env: tc.env, Limits: server.Limits{MaxAuthFailures: 3, AuthFailureWindow: time.Hour}}
			if tc.env == server.EnvProd {
				opts.SSH.AuthorizedKeysFile = filepath.Join(t.TempDir(), "authorized_keys")
				writeAuthorizedKeys(t, opts.SSH.AuthorizedKeysFile, good)
			}
			srv := startServer(t, opts)
			bad := gossh.PublicKeys(badSigner{key: good.PublicKey(), sign: tc.sign})
			for i := range 3 {
				if err := dialWith(t, srv.SSHAddr(), "127.0.0.1", bad); err == nil {
					t.Fatalf("attempt %d with a bad signature authenticated", i)
				}
			}
			testkit.Eventually(t, waitShort, func() bool {
				return scrapeMetric(t, srv.HTTPAddr(), "raxol_ssh_auth_failures_total") == 3
			}, "raxol_ssh_auth_failures_total to count 3 bad signatures, have %v", scrapeMetric(t, srv.HTTPAddr(), "raxol_ssh_auth_failures_total"))
			testkit.Eventually(t, waitShort, func() bool {
				return scrapeMetric(t, srv.HTTPAddr(), `raxol_ssh_connections_total{outcome="auth_failed"}`) == 3
			}, `raxol_ssh_connections_total{outcome="auth_failed"} to count 3 bad signatures`)
			if err := dialWith(t, srv.SSHAddr(), "127.0.0.1", gossh.PublicKeys(good)); err == nil {
				t.Fatal("an address with 3 bad signatures (the budget) was let in")
			}
			if v := scrapeMetric(t, srv.HTTPAddr(), `raxol_ssh_limit_rejections_total{limit="auth_failures"}`); v < 1 {
				t.Fatalf("auth_failures rejections = %v", v)
			}
			if err := dialWith(t, srv.SSHAddr(), "127.0.0.2", gossh.PublicKeys(good)); err != nil {
				t.Fatalf("another address: %v", err)
			}
		})
	}
}

// TestKeyQueriesAreNotFailedLogins: a client that offers keys the server
// does not take before the right one (as clients with several keys do)
// logs in every time, and spends none of its address's budget.
func TestKeyQueriesAreNotFailedLogins(t *testing.T) {
	t.Parallel()
	good := newKey(t)
	path := filepath.Join(t.TempDir(), "authorized_keys")
	writeAuthorizedKeys(t, path, good)
	srv := startServer(t, server.Options{Env: server.EnvProd, SSH: server.SSHOptions{AuthorizedKeysFile: path}, Limits: server.Limits{MaxAuthFailures: 2, AuthFailureWindow: time.Hour}})
	for i := range 6 {
		if err := dialWith(t, srv.SSHAddr(), "127.0.0.1", gossh.PublicKeys(newKey(t), newKey(t), good)); err != nil {
			t.Fatalf("login %d offering two unknown keys first: %v", i, err)
		}
	}
	if v := scrapeMetric(t, srv.HTTPAddr(), "raxol_ssh_auth_failures_total"); v != 0 {
		t.Fatalf("raxol_ssh_auth_failures_total = %v after logins that only queried unknown keys, want 0", v)
	}
	c := connect(t, srv.SSHAddr(), clientOpts{key: good, local: "127.0.0.1"})
	waitDemo(t, c)
}
