package main

import (
	"bytes"
	"testing"
)

// TestClusterReplicasFlag: --cluster-replicas and RAXOL_CLUSTER_REPLICAS
// set Options.Cluster.Replicas; without either it is 0 (the default: 3
// when the NATS cluster has three or more JetStream servers, else 1).
func TestClusterReplicasFlag(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		want int
	}{
		{"default", nil, nil, 0},
		{"flag", []string{"--cluster-replicas", "3"}, nil, 3},
		{"environment", nil, map[string]string{"RAXOL_CLUSTER_REPLICAS": "5"}, 5},
		{"the flag wins", []string{"--cluster-replicas", "1"}, map[string]string{"RAXOL_CLUSTER_REPLICAS": "3"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, _, err := parse(tc.args, env(tc.env), &bytes.Buffer{})
			if err != nil {
				t.Fatal(err)
			}
			if o.Cluster.Replicas != tc.want {
				t.Fatalf("Options.Cluster.Replicas = %d, want %d", o.Cluster.Replicas, tc.want)
			}
			if got := o.Setting("Options.Cluster.Replicas"); got != "--cluster-replicas" {
				t.Fatalf("errors name Options.Cluster.Replicas %q, want --cluster-replicas", got)
			}
		})
	}
}
