#!/bin/bash
# hosted.sh: one Bubble Tea program (teaFloorModel) served by raxol-ssh through teaapp
# (`raxol-load hosted`) and by bare wish (`raxol-load floor --model tea`), under the same load,
# alternated twice: docs/BENCHMARKS.md, "A hosted Bubble Tea program against the floor".
# `raxol-load hosted` runs the GC pacer the raxol-ssh command runs (internal/gcpace); with
# NOPACE=1 a third hosted run goes without it (--gc-headroom-mib 0: Go's own pacing, what a
# program's own main that calls server.ListenAndServe gets).
# Results in /tmp/h/ (each run's heap, goroutine and allocs profiles with its load.txt: split one
# with `raxol-load heapsplit --per $S /tmp/h/hosted-1/idle-heap.pprof`).
# Build first: go build -o /tmp/raxol-load ./cmd/raxol-load
set -u
S=${S:-300}; A=${A:-30}; NOPACE=${NOPACE:-0}
LOAD="--sessions $S --parallel 32 --agents $A --hold 5s --settle 8s --calls 300 --keys 300 --typists 30 --typing 10s --closed-loop 10s"
run_hosted() { out=$1; shift; rm -rf $out && mkdir -p $out
  /tmp/raxol-load hosted --ssh 127.0.0.1:2600 --http 127.0.0.1:8600 --pprof-addr 127.0.0.1:6600 "$@" > $out/server.log 2>&1 &
  spid=$!; sleep 1
  /tmp/raxol-load --ssh 127.0.0.1:2600 --metrics http://127.0.0.1:8600/metrics --pprof http://127.0.0.1:6600 --profile-dir $out --pid $spid --tool floor.search.type_into --read-tool floor.search.get_value $LOAD > $out/load.txt 2>&1
  kill $spid; wait $spid 2>/dev/null; }
run_floor() { out=$1; rm -rf $out && mkdir -p $out
  /tmp/raxol-load floor --model tea --ssh 127.0.0.1:2500 --http 127.0.0.1:8500 > $out/server.log 2>&1 &
  spid=$!; sleep 1
  /tmp/raxol-load --ssh 127.0.0.1:2500 --metrics http://127.0.0.1:8500/metrics --pprof http://127.0.0.1:8500 --profile-dir $out --pid $spid --mcp-url http://127.0.0.1:8500/mcp --tool echo --read-tool "" $LOAD > $out/load.txt 2>&1
  kill $spid; wait $spid 2>/dev/null; }
runs="hosted-1 floor-1 hosted-2 floor-2"
run_hosted /tmp/h/hosted-1
run_floor /tmp/h/floor-1
run_hosted /tmp/h/hosted-2
run_floor /tmp/h/floor-2
if [ "$NOPACE" = 1 ]; then run_hosted /tmp/h/hosted-nopace --gc-headroom-mib 0; runs="$runs hosted-nopace"; fi
for d in $runs; do echo "== $d"; grep -E "per session|idle CPU|per keystroke|keystroke round|typing|closed loop|per call" /tmp/h/$d/load.txt; done
