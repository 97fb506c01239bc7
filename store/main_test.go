package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	bolt "go.etcd.io/bbolt"
	"go.uber.org/goleak"

	"github.com/raxol-ssh/raxol-ssh/internal/natstest"
)

// crashChildEnv names the bbolt file the test binary writes to when it is
// run as the crash test's child (see TestBoltCrashSafety).
const crashChildEnv = "RAXOL_STORE_CRASH_CHILD"

// TestMain fails the package if any goroutine outlives the tests: the NATS
// client's, the embedded server's, bbolt's. Run as the crash test's child,
// the binary writes records until it is killed instead of testing.
func TestMain(m *testing.M) {
	if path := os.Getenv(crashChildEnv); path != "" {
		if err := crashChild(path); err != nil {
			fmt.Fprintln(os.Stderr, "crash child:", err)
			os.Exit(2)
		}
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

// runNATS starts an embedded nats-server (natstest.Run).
func runNATS(t testing.TB, dir string, port int) *server.Server { return natstest.Run(t, dir, port) }

func natsPort(s *server.Server) int { return natstest.Port(s) }

// connect connects to url the way a long-lived server should (reconnect
// forever), closed when the test ends.
func connect(t testing.TB, url string) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(url, nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

var bucketSeq atomic.Int64

// uniqueBucket returns a bucket name no other test uses.
func uniqueBucket() string { return fmt.Sprintf("snap_t%d", bucketSeq.Add(1)) }

// sharedNATS is one server for the tests that do not stop theirs.
func sharedNATS(t testing.TB) *server.Server {
	t.Helper()
	return runNATS(t, t.TempDir(), server.RANDOM_PORT)
}

// openTestKV opens a fresh bucket on s, closed when the test ends.
func openTestKV(t testing.TB, s *server.Server, o KVOptions) *KV {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	k, err := OpenKV(ctx, connect(t, s.ClientURL()), uniqueBucket(), o)
	if err != nil {
		t.Fatalf("OpenKV: %v", err)
	}
	t.Cleanup(func() { k.Close() })
	return k
}

// openTestBolt opens a fresh file in a temporary directory, closed when
// the test ends.
func openTestBolt(t testing.TB) *Bolt {
	t.Helper()
	b, err := OpenBolt(filepath.Join(t.TempDir(), "sessions.db"), BoltOptions{})
	if err != nil {
		t.Fatalf("OpenBolt: %v", err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// check runs bbolt's consistency check on b's file.
func check(b *Bolt) error {
	var errs []error
	err := b.db.View(func(tx *bolt.Tx) error {
		for err := range tx.Check() {
			errs = append(errs, err)
		}
		return nil
	})
	return errors.Join(append(errs, err)...)
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}
