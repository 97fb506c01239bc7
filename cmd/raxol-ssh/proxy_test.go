package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
)

func mustPrefixes(ss ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParsePrefix(s)
	}
	return out
}

// TestLoadBalancerFlagsAndEnvironment: --ssh-proxy-protocol,
// --ssh-trusted-proxies and --http-trusted-proxies, and their RAXOL_*
// variables, set the options; an address alone is its own prefix; the
// flag wins over the environment; errors and the posture name the flags.
func TestLoadBalancerFlagsAndEnvironment(t *testing.T) {
	o, _, err := parse([]string{"--ssh-proxy-protocol", "--ssh-trusted-proxies", "10.0.0.0/8, 192.0.2.1,2001:db8::/32"},
		env(map[string]string{
			"RAXOL_SSH_TRUSTED_PROXIES":  "172.16.0.0/12", // the flag wins
			"RAXOL_HTTP_TRUSTED_PROXIES": "127.0.0.1,::1",
		}), &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if !o.SSH.ProxyProtocol || !slices.Equal(o.SSH.TrustedProxies, mustPrefixes("10.0.0.0/8", "192.0.2.1/32", "2001:db8::/32")) ||
		!slices.Equal(o.MCP.TrustedProxies, mustPrefixes("127.0.0.1/32", "::1/128")) {
		t.Fatalf("proxy protocol %v, SSH trusted %v, HTTP trusted %v", o.SSH.ProxyProtocol, o.SSH.TrustedProxies, o.MCP.TrustedProxies)
	}
	o, _, err = parse(nil, env(map[string]string{
		"RAXOL_SSH_PROXY_PROTOCOL":  "true",
		"RAXOL_SSH_TRUSTED_PROXIES": "172.16.0.0/12",
	}), &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if !o.SSH.ProxyProtocol || !slices.Equal(o.SSH.TrustedProxies, mustPrefixes("172.16.0.0/12")) || o.MCP.TrustedProxies != nil {
		t.Fatalf("from the environment: proxy protocol %v, SSH trusted %v, HTTP trusted %v", o.SSH.ProxyProtocol, o.SSH.TrustedProxies, o.MCP.TrustedProxies)
	}
	o, _, err = parse(nil, env(nil), &bytes.Buffer{})
	if err != nil || o.SSH.ProxyProtocol || o.SSH.TrustedProxies != nil || o.MCP.TrustedProxies != nil {
		t.Fatalf("defaults: %v; proxy protocol %v, trusted %v, %v", err, o.SSH.ProxyProtocol, o.SSH.TrustedProxies, o.MCP.TrustedProxies)
	}
	for field, flag := range map[string]string{
		"Options.SSH.ProxyProtocol":  "--ssh-proxy-protocol",
		"Options.SSH.TrustedProxies": "--ssh-trusted-proxies",
		"Options.MCP.TrustedProxies": "--http-trusted-proxies",
	} {
		if got := o.Setting(field); got != flag {
			t.Errorf("Setting(%q) = %q, want %q", field, got, flag)
		}
	}
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{args: []string{"--ssh-trusted-proxies", "10.0.0.0/33"}, want: "ssh-trusted-proxies"},
		{args: []string{"--http-trusted-proxies", "proxy.example"}, want: "http-trusted-proxies"},
		{env: map[string]string{"RAXOL_HTTP_TRUSTED_PROXIES": "nonsense"}, want: "RAXOL_HTTP_TRUSTED_PROXIES"},
		{env: map[string]string{"RAXOL_SSH_PROXY_PROTOCOL": "maybe"}, want: "RAXOL_SSH_PROXY_PROTOCOL"},
	} {
		var out bytes.Buffer
		_, _, err := parse(tc.args, env(tc.env), &out)
		if err == nil || !strings.Contains(err.Error()+out.String(), tc.want) {
			t.Errorf("%v %v: err=%v output=%q, want mention of %q", tc.args, tc.env, err, out.String(), tc.want)
		}
	}
}

// TestRunRefusesProxyProtocolWithoutTrustedProxies: the error names both
// flags.
func TestRunRefusesProxyProtocolWithoutTrustedProxies(t *testing.T) {
	var out bytes.Buffer
	code := run(context.Background(), []string{"--ssh-proxy-protocol", "--data-dir", t.TempDir()}, env(nil), &out)
	if code == 0 || !strings.Contains(out.String(), "--ssh-trusted-proxies: required when --ssh-proxy-protocol is set") {
		t.Fatalf("exit %d, output %q", code, out.String())
	}
}

// TestPostureShowsTheTrustedProxies: the posture line says whose PROXY
// headers and X-Forwarded-For are believed.
func TestPostureShowsTheTrustedProxies(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var out testkit.SyncBuffer
	done := make(chan int)
	go func() {
		done <- run(ctx, []string{"--data-dir", t.TempDir(), "--ssh-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0",
			"--ssh-proxy-protocol", "--ssh-trusted-proxies", "10.0.0.0/8", "--http-trusted-proxies", "127.0.0.1"}, env(nil), &out)
	}()
	testkit.Eventually(t, 10*time.Second, func() bool { return strings.Contains(out.String(), "raxol-ssh serving") },
		"no posture line: %s", &out)
	for _, want := range []string{`ssh_proxy_protocol="required from 10.0.0.0/8`, `http_trusted_proxies="127.0.0.1/32 (X-Forwarded-For believed from them)"`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("posture line lacks %s: %s", want, out.String())
		}
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d: %s", code, out.String())
	}
}

// TestAllowedHostsFlagAdmitsTheHost: --mcp-allowed-hosts (and
// RAXOL_MCP_ALLOWED_HOSTS) reach the server: behind a reverse proxy that
// forwards the public Host, a real initialize on /mcp with that Host is
// served, one with another name is refused by the DNS-rebinding check.
func TestAllowedHostsFlagAdmitsTheHost(t *testing.T) {
	o, _, err := parse(nil, env(map[string]string{"RAXOL_MCP_ALLOWED_HOSTS": "a.example, b.example:8443"}), &bytes.Buffer{})
	if err != nil || !slices.Equal(o.MCP.AllowedHosts, []string{"a.example", "b.example:8443"}) {
		t.Errorf("RAXOL_MCP_ALLOWED_HOSTS: %v %v", o.MCP.AllowedHosts, err)
	}
	if got := o.Setting("Options.MCP.AllowedHosts"); got != "--mcp-allowed-hosts" {
		t.Errorf("Setting(Options.MCP.AllowedHosts) = %q", got)
	}

	dir := t.TempDir()
	keys := filepath.Join(dir, "api_keys")
	const key = "0123456789abcdef0123456789abcdef"
	if err := os.WriteFile(keys, []byte(key+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	httpAddr, _ := bootCommand(t, []string{"--data-dir", filepath.Join(dir, "data"), "--ssh-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0",
		"--api-keys", keys, "--mcp-allowed-hosts", "raxol.example.com"}, env(nil))
	initialize := func(host string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, "http://"+httpAddr+"/mcp", strings.NewReader(
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"proxied","version":"1"}}}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		cl := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
		resp, err := cl.Do(req)
		if err != nil {
			t.Fatalf("Host %s: %v", host, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, host := range []string{"raxol.example.com", "raxol.example.com:443"} {
		if code, body := initialize(host); code != http.StatusOK || !strings.Contains(body, `"protocolVersion"`) {
			t.Errorf("Host %s: %d %q, want an initialize result", host, code, body)
		}
	}
	if code, body := initialize("evil.example"); code != http.StatusForbidden || !strings.Contains(body, "DNS rebinding") {
		t.Errorf("Host evil.example: %d %q, want 403", code, body)
	}
}
