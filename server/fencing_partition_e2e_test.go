package server_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/raxol-ssh/raxol-ssh/internal/natstest"
	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/mcpbridge"
)

// cutter is a TCP relay in front of a NATS server whose connections can
// be cut (and new ones refused) and then allowed again: one node's link
// to NATS, partitioned while the others keep theirs.
type cutter struct {
	t      *testing.T
	target string
	addr   string

	mu    sync.Mutex
	ln    net.Listener
	conns []net.Conn
	wg    sync.WaitGroup
}

func newCutter(t *testing.T, target string) *cutter {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &cutter{t: t, target: target, addr: ln.Addr().String()}
	c.serve(ln)
	t.Cleanup(func() { c.cut(); c.wg.Wait() })
	return c
}

func (c *cutter) url() string { return "nats://" + c.addr }

func (c *cutter) serve(ln net.Listener) {
	c.mu.Lock()
	c.ln = ln
	c.mu.Unlock()
	c.wg.Go(func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", c.target)
			if err != nil {
				in.Close()
				continue
			}
			c.mu.Lock()
			c.conns = append(c.conns, in, out)
			c.mu.Unlock()
			c.wg.Go(func() { _, _ = io.Copy(out, in); out.Close(); in.Close() })
			c.wg.Go(func() { _, _ = io.Copy(in, out); out.Close(); in.Close() })
		}
	})
}

// cut closes every relayed connection and stops listening.
func (c *cutter) cut() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ln != nil {
		c.ln.Close()
		c.ln = nil
	}
	for _, conn := range c.conns {
		conn.Close()
	}
	c.conns = nil
}

// heal listens again on the same address.
func (c *cutter) heal() {
	ln, err := net.Listen("tcp", c.addr)
	if err != nil {
		c.t.Fatalf("relay listen again on %s: %v", c.addr, err)
	}
	c.serve(ln)
}

// TestFencingAPartitionedNodeStopsAcknowledgingBeforeItsSessionIsAdopted:
// node a is cut from NATS while b keeps its link. a stops acknowledging
// its session's agent (its lease lapsed) before b adopts the session;
// after the partition heals a gives its copy up (b holds it now), so
// there is exactly one copy, it holds every write a acknowledged, and it
// takes writes. The saver's interval (3 s) is far longer than between
// two writes (50 ms): the adopted copy holds the last acknowledged write
// only because an agent's change is answered once it is saved.
func TestFencingAPartitionedNodeStopsAcknowledgingBeforeItsSessionIsAdopted(t *testing.T) {
	ns := runNATS(t, t.TempDir(), -1)
	relay := newCutter(t, ns.Addr().String())
	bucket := fmt.Sprintf("part%d", clusterSeq.Add(1))
	a := startR1NodesEvery(t, relay.url(), bucket, 3*time.Second, "a")[0]
	b := startR1NodesEvery(t, ns.ClientURL(), bucket, 3*time.Second, "b")[0]
	nodes := []*clusterNode{a, b}
	owner := connect(t, a.ssh, clientOpts{user: "alice", key: newKey(t)})
	id, token := typedAndSaved(t, a, owner, "saved-on-a")
	w := &writer{url: a.base() + "/sessions/" + id + "/mcp", token: token}
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	// The time of each acknowledgement, to compare with the adoption's.
	var lastAck time.Time
	var ackMu sync.Mutex
	wg.Go(func() {
		prev := int64(0)
		for ctx.Err() == nil {
			if n := w.acked.Load(); n != prev {
				prev = n
				ackMu.Lock()
				lastAck = time.Now()
				ackMu.Unlock()
			}
			time.Sleep(5 * time.Millisecond) // sampling interval: lastAck is within 5 ms of the acknowledgement
		}
	})
	wg.Go(func() { w.run(ctx) })
	defer func() { stop(); wg.Wait() }()
	testkit.Eventually(t, 10*time.Second, func() bool { return w.acked.Load() > 5 }, "the agent writes through a")

	relay.cut()
	cutAt := time.Now()
	testkit.Eventually(t, 20*time.Second, func() bool { _, ok := b.Sessions().Get(id); return ok },
		"b adopts a's session")
	// When b's claim was stored (the NATS server's clock: the same
	// machine's).
	ectx, ecancel := context.WithTimeout(context.Background(), 5*time.Second)
	entry, err := bucketOf(t, natstest.JetStream(t, ns.ClientURL()), "_sessions").Get(ectx, "sess."+id)
	ecancel()
	if err != nil {
		t.Fatal(err)
	}
	claimedAt := entry.Created()
	time.Sleep(time.Second) // a's agent keeps trying meanwhile: the window in which a late acknowledgement would show
	ackMu.Lock()
	last := lastAck
	ackMu.Unlock()
	t.Logf("cut at 0; a's last acknowledgement at %v; b's claim at %v",
		last.Sub(cutAt).Round(time.Millisecond), claimedAt.Sub(cutAt).Round(time.Millisecond))
	if !last.Before(claimedAt) {
		t.Fatalf("a acknowledged a write %v after b claimed the session", last.Sub(claimedAt))
	}
	if _, ok := a.Sessions().Get(id); !ok {
		t.Fatal("a dropped its copy while cut off (it keeps it, degraded, until it learns the session moved)")
	}
	stop()
	wg.Wait()

	relay.heal()
	testkit.Eventually(t, 15*time.Second, func() bool { _, ok := a.Sessions().Get(id); return !ok },
		"a gives its copy up once it can reach NATS again")
	if got := adopters(nodes, id); len(got) != 1 || got[0] != b {
		t.Fatalf("%d nodes hold the session after the partition healed, want only b", len(got))
	}
	// It holds the last write a acknowledged, or the one after it (the
	// call in flight at the cut may have been saved though its answer
	// was lost).
	acked := w.acked.Load()
	tree := readVia(t, b.base()+"/sessions/"+id+"/mcp", token, mcpbridge.URITree)
	if !strings.Contains(tree, fmt.Sprintf("%q", fmt.Sprintf("w%d", acked))) &&
		!strings.Contains(tree, fmt.Sprintf("%q", fmt.Sprintf("w%d", acked+1))) {
		t.Fatalf("the adopted copy lost acknowledged writes: %d acknowledged, its tree:\n%s", acked, tree)
	}
	t.Logf("%d writes acknowledged by a; the adopted copy holds the last", acked)
	// The one copy takes writes, through either node.
	for _, via := range nodes {
		ag := agentVia(t, via.base()+"/sessions/"+id+"/mcp", token, nil)
		testkit.MustCall(t, ag, "demo.search.type_into", map[string]any{"text": "after-heal-via-" + via.id})
	}
}

// readVia reads resource uri of the session at url with token.
func readVia(t *testing.T, url, token, uri string) string {
	t.Helper()
	ag := agentVia(t, url, token, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := ag.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		t.Fatalf("read %s: %v", uri, err)
	}
	return res.Contents[0].Text
}
