package main

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// Several nodes: --ssh, --metrics, --mcp-url and --agent-nodes take
// comma-separated lists. Sessions are opened round-robin over the SSH
// addresses, the metrics of every node are added up, and each agent
// reaches its session through the node --agent-via picks.

// splitList splits a comma-separated flag value into its items, trimmed.
// An empty item or one given twice is an error naming the flag; an empty
// value is an empty list.
func splitList(flagName, s string) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var items []string
	for item := range strings.SplitSeq(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			return nil, fmt.Errorf("%s %q: an empty item", flagName, s)
		}
		if slices.Contains(items, item) {
			return nil, fmt.Errorf("%s %q: %q is given twice", flagName, s, item)
		}
		items = append(items, item)
	}
	return items, nil
}

// agentVia is how an agent picks the node it reaches its session through.
type agentVia string

const (
	// viaHome: the URL the session's attach panel gives (its home node's).
	viaHome agentVia = "home"
	// viaOther: a node that is not the session's home, so every call is
	// passed from node to node.
	viaOther agentVia = "other"
	// viaRoundRobin: the agents take the nodes in turn, home or not.
	viaRoundRobin agentVia = "round-robin"
)

func parseVia(s string) (agentVia, error) {
	switch v := agentVia(s); v {
	case viaHome, viaOther, viaRoundRobin:
		return v, nil
	}
	return "", fmt.Errorf("--agent-via %q: want home, other or round-robin", s)
}

// router picks, for each agent, the URL it connects to.
type router struct {
	via   agentVia
	nodes []*url.URL // scheme and host of each node's HTTP
}

// newRouter checks the nodes (base URLs: http://host:port) against the
// mode: other needs two nodes, round-robin one.
func newRouter(via agentVia, nodes []string) (*router, error) {
	r := &router{via: via}
	for _, n := range nodes {
		u, err := url.Parse(n)
		if err != nil {
			return nil, fmt.Errorf("--agent-nodes %q: %w", n, err)
		}
		if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("--agent-nodes %q: not an http:// or https:// URL", n)
		}
		r.nodes = append(r.nodes, &url.URL{Scheme: u.Scheme, Host: strings.ToLower(u.Host)})
	}
	switch {
	case via == viaOther && len(r.nodes) < 2:
		return nil, fmt.Errorf("--agent-via other needs at least two nodes in --agent-nodes (have %d)", len(r.nodes))
	case via == viaRoundRobin && len(r.nodes) == 0:
		return nil, errors.New("--agent-via round-robin needs the nodes in --agent-nodes")
	}
	return r, nil
}

// nodeOf returns the index of the node whose host the URL names, or -1.
func (r *router) nodeOf(u *url.URL) int {
	return slices.IndexFunc(r.nodes, func(n *url.URL) bool { return n.Host == strings.ToLower(u.Host) })
}

// route returns the endpoint agent i connects to for the session whose
// attach-panel URL is sessionURL, with the session's home (the panel
// URL's host) and the host the endpoint goes through.
func (r *router) route(i int, sessionURL string) (endpoint, home, via string, err error) {
	u, err := url.Parse(sessionURL)
	if err != nil {
		return "", "", "", fmt.Errorf("session URL %q: %w", sessionURL, err)
	}
	home = strings.ToLower(u.Host)
	var to *url.URL
	switch r.via {
	case viaHome:
		return sessionURL, home, home, nil
	case viaRoundRobin:
		to = r.nodes[i%len(r.nodes)]
	case viaOther:
		h := r.nodeOf(u)
		if h < 0 {
			return "", "", "", fmt.Errorf("--agent-via other: the session's URL %s names no node of --agent-nodes (%s)", sessionURL, r.hosts())
		}
		others := slices.Delete(slices.Clone(r.nodes), h, h+1)
		to = others[i%len(others)]
	}
	v := *u
	v.Scheme, v.Host = to.Scheme, to.Host
	return v.String(), home, to.Host, nil
}

func (r *router) hosts() string {
	var hs []string
	for _, n := range r.nodes {
		hs = append(hs, n.Host)
	}
	return strings.Join(hs, ", ")
}

// origins returns the scheme://host of each URL: the nodes' HTTP, from
// their /metrics URLs.
func origins(urls []string) ([]string, error) {
	var out []string
	for _, s := range urls {
		u, err := url.Parse(s)
		if err != nil {
			return nil, fmt.Errorf("--metrics %q: %w", s, err)
		}
		out = append(out, u.Scheme+"://"+u.Host)
	}
	return out, nil
}

// counts tallies names in the order they are first seen.
type counts struct {
	order []string
	n     map[string]int
}

func (c *counts) add(name string) {
	if c.n == nil {
		c.n = map[string]int{}
	}
	if _, ok := c.n[name]; !ok {
		c.order = append(c.order, name)
	}
	c.n[name]++
}

// String is "a=3 b=2", in the order of first, or of keys when given.
func (c *counts) String() string { return c.format(c.order) }

func (c *counts) format(keys []string) string {
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%d", k, c.n[k]))
	}
	return strings.Join(parts, " ")
}

// sumSamples adds the samples of several nodes' scrapes: a name present
// in any of them is in the sum.
func sumSamples(scrapes []map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for _, s := range scrapes {
		for k, v := range s {
			out[k] += v
		}
	}
	return out
}
