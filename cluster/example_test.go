package cluster_test

import (
	"context"
	"errors"
	"log"
	"net/http"
	"time"

	"github.com/raxol-ssh/raxol-ssh/cluster"
)

// A server joins the cluster at boot, announces its sessions, and takes
// over the detached sessions of a node that died.
func Example() {
	secret, err := cluster.ReadSecret("/etc/raxol-ssh/cluster.secret")
	if err != nil {
		log.Fatal(err)
	}
	// The ctx decides how long the boot waits for NATS.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	node, err := cluster.Join(ctx, cluster.Options{
		NATSURL: "nats://10.0.0.2:4222,nats://10.0.0.3:4222",
		NodeID:  "node-a",
		HTTPURL: "http://10.0.0.5:8080",
		SSHAddr: "10.0.0.5:2222",
		Secret:  secret,
	})
	if err != nil {
		log.Fatal(err) // matches cluster.ErrUnavailable when NATS never answered
	}
	defer node.Close()
	log.Print(node.Describe())

	node.OnNodeLost(func(lost string, orphans []cluster.SessionEntry) error {
		var failed []error
		for _, e := range orphans {
			if !e.Detached {
				continue // its terminal died with its node
			}
			claimed, err := node.Claim(context.Background(), e)
			if errors.Is(err, cluster.ErrClaimLost) {
				continue // another node took it
			}
			if err != nil {
				failed = append(failed, err) // left in place: tried again a heartbeat later
				continue
			}
			_ = claimed // resume the session here (from its snapshot)
		}
		return errors.Join(failed...)
	})

	// A session starts, changes state, ends.
	_ = node.Announce(ctx, cluster.SessionEntry{ID: "3q2f9x", Owner: "SHA256:…"})
	_ = node.Announce(ctx, cluster.SessionEntry{ID: "3q2f9x", Owner: "SHA256:…", Detached: true})
	_ = node.Forget(ctx, "3q2f9x")

	// On SIGTERM: leave cleanly, so peers need not wait for the TTL.
	if err := node.Drain(context.Background()); err != nil {
		log.Print(err)
	}
}

// A request for a session that lives on another node is routed there.
func ExampleNode_Lookup() {
	var node *cluster.Node // from cluster.Join
	handler := func(w http.ResponseWriter, r *http.Request) {
		e, home, err := node.Lookup(r.Context(), r.PathValue("id"))
		switch {
		case errors.Is(err, cluster.ErrUnknownSession):
			http.NotFound(w, r)
		case errors.Is(err, cluster.ErrUnavailable):
			http.Error(w, "the cluster directory is unavailable; try again", http.StatusServiceUnavailable)
		case err != nil:
			http.Error(w, err.Error(), http.StatusInternalServerError)
		case home.ID == node.ID():
			_ = e // serve it here
		default:
			_ = home.HTTPURL // proxy to the home node, signing the request
		}
	}
	_ = handler
}

// Requests between nodes are signed by the sender and verified by the
// receiver; a front proxy strips the peer headers from client requests.
func ExampleNode_VerifyRequest() {
	var node *cluster.Node // from cluster.Join
	peerOnly := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			peer, err := node.VerifyRequest(r)
			if err != nil { // errors.Is(err, cluster.ErrForgedPeer)
				http.Error(w, "forbidden", http.StatusForbidden)
				return
			}
			if peer == "" { // an ordinary client
				http.Error(w, "peers only", http.StatusForbidden)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
	_ = peerOnly

	req, _ := http.NewRequest("GET", "http://10.0.0.6:8080/internal/sessions", nil)
	node.SignRequest(req) // last, after every change to the URL and Host
	_, _ = http.DefaultClient.Do(req)

	stripPeerHeaders := func(h http.Header) {
		for name := range h {
			if cluster.IsPeerHeader(name) {
				h.Del(name)
			}
		}
	}
	_ = stripPeerHeaders
}
