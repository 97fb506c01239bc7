package main

import (
	"bytes"
	"testing"
)

// TestClusterFlagsAndEnvironment: the cluster's flags and their RAXOL_*
// variables set Options.Cluster; without them the server is one node.
func TestClusterFlagsAndEnvironment(t *testing.T) {
	o, _, err := parse(nil, env(nil), &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if o.Cluster.NATSURL != "" || o.Cluster.NodeID != "" {
		t.Fatalf("a cluster by default: %+v", o.Cluster)
	}
	o, _, err = parse([]string{"--cluster-nats", "nats://n1:4222,nats://n2:4222", "--node-id", "a",
		"--node-http-url", "http://10.0.0.5:8080", "--cluster-secret", "/run/secret"},
		env(map[string]string{
			"RAXOL_NODE_ID":            "ignored", // the flag wins
			"RAXOL_NODE_SSH_ADDR":      "10.0.0.5:2222",
			"RAXOL_CLUSTER_NATS_CREDS": "/run/nats.creds",
			"RAXOL_CLUSTER_NATS_CA":    "/run/ca.pem",
			"RAXOL_CLUSTER_NATS_CERT":  "/run/cert.pem",
			"RAXOL_CLUSTER_NATS_KEY":   "/run/key.pem",
		}), &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	c := o.Cluster
	if c.NATSURL != "nats://n1:4222,nats://n2:4222" || c.NodeID != "a" || c.HTTPURL != "http://10.0.0.5:8080" ||
		c.SSHAddr != "10.0.0.5:2222" || c.SecretFile != "/run/secret" || c.CredsFile != "/run/nats.creds" ||
		c.CAFile != "/run/ca.pem" || c.CertFile != "/run/cert.pem" || c.KeyFile != "/run/key.pem" {
		t.Fatalf("cluster options %+v", c)
	}
}
