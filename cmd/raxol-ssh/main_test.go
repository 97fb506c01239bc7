package main

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/server"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestFlagsAndEnvironment(t *testing.T) {
	var out bytes.Buffer
	o, lc, err := parse([]string{"--ssh-addr", "127.0.0.1:2300", "--idle-timeout", "5m"},
		env(map[string]string{
			"RAXOL_SSH_ADDR":                "127.0.0.1:9999", // the flag wins
			"RAXOL_HTTP_ADDR":               "127.0.0.1:9100",
			"RAXOL_METRICS_ADDR":            "127.0.0.1:9200",
			"RAXOL_MAX_PER_IP":              "3",
			"RAXOL_ENV":                     "prod",
			"RAXOL_AUTHORIZED_KEYS":         "/keys",
			"RAXOL_DATA_DIR":                "/data",
			"RAXOL_LOG_FORMAT":              "json",
			"RAXOL_MCP_CLIENT_IDLE_TIMEOUT": "45m",
			"RAXOL_GC_HEADROOM_MIB":         "64",
		}), &out)
	if err != nil {
		t.Fatal(err)
	}
	if o.SSH.Addr != "127.0.0.1:2300" || o.MCP.Addr != "127.0.0.1:9100" || o.MetricsAddr != "127.0.0.1:9200" || o.Limits.MaxPerIP != 3 ||
		o.Env != server.EnvProd || o.SSH.AuthorizedKeysFile != "/keys" || o.DataDir != "/data" ||
		o.Limits.IdleTimeout != 5*time.Minute || lc.format != "json" || o.MCP.ClientIdleTimeout != 45*time.Minute ||
		lc.gcHeadroomMiB != 64 {
		t.Fatalf("options %+v, log %+v", o, lc)
	}
}

func TestDefaults(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	o, lc, err := parse(nil, env(nil), &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if lc.gcHeadroomMiB != -1 {
		t.Errorf("--gc-headroom-mib defaults to %d, want -1 (gcpace.DefaultHeadroom)", lc.gcHeadroomMiB)
	}
	if o.SSH.Addr != "127.0.0.1:2222" || o.MCP.Addr != "127.0.0.1:8080" || o.MetricsAddr != "" || o.Env != server.EnvDev ||
		o.MCP.ClientIdleTimeout != 30*time.Minute {
		t.Fatalf("defaults %+v", o)
	}
	if filepath.Base(o.DataDir) != "raxol-ssh" || !filepath.IsAbs(o.DataDir) {
		t.Fatalf("data dir %q is not under the user config dir", o.DataDir)
	}
}

func TestBadInputIsNamed(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{args: []string{"--max-connections", "lots"}, want: "max-connections"},
		{env: map[string]string{"RAXOL_IDLE_TIMEOUT": "soon"}, want: "RAXOL_IDLE_TIMEOUT"},
		{args: []string{"--log-level", "loud"}, want: "--log-level"},
		{args: []string{"--log-format", "xml"}, want: "--log-format"},
		{args: []string{"extra"}, want: `unexpected argument "extra"`},
		{args: []string{"--gc-headroom-mib", "-5"}, want: "--gc-headroom-mib"},
		{env: map[string]string{"RAXOL_GC_HEADROOM_MIB": "much"}, want: "RAXOL_GC_HEADROOM_MIB"},
	} {
		var out bytes.Buffer
		_, _, err := parse(tc.args, env(tc.env), &out)
		if err == nil || !strings.Contains(err.Error()+out.String(), tc.want) {
			t.Errorf("%v %v: err=%v output=%q, want mention of %q", tc.args, tc.env, err, out.String(), tc.want)
		}
	}
}

func TestRunRefusesProdWithoutKeys(t *testing.T) {
	var out bytes.Buffer
	code := run(context.Background(), []string{"--env", "prod", "--data-dir", t.TempDir()}, env(nil), &out)
	if code == 0 || !strings.Contains(out.String(), "--authorized-keys") {
		t.Fatalf("exit %d, output %q", code, out.String())
	}
}

func TestRunServesAndDrains(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	var out testkit.SyncBuffer
	done := make(chan int)
	go func() {
		done <- run(ctx, []string{"--data-dir", dir, "--ssh-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0"}, env(nil), &out)
	}()
	testkit.Eventually(t, 10*time.Second, func() bool { return strings.Contains(out.String(), "raxol-ssh serving") },
		"no posture line: %s", &out)
	for _, want := range []string{"host_key_fingerprint=SHA256:", "auth=", "max_connections=1000"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("posture line lacks %q: %s", want, out.String())
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "ssh_host_ed25519_key")); err != nil {
		t.Fatalf("host key not under --data-dir: %v", err)
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit %d: %s", code, out.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatal("run did not return after cancel")
	}
}

// TestREADMEProductionPolicyBoots: the policy file the README shows for
// production loads, and a production server boots with it.
func TestREADMEProductionPolicyBoots(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(readme)
	start := strings.Index(text, "```json\n{\n  \"tools\"")
	if start < 0 {
		t.Fatal("README has no policy example")
	}
	body := text[start+len("```json\n"):]
	body = body[:strings.Index(body, "```")]
	dir := t.TempDir()
	policy := filepath.Join(dir, "policy.json")
	keys := filepath.Join(dir, "authorized_keys")
	if err := os.WriteFile(policy, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	pub := "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl test\n"
	if err := os.WriteFile(keys, []byte(pub), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var out testkit.SyncBuffer
	done := make(chan int)
	go func() {
		done <- run(ctx, []string{"--env", "prod", "--authorized-keys", keys, "--mcp-policy", policy,
			"--data-dir", filepath.Join(dir, "data"), "--ssh-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0"}, env(nil), &out)
	}()
	testkit.Eventually(t, 10*time.Second, func() bool {
		select {
		case code := <-done:
			t.Fatalf("exited %d: %s", code, out.String())
		default:
		}
		return strings.Contains(out.String(), "raxol-ssh serving")
	}, "did not boot: %s", &out)
	if !strings.Contains(out.String(), "rules from "+policy) {
		t.Errorf("posture line does not show the policy: %s", out.String())
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d", code)
	}
}

// TestFlagsUseTheLibraryDefaults: each flag's default is the server's
// exported default, so the binary and the library agree, and errors and
// the posture line name the flags for the option fields they set.
func TestFlagsUseTheLibraryDefaults(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	o, _, err := parse(nil, env(nil), &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	l := o.Limits
	if l.MaxConnections != server.DefaultMaxConnections || l.MaxPerIP != server.DefaultMaxPerIP ||
		l.MaxSessionsPerUser != server.DefaultMaxSessionsPerUser || l.MaxHTTPConnections != server.DefaultMaxHTTPConnections ||
		l.MaxHTTPPerIP != server.DefaultMaxHTTPPerIP || l.MaxChannelsPerConnection != server.DefaultMaxChannelsPerConnection ||
		l.HandshakeTimeout != server.DefaultHandshakeTimeout || l.IdleTimeout != server.DefaultIdleTimeout ||
		l.MaxSessionDuration != server.DefaultMaxSessionDuration || l.MaxAuthFailures != server.DefaultMaxAuthFailures ||
		l.AuthFailureWindow != server.DefaultAuthFailureWindow {
		t.Errorf("limit defaults %+v differ from the server's", l)
	}
	if o.SSH.ResumeGrace != server.DefaultResumeGrace || o.DrainTimeout != server.DefaultDrainTimeout ||
		o.MCP.LensMode != server.DefaultLensMode || o.MCP.MaxTools != server.DefaultMaxTools ||
		o.MCP.ToolCallsPerSecond != server.DefaultToolCallsPerSecond || o.MCP.ToolCallBurst != server.DefaultToolCallBurst ||
		o.MCP.MaxClients != server.DefaultMCPMaxClients || o.MCP.ClientIdleTimeout != server.DefaultClientIdleTimeout ||
		o.Headless.IdleTimeout != server.DefaultHeadlessIdleTimeout || o.Headless.MaxClients != server.DefaultHeadlessMaxClients {
		t.Errorf("option defaults %+v differ from the server's", o)
	}
	if dir, _ := server.DefaultDataDir(); o.DataDir != dir {
		t.Errorf("data dir %q, want the server's default %q", o.DataDir, dir)
	}
	for field, flag := range map[string]string{
		"Options.SSH.AuthorizedKeysFile": "--authorized-keys",
		"Options.MCP.AllowedTools":       "--mcp-allowed-tools",
		"Options.Headless.APIKeysFile":   "--api-keys",
		"Options.Limits.MaxPerIP":        "--max-per-ip",
		"App.ToolPolicy":                 "App.ToolPolicy", // no flag sets it
	} {
		if got := o.Setting(field); got != flag {
			t.Errorf("Setting(%q) = %q, want %q", field, got, flag)
		}
	}
	// --resume-grace 0 means none, which the library spells negative.
	o, _, err = parse([]string{"--resume-grace", "0"}, env(nil), &bytes.Buffer{})
	if err != nil || o.SSH.ResumeGrace >= 0 {
		t.Errorf("--resume-grace 0: %v, %v; want a negative grace", o.SSH.ResumeGrace, err)
	}
}

// TestProfilerIsLoopbackOnly: --pprof-addr refuses an address others can
// reach, and serves the profiler's index on a loopback one.
func TestProfilerIsLoopbackOnly(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "192.0.2.1:6060", "nonsense"} {
		if stop, err := serveProfiler(addr, slog.New(slog.DiscardHandler)); err == nil {
			stop()
			t.Errorf("serveProfiler(%q) accepted a non-loopback address", addr)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	stop, err := serveProfiler(addr, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	resp, err := http.Get("http://" + addr + "/debug/pprof/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("profiler index: %s", resp.Status)
	}
}
