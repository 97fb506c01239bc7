package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/raxol-ssh/raxol-ssh/internal/natstest"
	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	rserver "github.com/raxol-ssh/raxol-ssh/server"
)

const (
	composePath = "../../deploy/cluster/compose.yml"
	haproxyPath = "../../deploy/cluster/haproxy.cfg"
)

// composeServices reads compose.yml's services, each as the lines of its
// block (a line-based reading: the file keeps one list item a line).
func composeServices(t *testing.T) map[string][]string {
	t.Helper()
	b, err := os.ReadFile(composePath)
	if err != nil {
		t.Fatal(err)
	}
	services := map[string][]string{}
	in, cur := false, ""
	for line := range strings.SplitSeq(string(b), "\n") {
		switch {
		case line == "services:":
			in = true
		case in && line != "" && line[0] != ' ' && line[0] != '#':
			in = false // the next top-level key
		case in && strings.HasPrefix(line, "  ") && !strings.HasPrefix(line, "   ") && strings.HasSuffix(line, ":"):
			cur = strings.TrimSuffix(strings.TrimSpace(line), ":")
			services[cur] = nil
		case in && cur != "" && strings.HasPrefix(line, "    "):
			services[cur] = append(services[cur], line)
		}
	}
	return services
}

// listOf returns the items of the service key's block list ("    key:"
// followed by "      - item" lines), unquoted.
func listOf(block []string, key string) []string {
	var items []string
	in := false
	for _, line := range block {
		if line == "    "+key+":" {
			in = true
			continue
		}
		if in {
			item, ok := strings.CutPrefix(line, "      - ")
			if !ok {
				break
			}
			items = append(items, strings.Trim(item, `"`))
		}
	}
	return items
}

var ipv4Re = regexp.MustCompile(`^\s+ipv4_address: (\S+)$`)

// addressOf returns the service's fixed address on the compose network.
func addressOf(t *testing.T, block []string) netip.Addr {
	t.Helper()
	for _, line := range block {
		if m := ipv4Re.FindStringSubmatch(line); m != nil {
			return netip.MustParseAddr(m[1])
		}
	}
	t.Fatalf("no ipv4_address in %q", block)
	return netip.Addr{}
}

// entrypoint returns the Dockerfile's ENTRYPOINT, which a compose
// command follows.
func entrypoint(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "ENTRYPOINT "); ok {
			var ep []string
			if err := json.Unmarshal([]byte(rest), &ep); err != nil {
				t.Fatalf("ENTRYPOINT %s: %v", rest, err)
			}
			return ep
		}
	}
	t.Fatal("no ENTRYPOINT in the Dockerfile")
	return nil
}

// haproxyServers returns the "server" lines of each backend of
// haproxy.cfg, and the backends' other lines.
func haproxyServers(t *testing.T) (servers, other map[string][]string) {
	t.Helper()
	b, err := os.ReadFile(haproxyPath)
	if err != nil {
		t.Fatal(err)
	}
	servers, other = map[string][]string{}, map[string][]string{}
	section := ""
	for line := range strings.SplitSeq(string(b), "\n") {
		switch {
		case line == "" || strings.HasPrefix(strings.TrimSpace(line), "#"):
		case line[0] != ' ':
			section = line
		case strings.HasPrefix(strings.TrimSpace(line), "server "):
			servers[section] = append(servers[section], strings.Join(strings.Fields(line), " "))
		default:
			other[section] = append(other[section], strings.Join(strings.Fields(line), " "))
		}
	}
	return servers, other
}

// TestComposeCluster: every raxol-ssh node of deploy/cluster/compose.yml,
// as the Dockerfile's ENTRYPOINT followed by its command, goes through
// the binary's own flag parsing, agrees with the rest of compose.yml and
// with haproxy.cfg, and boots: the three join one cluster on a real
// (embedded) NATS with the secret the documented one-liner makes, and
// report ready. Only what cannot exist here is replaced: the data
// directory, the NATS URL and the secret's path.
func TestComposeCluster(t *testing.T) {
	services := composeServices(t)
	var nodes []string
	for name, block := range services {
		if slices.Contains(block, "    <<: *node") {
			nodes = append(nodes, name)
		}
	}
	slices.Sort(nodes)
	if len(nodes) != 3 {
		t.Fatalf("compose.yml has raxol-ssh nodes %q; want three", nodes)
	}
	for _, s := range []string{"nats", "haproxy", "secret"} {
		if _, ok := services[s]; !ok {
			t.Fatalf("compose.yml has no %s service", s)
		}
	}
	haproxyIP := addressOf(t, services["haproxy"])
	servers, backends := haproxyServers(t)
	ep := entrypoint(t)

	secretDir := t.TempDir()
	secret := makeSecret(t, secretDir)
	ns := runComposeNATS(t)

	ids := map[string]bool{}
	var opts []rserver.Options
	for _, name := range nodes {
		block := services[name]
		args := append(slices.Clone(ep[1:]), listOf(block, "command")...)
		var out bytes.Buffer
		o, _, err := parse(args, env(nil), &out)
		if err != nil {
			t.Fatalf("%s: %v\nargs %q\n%s", name, err, args, out.String())
		}
		c := o.Cluster

		// The cluster's addresses are the compose network's.
		if u, err := url.Parse(c.NATSURL); err != nil || u.Hostname() != "nats" {
			t.Errorf("%s: --cluster-nats %q is not the nats service", name, c.NATSURL)
		}
		if ids[c.NodeID] || c.NodeID == "" {
			t.Errorf("%s: --node-id %q empty or not unique", name, c.NodeID)
		}
		ids[c.NodeID] = true
		_, httpPort, _ := net.SplitHostPort(o.MCP.Addr)
		_, sshPort, _ := net.SplitHostPort(o.SSH.Addr)
		if want := "http://" + name + ":" + httpPort; c.HTTPURL != want {
			t.Errorf("%s: --node-http-url %q; want %q (its service name and --http-addr's port)", name, c.HTTPURL, want)
		}
		if want := name + ":" + sshPort; c.SSHAddr != want {
			t.Errorf("%s: --node-ssh-addr %q; want %q", name, c.SSHAddr, want)
		}
		if !slices.Contains(listOf(block, "volumes"), "cluster-secret:"+filepath.Dir(c.SecretFile)+":ro") {
			t.Errorf("%s: --cluster-secret %q is not in the cluster-secret volume (volumes %q)", name, c.SecretFile, listOf(block, "volumes"))
		}
		// Behind HAProxy: PROXY headers from HAProxy alone; X-Forwarded-For
		// from HAProxy and the peers.
		if !o.SSH.ProxyProtocol || !slices.Equal(o.SSH.TrustedProxies, []netip.Prefix{netip.PrefixFrom(haproxyIP, 32)}) {
			t.Errorf("%s: --ssh-proxy-protocol %v from %v; want it from HAProxy's %v alone", name, o.SSH.ProxyProtocol, o.SSH.TrustedProxies, haproxyIP)
		}
		for _, peer := range append([]string{"haproxy"}, nodes...) {
			ip := addressOf(t, services[peer])
			if !slices.ContainsFunc(o.MCP.TrustedProxies, func(p netip.Prefix) bool { return p.Contains(ip) }) {
				t.Errorf("%s: --http-trusted-proxies %v lacks %s's %v", name, o.MCP.TrustedProxies, peer, ip)
			}
		}
		// The attach panel's URL is the node's HTTP port as published.
		pu, err := url.Parse(o.MCP.PublicURL)
		if err != nil {
			t.Fatalf("%s: --public-url: %v", name, err)
		}
		if want := pu.Host + ":" + httpPort; !slices.Contains(listOf(block, "ports"), want) {
			t.Errorf("%s: --public-url %q is not where port %s is published (ports %q)", name, o.MCP.PublicURL, httpPort, listOf(block, "ports"))
		}
		// HAProxy sends SSH with a PROXY v2 header and HTTP to this node,
		// and checks /readyz on its HTTP port.
		for backend, want := range map[string]string{
			"backend ssh_nodes": "server " + name + " " + name + ":" + sshPort + " send-proxy-v2 check port " + httpPort,
			"backend mcp_nodes": "server " + name + " " + name + ":" + httpPort + " check",
		} {
			if !slices.Contains(servers[backend], want) {
				t.Errorf("haproxy.cfg %s lacks %q (has %q)", backend, want, servers[backend])
			}
		}

		o.DataDir = t.TempDir()
		o.Cluster.NATSURL = ns.ClientURL()
		o.Cluster.SecretFile = secret
		o.Logger = slog.New(slog.NewTextHandler(testkit.NewLogWriter(t), nil))
		opts = append(opts, o)
	}
	for _, backend := range []string{"backend ssh_nodes", "backend mcp_nodes"} {
		if len(servers[backend]) != len(nodes) {
			t.Errorf("haproxy.cfg %s has %d servers; want the %d nodes", backend, len(servers[backend]), len(nodes))
		}
		if !slices.Contains(backends[backend], "option httpchk GET /readyz") {
			t.Errorf("haproxy.cfg %s does not check /readyz", backend)
		}
	}
	if !slices.Contains(backends["frontend mcp"], "option forwardfor") {
		t.Error("haproxy.cfg frontend mcp does not add X-Forwarded-For")
	}

	// Boot the three.
	for i, o := range opts {
		srv, err := rserver.New(demoApp(), o)
		if err != nil {
			t.Fatalf("%s: server.New: %v", nodes[i], err)
		}
		sshLn, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		httpLn, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		if err := srv.StartOn(sshLn, httpLn); err != nil {
			t.Fatalf("%s: start: %v", nodes[i], err)
		}
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			defer cancel()
			srv.Shutdown(ctx)
		})
		testkit.Eventually(t, 10*time.Second, func() bool { return get(httpLn.Addr().String(), "/readyz") == "ready" },
			"%s answers ready on /readyz", nodes[i])
	}
	js := jetStream(t, ns.ClientURL())
	kv, err := js.KeyValue(context.Background(), "raxol_nodes")
	if err != nil {
		t.Fatal(err)
	}
	keys, err := kv.Keys(context.Background())
	slices.Sort(keys)
	var want []string
	for _, n := range nodes {
		want = append(want, "node."+n)
	}
	if err != nil || !slices.Equal(keys, want) {
		t.Fatalf("the cluster's nodes are %q (%v); want %q", keys, err, want)
	}
}

// makeSecret runs the one-liner compose.yml and the README give, in a
// copy of the repository's layout under dir, and returns the file it made.
func makeSecret(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(composePath)
	if err != nil {
		t.Fatal(err)
	}
	var oneLiner string
	for line := range strings.SplitSeq(string(b), "\n") {
		if strings.Contains(line, "/dev/urandom") {
			oneLiner = strings.TrimSpace(strings.TrimPrefix(line, "#"))
			break
		}
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if oneLiner == "" || !strings.Contains(string(readme), oneLiner) {
		t.Fatalf("the secret's one-liner %q is not in both compose.yml and the README", oneLiner)
	}
	if err := os.MkdirAll(filepath.Join(dir, "deploy/cluster"), 0o700); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-c", oneLiner)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", oneLiner, err, out)
	}
	return filepath.Join(dir, "deploy/cluster/cluster.secret")
}

func runComposeNATS(t *testing.T) *server.Server {
	t.Helper()
	return natstest.Run(t, t.TempDir(), server.RANDOM_PORT)
}

func jetStream(t *testing.T, url string) jetstream.JetStream {
	t.Helper()
	return natstest.JetStream(t, url)
}

// get returns the body of GET path on addr, "" on any error.
func get(addr, path string) string {
	resp, err := http.Get("http://" + addr + path)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	b.ReadFrom(resp.Body)
	return strings.TrimSpace(b.String())
}
