#!/bin/bash
# scale.sh: a write call's server CPU with 100 agents on 100 and on 1,000 sessions, alternated
# twice: in a closed loop (each server as fast as it goes) and paced at 25 calls/s per agent
# (the same 2,500 calls/s offered to both): docs/BENCHMARKS.md, "CPU per call at 1,000 sessions
# against 100". Results in /tmp/m/scale-*. Extra raxol-ssh flags: SERVER_FLAGS.
# Build first: go build -o /tmp/raxol-ssh ./cmd/raxol-ssh && go build -o /tmp/raxol-load ./cmd/raxol-load
set -u
one() { S=$1; tag=$2; shift 2; out=/tmp/m/scale-$tag-$S; rm -rf $out && mkdir -p $out/data
  /tmp/raxol-ssh --data-dir $out/data --ssh-addr 127.0.0.1:2400 --http-addr 127.0.0.1:8400 --max-connections 30000 --max-per-ip 30000 --max-sessions-per-user 30000 --max-http-per-ip 3000 --mcp-tool-calls-per-second 100000 --log-level warn ${SERVER_FLAGS:-} > $out/server.log 2>&1 &
  spid=$!; sleep 1
  /tmp/raxol-load --ssh 127.0.0.1:2400 --metrics http://127.0.0.1:8400/metrics --sessions $S --parallel 32 --agents 100 --hold 5s --settle 15s --calls 100 --keys 0 --closed-loop 20s "$@" > $out/load.txt 2>&1
  kill $spid; wait $spid 2>/dev/null
  echo "$tag, $S sessions: $(grep -E '^(closed loop|paced)' $out/load.txt | sed 's/.*calls, //')"; }
for i in 1 2; do
  one 100 closed$i; one 1000 closed$i
  one 100 paced$i --paced 25; one 1000 paced$i --paced 25
done
