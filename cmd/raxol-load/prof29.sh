#!/bin/bash
# prof29.sh OUT [RAXOL_BIN]: the profiles behind issue 29's bounds (docs/BENCHMARKS.md), raxol-ssh
# and the floor under round3.sh's load, each with an 8 s CPU profile taken 4 s into the phase:
#   closed/  100 agents calling back to back (what a call costs: the MCP path, the frame);
#   paced/   100 agents at 5 calls/s, raxol with --agent-screen, and a 5 s runtime trace before
#            the CPU profile (go tool trace -pprof=sched OUT/paced/raxol/trace.out: who waited to run);
#   chars/   raxol's 50 typists typing x and Backspace in the search input, the floor's Tab and
#            Shift+Tab (keys that change as much of the screen: 14 and 9 bytes drawn).
# Read with: go tool pprof -top -cum OUT/closed/raxol/cpu.pprof
# Build first: go build -o /tmp/raxol-ssh ./cmd/raxol-ssh && go build -o /tmp/raxol-load ./cmd/raxol-load
set -u
OUT=$1; BIN=${2:-/tmp/raxol-ssh}; LOADBIN=${LOADBIN:-/tmp/raxol-load}
BASE="--sessions 1000 --parallel 32 --hold 5s --settle 8s --distinct-users --source-addrs 50 --busy-keys 10 --keys 0"
CLOSED="$BASE --agents 100 --calls 0 --closed-loop 20s"
PACED="$BASE --agents 100 --calls 0 --closed-loop 20s --paced 5"
CHARS="$BASE --agents 0 --calls 0 --typists 50 --typing 20s --closed-loop 0s"
# grab DIR PPROF_BASE MARKER TRACE: once MARKER is in DIR/load.txt, wait 4 s (a trace first when
# TRACE is 1), then an 8 s CPU profile.
grab() { until grep -q "$3" $1/load.txt 2>/dev/null; do sleep 0.2; done; sleep 4
  if [ "$4" = 1 ]; then curl -s "$2/debug/pprof/trace?seconds=5" -o $1/trace.out; fi
  curl -s "$2/debug/pprof/profile?seconds=8" -o $1/cpu.pprof; }
run_raxol() { out=$1; marker=$2; trace=$3; shift 3; rm -rf $out && mkdir -p $out/data
  $BIN --data-dir $out/data --ssh-addr 127.0.0.1:2400 --http-addr 127.0.0.1:8400 --pprof-addr 127.0.0.1:6400 --max-connections 30000 --max-per-ip 30000 --max-sessions-per-user 30000 --max-http-per-ip 3000 --mcp-tool-calls-per-second 100000 --log-level warn > $out/server.log 2>&1 &
  spid=$!; sleep 1
  grab $out http://127.0.0.1:6400 "$marker" $trace & gpid=$!
  $LOADBIN --ssh 127.0.0.1:2400 --metrics http://127.0.0.1:8400/metrics --pprof http://127.0.0.1:6400 --profile-dir $out --pid $spid "$@" > $out/load.txt 2>&1
  wait $gpid; kill $spid; wait $spid 2>/dev/null; }
run_floor() { out=$1; marker=$2; trace=$3; shift 3; rm -rf $out && mkdir -p $out
  $LOADBIN floor --ssh 127.0.0.1:2500 --http 127.0.0.1:8500 > $out/server.log 2>&1 &
  spid=$!; sleep 1
  grab $out http://127.0.0.1:8500 "$marker" $trace & gpid=$!
  $LOADBIN --ssh 127.0.0.1:2500 --metrics http://127.0.0.1:8500/metrics --mcp-url http://127.0.0.1:8500/mcp --tool echo --read-tool "" --pprof http://127.0.0.1:8500 --profile-dir $out --pid $spid "$@" > $out/load.txt 2>&1
  wait $gpid; kill $spid; wait $spid 2>/dev/null; }
run_raxol $OUT/closed/raxol "memory per attached agent" 0 $CLOSED
run_floor $OUT/closed/floor "memory per attached agent" 0 $CLOSED
run_raxol $OUT/paced/raxol "memory per attached agent" 1 $PACED --agent-screen
run_floor $OUT/paced/floor "memory per attached agent" 1 $PACED
run_raxol $OUT/chars/raxol "memory per session, idle" 0 $CHARS --typing-keys 'chars:\t'
run_floor $OUT/chars/floor "memory per session, idle" 0 $CHARS
for d in closed/raxol closed/floor paced/raxol paced/floor chars/raxol chars/floor; do
  echo "== $d"; grep -E "closed loop|paced|agent→screen|of it after|typing,|first failure" $OUT/$d/load.txt
done
