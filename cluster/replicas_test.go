package cluster

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/raxol-ssh/raxol-ssh/internal/natstest"
)

// streamReplicas returns the replica count of bucket's stream as the NATS
// at url reports it.
func streamReplicas(t testing.TB, url, bucket string) int {
	t.Helper()
	js := natstest.JetStream(t, url)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	st, err := js.Stream(ctx, "KV_"+bucket)
	if err != nil {
		t.Fatalf("stream of bucket %s: %v", bucket, err)
	}
	return st.CachedInfo().Config.Replicas
}

// TestReplicasDefault: without Options.Replicas, a node on a three-server
// JetStream cluster makes both buckets with three replicas, and one on a
// standalone server with one; the posture line says which and why.
func TestReplicasDefault(t *testing.T) {
	t.Run("three servers", func(t *testing.T) {
		c := natstest.RunCluster(t, 3)
		bucket := uniqueBucket()
		n := join(t, c.URLs(), bucket, "a")
		if got := n.Replicas(); got != DefaultReplicas {
			t.Fatalf("Replicas() = %d, want %d", got, DefaultReplicas)
		}
		for _, b := range []string{bucket + "_nodes", bucket + "_sessions"} {
			if got := streamReplicas(t, c.URL(0), b); got != 3 {
				t.Errorf("bucket %s has %d replicas, want 3", b, got)
			}
		}
		d := n.Describe()
		if !strings.Contains(d, "replicas 3 (default: NATS cluster "+natstest.ClusterName+" has 3 or more JetStream servers)") {
			t.Errorf("Describe() = %q: no word of 3 replicas and why", d)
		}
		// A second node agrees, and changes nothing.
		m := join(t, c.URLs(), bucket, "b")
		if got := m.Replicas(); got != 3 {
			t.Errorf("second node: Replicas() = %d, want 3", got)
		}
	})
	t.Run("standalone server", func(t *testing.T) {
		s := runNATS(t, t.TempDir(), server.RANDOM_PORT)
		bucket := uniqueBucket()
		n := join(t, s.ClientURL(), bucket, "a")
		if got := n.Replicas(); got != 1 {
			t.Fatalf("Replicas() = %d, want 1", got)
		}
		for _, b := range []string{bucket + "_nodes", bucket + "_sessions"} {
			if got := streamReplicas(t, s.ClientURL(), b); got != 1 {
				t.Errorf("bucket %s has %d replicas, want 1", b, got)
			}
		}
		if d := n.Describe(); !strings.Contains(d, "replicas 1 (default: the NATS server is standalone)") {
			t.Errorf("Describe() = %q: no word of 1 replica and why", d)
		}
	})
	t.Run("two servers", func(t *testing.T) {
		c := natstest.RunCluster(t, 2)
		bucket := uniqueBucket()
		n := join(t, c.URLs(), bucket, "a")
		if got := n.Replicas(); got != 1 {
			t.Fatalf("Replicas() = %d, want 1 (a cluster of two cannot hold 3)", got)
		}
		if got := streamReplicas(t, c.URL(0), bucket+"_sessions"); got != 1 {
			t.Errorf("sessions bucket has %d replicas, want 1", got)
		}
		if d := n.Describe(); !strings.Contains(d, "fewer than 3 JetStream servers") {
			t.Errorf("Describe() = %q: no word of why 1 replica", d)
		}
	})
}

// TestReplicasTooMany: a replica count the NATS servers cannot hold fails
// Join at once (not after its ctx) with ErrReplicas, naming the count.
func TestReplicasTooMany(t *testing.T) {
	for _, tc := range []struct {
		name     string
		servers  int
		replicas int
	}{
		{"5 on three servers", 3, 5},
		{"3 on a standalone server", 1, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var url string
			if tc.servers == 1 {
				url = runNATS(t, t.TempDir(), server.RANDOM_PORT).ClientURL()
			} else {
				url = natstest.RunCluster(t, tc.servers).URLs()
			}
			o := testOptions(t, url, uniqueBucket(), "a")
			o.Replicas = tc.replicas
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			n, err := Join(ctx, o)
			if err == nil {
				n.Close()
				t.Fatalf("Join with %d replicas on %d server(s) succeeded", tc.replicas, tc.servers)
			}
			if !errors.Is(err, ErrReplicas) || ctx.Err() != nil {
				t.Fatalf("Join: %v (ctx %v); want ErrReplicas at once", err, ctx.Err())
			}
			if want := fmt.Sprintf("%d replicas", tc.replicas); !strings.Contains(err.Error(), want) {
				t.Errorf("Join: %v; want it to name %q", err, want)
			}
		})
	}
	t.Run("6 is refused by the options", func(t *testing.T) {
		o := testOptions(t, "nats://127.0.0.1:1", uniqueBucket(), "a")
		o.Replicas = 6
		if _, err := o.withDefaults(); err == nil || !strings.Contains(err.Error(), "Options.Replicas") {
			t.Fatalf("withDefaults with Replicas 6: %v; want an error naming Options.Replicas", err)
		}
	})
}

// TestReplicasChangeExisting: a bucket made with another replica count is
// changed to the node's (JetStream adds or removes the copies).
func TestReplicasChangeExisting(t *testing.T) {
	c := natstest.RunCluster(t, 3)
	bucket := uniqueBucket()
	o := testOptions(t, c.URLs(), bucket, "a")
	o.Replicas = 1
	n := joinOpts(t, o)
	if got := streamReplicas(t, c.URL(0), bucket+"_sessions"); got != 1 {
		t.Fatalf("sessions bucket has %d replicas, want 1", got)
	}
	n.Close()
	m := join(t, c.URLs(), bucket, "b") // the default: 3
	if got := m.Replicas(); got != 3 {
		t.Fatalf("Replicas() = %d, want 3", got)
	}
	for _, b := range []string{bucket + "_nodes", bucket + "_sessions"} {
		if got := streamReplicas(t, c.URL(1), b); got != 3 {
			t.Errorf("bucket %s has %d replicas after a node with 3 joined, want 3", b, got)
		}
	}
}

// TestReplicasSurviveServerLoss: with three replicas, stopping any one of
// the three NATS servers (each in turn, the one the node is connected to
// and the streams' leaders included) loses no directory entry: Lookup
// finds every session while the server is down, and after it is back.
func TestReplicasSurviveServerLoss(t *testing.T) {
	c := natstest.RunCluster(t, 3)
	bucket := uniqueBucket()
	a := join(t, c.URLs(), bucket, "a")
	b := join(t, c.URLs(), bucket, "b")
	waitNodes(t, a, "a", "b")
	waitNodes(t, b, "a", "b")
	ctx := ctxT(t)
	var ids []string
	for i := range 5 {
		id := fmt.Sprintf("s%d", i)
		if err := a.Announce(ctx, SessionEntry{ID: id, Owner: "o"}); err != nil {
			t.Fatalf("Announce %s: %v", id, err)
		}
		ids = append(ids, id)
	}
	stream := "KV_" + bucket + "_sessions"
	for i := range c.Len() {
		c.WaitStreamCurrent(stream)
		leader := c.StreamLeader(stream)
		c.Kill(i) // as kill -9: no step-down reaches the others
		t.Logf("stopped NATS server n%d (the sessions stream's leader was n%d)", i, leader)
		for _, id := range ids {
			var err error
			testlookup := func() bool {
				lctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				defer cancel()
				_, _, err = b.Lookup(lctx, id)
				return err == nil
			}
			// A stream whose leader went may wait for JetStream's
			// election timeout (4-9 s) when the handover missed.
			deadline := time.Now().Add(20 * time.Second)
			for !testlookup() {
				if time.Now().After(deadline) {
					t.Fatalf("n%d down: Lookup(%s) on node b: %v", i, id, err)
				}
				time.Sleep(100 * time.Millisecond)
			}
		}
		c.Restart(i)
	}
	c.WaitStreamCurrent(stream)
	// Every entry is still in the bucket, read from each server.
	for i := range c.Len() {
		kv := rawKV(t, c.URL(i), bucket+"_sessions")
		for _, id := range ids {
			if !stored(t, kv, sessKey(id)) {
				t.Errorf("n%d: entry %s is gone", i, id)
			}
		}
	}
}

// TestReplicasDefaultWithAServerDown: on a three-server cluster with one
// server down, a first node with the default still makes its buckets with
// three replicas (JetStream places the third on the server that is down),
// not one: they work on the two left, and once the server is back the
// entry survives the loss of either of the others.
func TestReplicasDefaultWithAServerDown(t *testing.T) {
	c := natstest.RunCluster(t, 3)
	c.Stop(2)
	c.WaitMetaLeader()
	bucket := uniqueBucket()
	n := join(t, c.URLs(), bucket, "a")
	if got := n.Replicas(); got != 3 {
		t.Fatalf("Replicas() = %d with a server of three down, want 3", got)
	}
	ctx := ctxT(t)
	if err := n.Announce(ctx, SessionEntry{ID: "s1", Owner: "o"}); err != nil {
		t.Fatalf("Announce with a server of three down: %v", err)
	}
	c.Restart(2)
	stream := "KV_" + bucket + "_sessions"
	c.WaitStreamCurrent(stream)
	if got := streamReplicas(t, c.URL(2), bucket+"_sessions"); got != 3 {
		t.Fatalf("sessions bucket has %d replicas, want 3", got)
	}
	// Now a three-copy bucket: the entry is read with either of the two
	// other servers down.
	for _, other := range []int{0, 1} {
		c.Stop(other)
		if !hasEntry(t, c.URL(2), bucket+"_sessions", sessKey("s1")) {
			t.Fatalf("with n%d down, the entry is not readable through n2", other)
		}
		c.Restart(other)
		c.WaitStreamCurrent(stream)
	}
}

// hasEntry reports whether key has a live value in bucket, read through
// the NATS at url, trying again for a few seconds while the read fails (a
// stream electing a leader).
func hasEntry(t testing.TB, url, bucket, key string) bool {
	t.Helper()
	js := natstest.JetStream(t, url)
	deadline := time.Now().Add(20 * time.Second) // a leader election, as above
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		kv, err := js.KeyValue(ctx, bucket)
		if err == nil {
			_, err = kv.Get(ctx, key)
		}
		cancel()
		switch {
		case err == nil:
			return true
		case errors.Is(err, jetstream.ErrKeyNotFound):
			return false
		case time.Now().After(deadline):
			t.Fatalf("read %s from %s through %s: %v", key, bucket, url, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
