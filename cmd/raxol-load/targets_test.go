package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestSplitList(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
		err  string
	}{
		{in: "127.0.0.1:2222", want: []string{"127.0.0.1:2222"}}, // one value, as before
		{in: "a:1,b:2, c:3 ", want: []string{"a:1", "b:2", "c:3"}},
		{in: "", want: nil},
		{in: "a:1,,b:2", err: "empty item"},
		{in: "a:1,", err: "empty item"},
		{in: "a:1,a:1", err: `"a:1" is given twice`},
	} {
		got, err := splitList("--ssh", c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), "--ssh") {
				t.Errorf("splitList(%q) = %q, %v; want an error naming --ssh and saying %q", c.in, got, err, c.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("splitList(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

func TestParseVia(t *testing.T) {
	for _, s := range []string{"home", "other", "round-robin"} {
		if v, err := parseVia(s); err != nil || string(v) != s {
			t.Errorf("parseVia(%q) = %q, %v", s, v, err)
		}
	}
	if _, err := parseVia("nearest"); err == nil || !strings.Contains(err.Error(), "--agent-via") {
		t.Errorf("parseVia(nearest) = %v; want an error naming the flag", err)
	}
}

func TestNewRouterChecksNodes(t *testing.T) {
	for _, c := range []struct {
		via   agentVia
		nodes []string
		err   string
	}{
		{viaOther, []string{"http://a:1"}, "at least two"},
		{viaRoundRobin, nil, "needs the nodes"},
		{viaHome, []string{"a:1"}, "not an http"},
		{viaHome, []string{"ftp://a"}, "not an http"},
	} {
		if _, err := newRouter(c.via, c.nodes); err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("newRouter(%s, %q) = %v; want %q", c.via, c.nodes, err, c.err)
		}
	}
	if _, err := newRouter(viaHome, nil); err != nil {
		t.Errorf("home needs no nodes: %v", err)
	}
}

const sessionPath = "/sessions/abc_-123/mcp"

var threeNodes = []string{"http://127.0.0.1:8081", "http://127.0.0.1:8082", "HTTP://127.0.0.1:8083"}

func TestRouteHome(t *testing.T) {
	r, err := newRouter(viaHome, threeNodes)
	if err != nil {
		t.Fatal(err)
	}
	in := "http://127.0.0.1:8082" + sessionPath
	for i := range 5 {
		ep, home, via, err := r.route(i, in)
		if err != nil || ep != in || home != "127.0.0.1:8082" || via != home {
			t.Errorf("route(%d) = %s, %s, %s, %v; want the panel's URL unchanged", i, ep, home, via, err)
		}
	}
	// A URL on no listed node (the balancer's) is fine at home.
	if ep, _, _, err := r.route(0, "http://lb.example:8080"+sessionPath); err != nil || ep != "http://lb.example:8080"+sessionPath {
		t.Errorf("route of the balancer's URL = %s, %v", ep, err)
	}
}

func TestRouteOther(t *testing.T) {
	r, err := newRouter(viaOther, threeNodes)
	if err != nil {
		t.Fatal(err)
	}
	through := map[string]int{}
	for i := range 12 {
		home := fmt.Sprintf("127.0.0.1:808%d", i%3+1)
		ep, gotHome, via, err := r.route(i, "http://"+home+sessionPath+"?x=1")
		if err != nil {
			t.Fatal(err)
		}
		if gotHome != home || via == home {
			t.Errorf("agent %d: home %s via %s; want via another node than %s", i, gotHome, via, home)
		}
		if want := "http://" + via + sessionPath + "?x=1"; ep != want {
			t.Errorf("agent %d: endpoint %s; want %s (only scheme and host rewritten)", i, ep, want)
		}
		through[home+">"+via]++
	}
	// Each home's agents use both of the other nodes.
	for _, home := range []string{"8081", "8082", "8083"} {
		n := 0
		for k := range through {
			if strings.HasPrefix(k, "127.0.0.1:"+home+">") {
				n++
			}
		}
		if n != 2 {
			t.Errorf("the agents of the sessions at %s went through %d other nodes; want 2 (%v)", home, n, through)
		}
	}
	if _, _, _, err := r.route(0, "http://10.9.9.9:8080"+sessionPath); err == nil || !strings.Contains(err.Error(), "names no node") {
		t.Errorf("route of a URL on no node = %v; want an error", err)
	}
}

func TestRouteRoundRobin(t *testing.T) {
	r, err := newRouter(viaRoundRobin, threeNodes)
	if err != nil {
		t.Fatal(err)
	}
	var vias []string
	for i := range 6 {
		ep, home, via, err := r.route(i, "http://127.0.0.1:8081"+sessionPath)
		if err != nil || home != "127.0.0.1:8081" || ep != "http://"+via+sessionPath {
			t.Fatalf("route(%d) = %s, %s, %s, %v", i, ep, home, via, err)
		}
		vias = append(vias, via)
	}
	want := []string{"127.0.0.1:8081", "127.0.0.1:8082", "127.0.0.1:8083", "127.0.0.1:8081", "127.0.0.1:8082", "127.0.0.1:8083"}
	if !slices.Equal(vias, want) {
		t.Errorf("round-robin went through %q; want %q", vias, want)
	}
}

func TestOriginsAndCounts(t *testing.T) {
	got, err := origins([]string{"http://127.0.0.1:8081/metrics", "https://n2:9100/metrics"})
	if err != nil || !slices.Equal(got, []string{"http://127.0.0.1:8081", "https://n2:9100"}) {
		t.Errorf("origins = %q, %v", got, err)
	}
	var c counts
	for _, s := range []string{"b", "a", "b", "b"} {
		c.add(s)
	}
	if c.String() != "b=3 a=1" || c.format([]string{"a", "b", "z"}) != "a=1 b=3 z=0" {
		t.Errorf("counts: %q, %q", c.String(), c.format([]string{"a", "b", "z"}))
	}
}

// The nodes' metrics, scraped over HTTP, are added up; a node that does
// not answer is an error naming it.
func TestScrapeAllAddsNodes(t *testing.T) {
	node := func(rss, sessions float64) *httptest.Server {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			fmt.Fprintf(w, "# TYPE process_resident_memory_bytes gauge\nprocess_resident_memory_bytes %g\nraxol_sessions_open %g\nraxol_mcp_calls_total{tool=\"x\"} 5\n", rss, sessions)
		}))
		t.Cleanup(s.Close)
		return s
	}
	a, b := node(100, 3), node(50, 4)
	one, err := scrapeAll([]string{a.URL})
	if err != nil || one["process_resident_memory_bytes"] != 100 || one["raxol_sessions_open"] != 3 {
		t.Fatalf("one node: %v, %v", one, err)
	}
	sum, err := scrapeAll([]string{a.URL, b.URL})
	if err != nil || sum["process_resident_memory_bytes"] != 150 || sum["raxol_sessions_open"] != 7 || len(sum) != 2 {
		t.Fatalf("two nodes: %v, %v", sum, err)
	}
	line, err := sessionsPerNode([]string{a.URL + "/metrics", b.URL + "/metrics"})
	if err != nil || line != "sessions open per node: "+strings.TrimPrefix(a.URL, "http://")+"=3 "+strings.TrimPrefix(b.URL, "http://")+"=4" {
		t.Errorf("sessionsPerNode = %q, %v", line, err)
	}
	b.Close()
	if _, err := scrapeAll([]string{a.URL, b.URL}); err == nil || !strings.Contains(err.Error(), b.URL) {
		t.Errorf("scrape with a node down = %v; want an error naming it", err)
	}
}

func TestAgentsPerNode(t *testing.T) {
	clients := []*client{
		{agent: nil}, // a session without an agent
		{home: "n1:8080", via: "n2:8080"},
		{home: "n2:8080", via: "n1:8080"},
		{home: "n1:8080", via: "n1:8080"},
	}
	for _, c := range clients[1:] {
		c.agent = new(mcp.ClientSession) // only its presence is read
	}
	got := agentsPerNode(clients, viaRoundRobin)
	want := "agents per node (--agent-via round-robin): sessions at home n1:8080=2 n2:8080=1; through n2:8080=1 n1:8080=2; 2 of 3 through a node other than their session's"
	if got != want {
		t.Errorf("agentsPerNode =\n%q; want\n%q", got, want)
	}
}

func TestTypingPair(t *testing.T) {
	for _, c := range []struct {
		in      string
		pair    [2]string
		prelude []string
		err     string
	}{
		{in: "tab", pair: [2]string{"\t", "\x1b[Z"}},
		{in: `chars:\t`, pair: [2]string{"x", "\x7f"}, prelude: []string{"\t", "x"}},
		{in: "chars:", pair: [2]string{"x", "\x7f"}, prelude: []string{"x"}},
		{in: "tabs", err: "want tab or chars"},
		{in: `chars:\q`, err: "the prelude"},
	} {
		pair, prelude, err := typingPair(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), "--typing-keys") {
				t.Errorf("typingPair(%q): %v; want an error naming --typing-keys and saying %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || pair != c.pair || !slices.Equal(prelude, c.prelude) {
			t.Errorf("typingPair(%q) = %q, %q, %v; want %q, %q", c.in, pair, prelude, err, c.pair, c.prelude)
		}
	}
}
