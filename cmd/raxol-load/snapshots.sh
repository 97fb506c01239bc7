#!/bin/bash
# snapshots.sh OUT [server flags] -- [raxol-load flags]
#
# One raxol-ssh run under cmd/raxol-load with a fresh --data-dir (so saved
# sessions start empty), for comparing saving on and off (--no-snapshots):
# docs/BENCHMARKS.md, "Saving sessions". Builds both binaries into /tmp.
set -e
out=$1; shift
sflags=(); while [ "$1" != "--" ]; do sflags+=("$1"); shift; done; shift
cd "$(dirname "$0")/../.."
go build -o /tmp/rx-snap ./cmd/raxol-ssh
go build -o /tmp/raxol-load ./cmd/raxol-load
rm -rf "$out" && mkdir -p "$out/data"
/tmp/rx-snap --data-dir "$out/data" --ssh-addr 127.0.0.1:2400 --http-addr 127.0.0.1:8400 \
  --max-connections 30000 --max-per-ip 30000 --max-sessions-per-user 30000 --max-http-per-ip 3000 \
  --mcp-tool-calls-per-second 100000 --log-level warn "${sflags[@]}" > "$out/server.log" 2>&1 &
spid=$!; sleep 1
/tmp/raxol-load --ssh 127.0.0.1:2400 --metrics http://127.0.0.1:8400/metrics "$@" > "$out/load.txt" 2>&1 || true
curl -s http://127.0.0.1:8400/metrics | grep -E '^raxol_snapshot|^raxol_sessions_restored' > "$out/snapmetrics.txt" || true
ls -la "$out/data" > "$out/datadir.txt"
cat /proc/$spid/io > "$out/io.txt"
ps -o cputime= -p $spid > "$out/cpu.txt"
kill $spid; wait $spid 2>/dev/null || true
