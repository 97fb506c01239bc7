#!/bin/bash
# keys29.sh OUT [RAXOL_BIN]: issue 29's keystroke measure alone, raxol-ssh and the floor
# alternated three times in one run: 1,000 sessions (a user, a key and one of 50 loopback
# source addresses each, every one typed into: 10 keys), no agents, then 50 typists for 15 s
# (two-row keys: the floor's key and ours change as much of the screen); CPU per keystroke
# gross and net of the idle CPU measured just before.
# RAXOL_TYPING="chars:\t" has raxol-ssh's typists type x and Backspace in the demo's search
# input instead (a key that changes one cell, 14 bytes drawn, as the floor's Tab draws 9):
# the net CPU per keystroke for keys that change as much of the screen as the floor's.
# Build first: go build -o /tmp/raxol-ssh ./cmd/raxol-ssh && go build -o /tmp/raxol-load ./cmd/raxol-load
set -u
OUT=$1; BIN=${2:-/tmp/raxol-ssh}; LOADBIN=${LOADBIN:-/tmp/raxol-load}
KEYS="--sessions 1000 --parallel 32 --agents 0 --hold 5s --settle 8s --distinct-users --source-addrs 50 --busy-keys 10 --calls 0 --keys 0 --typists 50 --typing 15s --closed-loop 0s"
run_raxol() { out=$1; rm -rf $out && mkdir -p $out/data
  $BIN --data-dir $out/data --ssh-addr 127.0.0.1:2400 --http-addr 127.0.0.1:8400 --max-connections 30000 --max-per-ip 30000 --max-sessions-per-user 30000 --max-http-per-ip 3000 --log-level warn > $out/server.log 2>&1 &
  spid=$!; sleep 1
  $LOADBIN --ssh 127.0.0.1:2400 --metrics http://127.0.0.1:8400/metrics --pid $spid $KEYS --typing-keys "${RAXOL_TYPING:-tab}" > $out/load.txt 2>&1
  kill $spid; wait $spid 2>/dev/null; }
run_floor() { out=$1; rm -rf $out && mkdir -p $out
  $LOADBIN floor --ssh 127.0.0.1:2500 --http 127.0.0.1:8500 > $out/server.log 2>&1 &
  spid=$!; sleep 1
  $LOADBIN --ssh 127.0.0.1:2500 --metrics http://127.0.0.1:8500/metrics --mcp-url http://127.0.0.1:8500/mcp --tool echo --read-tool "" --pid $spid $KEYS > $out/load.txt 2>&1
  kill $spid; wait $spid 2>/dev/null; }
for i in 1 2 3; do
  run_raxol $OUT/raxol-$i; run_floor $OUT/floor-$i
done
for i in 1 2 3; do for d in raxol-$i floor-$i; do
  echo "== $d (load average $(cut -d' ' -f1-3 /proc/loadavg))"; grep -E "idle CPU|typing|no redraw|first failure" $OUT/$d/load.txt
done; done
