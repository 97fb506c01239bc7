#!/bin/bash
# round3.sh OUT [RAXOL_BIN]: issue 29's measures, raxol-ssh and the floor alternated in one run
# (docs/BENCHMARKS.md, "Where a session's memory goes" and "Against the floor").
# Build first: go build -o /tmp/raxol-ssh ./cmd/raxol-ssh && go build -o /tmp/raxol-load ./cmd/raxol-load
#   1. twice each, alternated: 1,000 sessions (a user, a key and one of 50 loopback source addresses
#      each), every one typed into (10 keys), 100 agents attached; memory per session and per
#      attached agent (live after a forced collection), typing (50 typists), closed-loop calls,
#      then memory again 8 s after the load;
#   2. paced at 5 calls/s per agent (raxol-ssh with agent->screen), alternated.
# Each run's output, heap/goroutine/allocs profiles and server log are in OUT/<run>/.
set -u
OUT=$1; BIN=${2:-/tmp/raxol-ssh}; LOADBIN=${LOADBIN:-/tmp/raxol-load}
BASE="--sessions 1000 --parallel 32 --agents 100 --hold 5s --settle 8s --distinct-users --source-addrs 50 --busy-keys 10"
MEM="$BASE --calls 400 --keys 0 --typists 50 --typing 15s --closed-loop 20s --after-settle 8s"
PACED="$BASE --calls 0 --keys 0 --closed-loop 20s --paced 5"
run_raxol() { out=$1; shift; rm -rf $out && mkdir -p $out/data
  $BIN --data-dir $out/data --ssh-addr 127.0.0.1:2400 --http-addr 127.0.0.1:8400 --pprof-addr 127.0.0.1:6400 --max-connections 30000 --max-per-ip 30000 --max-sessions-per-user 30000 --max-http-per-ip 3000 --mcp-tool-calls-per-second 100000 --log-level warn > $out/server.log 2>&1 &
  spid=$!; sleep 1
  $LOADBIN --ssh 127.0.0.1:2400 --metrics http://127.0.0.1:8400/metrics --pprof http://127.0.0.1:6400 --profile-dir $out --pid $spid "$@" > $out/load.txt 2>&1
  kill $spid; wait $spid 2>/dev/null; }
run_floor() { out=$1; shift; rm -rf $out && mkdir -p $out
  $LOADBIN floor --ssh 127.0.0.1:2500 --http 127.0.0.1:8500 > $out/server.log 2>&1 &
  spid=$!; sleep 1
  $LOADBIN --ssh 127.0.0.1:2500 --metrics http://127.0.0.1:8500/metrics --mcp-url http://127.0.0.1:8500/mcp --tool echo --read-tool "" --pprof http://127.0.0.1:8500 --profile-dir $out --pid $spid "$@" > $out/load.txt 2>&1
  kill $spid; wait $spid 2>/dev/null; }
run_raxol $OUT/raxol-1 $MEM
run_floor $OUT/floor-1 $MEM
run_raxol $OUT/raxol-2 $MEM
run_floor $OUT/floor-2 $MEM
run_raxol $OUT/raxol-p5 $PACED --agent-screen
run_floor $OUT/floor-p5 $PACED
run_raxol $OUT/raxol-p5b $PACED --agent-screen
run_floor $OUT/floor-p5b $PACED
for d in raxol-1 floor-1 raxol-2 floor-2 raxol-p5 floor-p5 raxol-p5b floor-p5b; do
  echo "== $d"; grep -E "memory per|idle CPU|typing|closed loop|paced|agent→screen|first failure|no redraw" $OUT/$d/load.txt
done
