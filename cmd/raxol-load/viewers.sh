#!/bin/bash
# viewers.sh: 100 browsers on one session's web view against 100 SSH joiners on one session
# (`raxol-load viewers`), each kind against a fresh raxol-ssh, alternated twice:
# docs/BENCHMARKS.md, "Browser observers against SSH joiners". Results in $OUT (/tmp/v/).
# Build first: go build -o /tmp/raxol-ssh ./cmd/raxol-ssh && go build -o /tmp/raxol-load ./cmd/raxol-load
set -u
N=${N:-100}; KEYS=${KEYS:-100}; OUT=${OUT:-/tmp/v}; RUNS=${RUNS:-2}
BIN=${BIN:-/tmp}
run() { kind=$1; out=$2; rm -rf $out && mkdir -p $out
  $BIN/raxol-ssh --ssh-addr 127.0.0.1:2710 --http-addr 127.0.0.1:8710 --data-dir $out/data --no-snapshots \
    --max-connections 3000 --max-per-ip 3000 --max-sessions-per-user 3000 --max-http-per-ip 3000 \
    --max-browsers-per-session 128 --resume-grace 0 --pprof-addr 127.0.0.1:6710 --log-level warn > $out/server.log 2>&1 &
  spid=$!; sleep 1
  $BIN/raxol-load viewers --kind $kind --n $N --keys $KEYS --ssh 127.0.0.1:2710 --metrics http://127.0.0.1:8710/metrics \
    --pid $spid --pprof http://127.0.0.1:6710 --profile-dir $out > $out/load.txt 2>&1
  cat /proc/loadavg >> $out/load.txt # the machine's load (1, 5, 15 min) when the run ended
  kill $spid; wait $spid 2>/dev/null; }
for i in $(seq 1 $RUNS); do
  run ssh $OUT/ssh-$i
  run browser $OUT/browser-$i
done
for i in $(seq 1 $RUNS); do for k in ssh browser; do echo "== $k-$i"; grep -v "^CPU profile" $OUT/$k-$i/load.txt; done; done
