#!/bin/bash
# hosted.sh: one Bubble Tea program (teaFloorModel) served by raxol-ssh through teaapp
# (`raxol-load hosted`) and by bare wish (`raxol-load floor --model tea`), under the same load,
# alternated twice: docs/BENCHMARKS.md, "A hosted Bubble Tea program against the floor".
# Results in /tmp/h/. Build first: go build -o /tmp/raxol-load ./cmd/raxol-load
set -u
S=${S:-300}; A=${A:-30}
LOAD="--sessions $S --parallel 32 --agents $A --hold 5s --settle 8s --calls 300 --keys 300 --typists 30 --typing 10s --closed-loop 10s"
run_hosted() { out=$1; rm -rf $out && mkdir -p $out
  /tmp/raxol-load hosted --ssh 127.0.0.1:2600 --http 127.0.0.1:8600 > $out/server.log 2>&1 &
  spid=$!; sleep 1
  /tmp/raxol-load --ssh 127.0.0.1:2600 --metrics http://127.0.0.1:8600/metrics --tool floor.search.type_into --read-tool floor.search.get_value $LOAD > $out/load.txt 2>&1
  kill $spid; wait $spid 2>/dev/null; }
run_floor() { out=$1; rm -rf $out && mkdir -p $out
  /tmp/raxol-load floor --model tea --ssh 127.0.0.1:2500 --http 127.0.0.1:8500 > $out/server.log 2>&1 &
  spid=$!; sleep 1
  /tmp/raxol-load --ssh 127.0.0.1:2500 --metrics http://127.0.0.1:8500/metrics --mcp-url http://127.0.0.1:8500/mcp --tool echo --read-tool "" $LOAD > $out/load.txt 2>&1
  kill $spid; wait $spid 2>/dev/null; }
run_hosted /tmp/h/hosted-1
run_floor /tmp/h/floor-1
run_hosted /tmp/h/hosted-2
run_floor /tmp/h/floor-2
for d in hosted-1 floor-1 hosted-2 floor-2; do echo "== $d"; grep -E "per session|idle CPU|per keystroke|keystroke round|typing|closed loop|per call" /tmp/h/$d/load.txt; done
