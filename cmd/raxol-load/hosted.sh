#!/bin/bash
# hosted.sh: one Bubble Tea program (teaFloorModel) served by raxol-ssh through teaapp
# (`raxol-load hosted`) and by bare wish (`raxol-load floor --model tea`), under the same load,
# alternated twice: docs/BENCHMARKS.md, "A hosted Bubble Tea program against the floor".
# `raxol-load hosted` runs the GC pacer the raxol-ssh command runs (internal/gcpace); with
# NOPACE=1 a third hosted run goes without it (--gc-headroom-mib 0: Go's own pacing, what a
# program's own main that calls server.ListenAndServe gets).
# Results in $OUT (default /tmp/h/; each run's heap, goroutine and allocs profiles with its
# load.txt: split one with `raxol-load heapsplit --per $S /tmp/h/hosted-1/idle-heap.pprof`).
# Build first: go build -o /tmp/raxol-load ./cmd/raxol-load (or set LOADBIN); PORTS=N adds N to
# every port (2600, 8600, 6600 hosted; 2500, 8500 the floor), for a run beside another.
set -u
S=${S:-300}; A=${A:-30}; NOPACE=${NOPACE:-0}; OUT=${OUT:-/tmp/h}; LOADBIN=${LOADBIN:-/tmp/raxol-load}; PORTS=${PORTS:-0}
HS=127.0.0.1:$((2600+PORTS)); HH=127.0.0.1:$((8600+PORTS)); HP=127.0.0.1:$((6600+PORTS))
FS=127.0.0.1:$((2500+PORTS)); FH=127.0.0.1:$((8500+PORTS))
LOAD="--sessions $S --parallel 32 --agents $A --hold 5s --settle 8s --calls 300 --keys 300 --typists 30 --typing 10s --closed-loop 10s"
run_hosted() { out=$1; shift; rm -rf $out && mkdir -p $out
  $LOADBIN hosted --ssh $HS --http $HH --pprof-addr $HP "$@" > $out/server.log 2>&1 &
  spid=$!; sleep 1
  $LOADBIN --ssh $HS --metrics http://$HH/metrics --pprof http://$HP --profile-dir $out --pid $spid --tool floor.search.type_into --read-tool floor.search.get_value $LOAD > $out/load.txt 2>&1
  kill $spid; wait $spid 2>/dev/null; }
run_floor() { out=$1; rm -rf $out && mkdir -p $out
  $LOADBIN floor --model tea --ssh $FS --http $FH > $out/server.log 2>&1 &
  spid=$!; sleep 1
  $LOADBIN --ssh $FS --metrics http://$FH/metrics --pprof http://$FH --profile-dir $out --pid $spid --mcp-url http://$FH/mcp --tool echo --read-tool "" $LOAD > $out/load.txt 2>&1
  kill $spid; wait $spid 2>/dev/null; }
runs="hosted-1 floor-1 hosted-2 floor-2"
run_hosted $OUT/hosted-1
run_floor $OUT/floor-1
run_hosted $OUT/hosted-2
run_floor $OUT/floor-2
if [ "$NOPACE" = 1 ]; then run_hosted $OUT/hosted-nopace --gc-headroom-mib 0; runs="$runs hosted-nopace"; fi
for d in $runs; do echo "== $d"; grep -E "per session|idle CPU|per keystroke|keystroke round|typing|closed loop|per call" $OUT/$d/load.txt; done
