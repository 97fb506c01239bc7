#!/bin/bash
# tenk.sh OUT [RAXOL_BIN]: 10,000 idle sessions (a user, a key and one of 50 loopback source
# addresses each; 100 with agents), raxol-ssh then the floor: memory per session (with a
# breakdown after a forced collection) and idle CPU (docs/BENCHMARKS.md, "10,000 idle sessions").
# Needs ulimit -n above 20,000 for the load tool. Build first as for round3.sh.
OUT=$1; BIN=${2:-/tmp/raxol-ssh}; LOADBIN=${LOADBIN:-/tmp/raxol-load}
LOAD="--sessions 10000 --parallel 64 --agents 100 --hold 20s --settle 15s --keys 200 --calls 0 --distinct-users --source-addrs 50"
out=$OUT/raxol; rm -rf $out && mkdir -p $out/data
$BIN --data-dir $out/data --ssh-addr 127.0.0.1:2440 --http-addr 127.0.0.1:8440 --pprof-addr 127.0.0.1:6440 --max-connections 30000 --max-per-ip 30000 --max-sessions-per-user 30000 --max-http-per-ip 3000 --log-level warn > $out/server.log 2>&1 &
spid=$!; sleep 1
$LOADBIN --ssh 127.0.0.1:2440 --metrics http://127.0.0.1:8440/metrics --pprof http://127.0.0.1:6440 --profile-dir $out --pid $spid $LOAD > $out/load.txt 2>&1
kill $spid; wait $spid 2>/dev/null
out=$OUT/floor; rm -rf $out && mkdir -p $out
$LOADBIN floor --ssh 127.0.0.1:2540 --http 127.0.0.1:8540 > $out/server.log 2>&1 &
spid=$!; sleep 1
$LOADBIN --ssh 127.0.0.1:2540 --metrics http://127.0.0.1:8540/metrics --mcp-url http://127.0.0.1:8540/mcp --tool echo --read-tool "" --pprof http://127.0.0.1:8540 --profile-dir $out --pid $spid $LOAD > $out/load.txt 2>&1
kill $spid; wait $spid 2>/dev/null
for d in raxol floor; do echo "== $d"; grep -E "opened|per session|idle CPU|memory per|keystroke" $OUT/$d/load.txt; done
