// Package natstest runs an embedded nats-server with JetStream for tests:
// what the cluster, store, server and command tests share. It is imported
// by tests only (it links the whole nats-server).
//
// In: a test, a storage directory and a port (-1 for a free one). Out: a
// running server on 127.0.0.1, shut down when the test ends.
//
// RunCluster starts a JetStream cluster of several such servers (three, as
// operators run one), routed to each other, each with its own store
// directory under t.TempDir(); it returns once the cluster has a meta
// leader. A [Cluster] stops and restarts one server on the same ports and
// directory (Stop, a clean shutdown; Kill, which first cuts every
// connection of the server through the relays every client and route goes
// through, so that the others see a kill -9: no step-down; Restart), tells
// which server leads a stream (StreamLeader) and waits for a stream's
// replicas to catch up (WaitStreamCurrent, as the leader reports them).
package natstest

import (
	"net"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
)

// Run starts a nats-server with JetStream on 127.0.0.1:port (port -1: a
// free one) storing under dir, and shuts it down when t ends. Starting it
// again on the same dir and port brings back what it stored.
func Run(t testing.TB, dir string, port int) *server.Server {
	t.Helper()
	testkit.EndToEnd(t)
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: port,
		JetStream: true, StoreDir: dir, NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatalf("nats-server: %v", err)
	}
	s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats-server not ready")
	}
	t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	return s
}

// Port is the port s listens on.
func Port(s *server.Server) int { return s.Addr().(*net.TCPAddr).Port }

// JetStream connects to url with a connection of the test's own (closed
// when t ends), to look at what the server stores.
func JetStream(t testing.TB, url string) jetstream.JetStream {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatalf("nats connect: %v", err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatalf("jetstream: %v", err)
	}
	return js
}
