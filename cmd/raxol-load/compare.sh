#!/bin/bash
# compare.sh: raxol-ssh (/tmp/raxol-ssh, go build ./cmd/raxol-ssh) and the floor (raxol-load floor)
# under the same load, alternated twice, then both paced at 5 calls/s per agent (raxol-ssh
# with agent->screen), then raxol-ssh paced at 20 calls/s per agent:
# docs/BENCHMARKS.md, "Agents and typists against the floor". Results in /tmp/m/.
# Build first: go build -o /tmp/raxol-ssh ./cmd/raxol-ssh && go build -o /tmp/raxol-load ./cmd/raxol-load
set -u
S=1000; A=100
run_raxol() { out=$1; shift; rm -rf $out && mkdir -p $out/data
  /tmp/raxol-ssh --data-dir $out/data --ssh-addr 127.0.0.1:2400 --http-addr 127.0.0.1:8400 --max-connections 30000 --max-per-ip 30000 --max-sessions-per-user 30000 --max-http-per-ip 3000 --mcp-tool-calls-per-second 100000 --log-level warn > $out/server.log 2>&1 &
  spid=$!; sleep 1
  /tmp/raxol-load --ssh 127.0.0.1:2400 --metrics http://127.0.0.1:8400/metrics --sessions $S --parallel 32 --agents $A --hold 5s --settle 15s --calls 400 --keys 500 "$@" > $out/load.txt 2>&1
  kill $spid; wait $spid 2>/dev/null; }
run_floor() { out=$1; shift; rm -rf $out && mkdir -p $out
  /tmp/raxol-load floor --ssh 127.0.0.1:2500 --http 127.0.0.1:8500 > $out/server.log 2>&1 &
  spid=$!; sleep 1
  /tmp/raxol-load --ssh 127.0.0.1:2500 --metrics http://127.0.0.1:8500/metrics --mcp-url http://127.0.0.1:8500/mcp --tool echo --read-tool "" --sessions $S --parallel 32 --agents $A --hold 5s --settle 15s --calls 400 --keys 500 "$@" > $out/load.txt 2>&1
  kill $spid; wait $spid 2>/dev/null; }
run_raxol /tmp/m/raxol-1 --typists 50 --typing 15s --closed-loop 20s
run_floor /tmp/m/floor-1 --typists 50 --typing 15s --closed-loop 20s
run_raxol /tmp/m/raxol-2 --typists 50 --typing 15s --closed-loop 20s
run_floor /tmp/m/floor-2 --typists 50 --typing 15s --closed-loop 20s
run_raxol /tmp/m/raxol-p5 --closed-loop 15s --paced 5 --agent-screen
run_floor /tmp/m/floor-p5 --closed-loop 15s --paced 5
run_raxol /tmp/m/raxol-s --closed-loop 20s --paced 20 --agent-screen
for d in raxol-1 floor-1 raxol-2 floor-2 raxol-p5 floor-p5 raxol-s; do echo "== $d"; grep -E "per session|idle CPU|per keystroke|typing|closed loop|paced|agent|answer|keystroke round" /tmp/m/$d/load.txt; done
