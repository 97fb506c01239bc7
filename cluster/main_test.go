package cluster

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/goleak"

	"github.com/raxol-ssh/raxol-ssh/internal/natstest"
	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
)

// TestMain fails the package if any goroutine outlives the tests: the
// nodes' own, the NATS client's, and the embedded server's, but for two
// of nats-server's own: a stream's file store created on a server while
// it shuts down (a replica being placed as the cluster loses a server)
// is never closed by Shutdown, and keeps its flush loop and the access
// time ticker it registered (seen once in 12 runs on a loaded machine).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("github.com/nats-io/nats-server/v2/server.(*fileStore).flushStreamStateLoop"),
		goleak.IgnoreTopFunction("github.com/nats-io/nats-server/v2/server/ats.Register.func1"))
}

// Timings of the tests' nodes: a node silent for testTTL is gone.
const (
	testHeartbeat = time.Second
	testTTL       = 3 * time.Second
)

var testSecret = randomSecret()

func randomSecret() []byte {
	b := make([]byte, 32)
	rand.Read(b)
	return b
}

// runNATS starts an embedded nats-server (natstest.Run).
func runNATS(t testing.TB, dir string, port int) *server.Server { return natstest.Run(t, dir, port) }

func natsPort(s *server.Server) int { return natstest.Port(s) }

var bucketSeq atomic.Int64

// uniqueBucket returns a bucket prefix no other test uses.
func uniqueBucket() string { return fmt.Sprintf("t%d", bucketSeq.Add(1)) }

// testOptions returns valid options for node id on the NATS at url.
func testOptions(t testing.TB, url, bucket, id string) Options {
	return Options{
		NATSURL:   url,
		NodeID:    id,
		HTTPURL:   "http://" + id + ".test:8080",
		SSHAddr:   id + ".test:2222",
		Secret:    testSecret,
		Bucket:    bucket,
		Heartbeat: testHeartbeat,
		TTL:       testTTL,
		Logger: slog.New(slog.NewTextHandler(testkit.NewLogWriter(t),
			&slog.HandlerOptions{Level: slog.LevelDebug})).With("test_node", id),
	}
}

// join joins node id and closes it when the test ends.
func join(t testing.TB, url, bucket, id string) *Node {
	t.Helper()
	return joinOpts(t, testOptions(t, url, bucket, id))
}

func joinOpts(t testing.TB, o Options) *Node {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	n, err := Join(ctx, o)
	if err != nil {
		t.Fatalf("Join(%s): %v", o.NodeID, err)
	}
	t.Cleanup(func() { n.Close() })
	return n
}

// cluster joins the nodes named ids on one fresh NATS server, and waits
// until each sees all of them.
func cluster(t testing.TB, ids ...string) (*server.Server, string, []*Node) {
	t.Helper()
	s := runNATS(t, t.TempDir(), server.RANDOM_PORT)
	bucket := uniqueBucket()
	var nodes []*Node
	for _, id := range ids {
		nodes = append(nodes, join(t, s.ClientURL(), bucket, id))
	}
	for _, n := range nodes {
		waitNodes(t, n, ids...)
	}
	return s, bucket, nodes
}

func nodeIDs(n *Node) []string {
	var ids []string
	for _, ni := range n.Nodes() {
		ids = append(ids, ni.ID)
	}
	return ids
}

// waitNodes waits until n sees exactly the live nodes ids.
func waitNodes(t testing.TB, n *Node, ids ...string) {
	t.Helper()
	want := slices.Sorted(slices.Values(ids))
	testkit.Eventually(t, 5*time.Second, func() bool { return slices.Equal(nodeIDs(n), want) },
		"node %s sees nodes %v (it sees %v)", n.ID(), want, nodeIDs(n))
}

// rawKV opens bucket prefix+suffix on url with a connection of the test's
// own, to look at what is stored.
func rawKV(t testing.TB, url, bucket string) jetstream.KeyValue {
	t.Helper()
	js := natstest.JetStream(t, url)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	kv, err := js.KeyValue(ctx, bucket)
	if err != nil {
		t.Fatalf("open bucket %s: %v", bucket, err)
	}
	return kv
}

// stored reports whether key has a live value in kv.
func stored(t testing.TB, kv jetstream.KeyValue, key string) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, err := kv.Get(ctx, key)
	if err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
		t.Fatalf("get %s: %v", key, err)
	}
	return err == nil
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// rawStore looks at what a NATS server stores, through a connection of the
// test's own; buckets are opened on each look, as they may not exist yet.
type rawStore struct{ js jetstream.JetStream }

func newRawStore(t testing.TB, url string) rawStore {
	t.Helper()
	return rawStore{natstest.JetStream(t, url)}
}

// has reports whether key has a live value in bucket (false while the
// bucket does not exist).
func (r rawStore) has(t testing.TB, bucket, key string) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	kv, err := r.js.KeyValue(ctx, bucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return false
	}
	if err != nil {
		t.Fatalf("open bucket %s: %v", bucket, err)
	}
	return stored(t, kv, key)
}
