#!/bin/bash
# callgrind.sh raxol|floor OUT [KEYS]
#
# Instructions per keystroke and per tool call, counted by valgrind's
# callgrind rather than timed: counts do not move with the host's steal time
# or the other core's load, so a ratio against the floor holds to a few
# percent where CPU seconds move by 20-30% (docs/BENCHMARKS.md, "Instruction
# counts"). User-space instructions only: the kernel's side of each read and
# write is not in them.
#
# The server runs under callgrind (50x slower; valgrind runs one thread at a
# time), 100 sessions, 20 agents, 20 typists. A dump is taken whenever the
# server gathers its metrics, that is at every /metrics scrape of the load
# tool, which scrapes at the start and end of each phase: the first dump of
# a scrape's burst covers the time since the scrape before. The hold's dump
# gives the idle rate, subtracted like the load tool's "net of idle". KEYS
# (default 0) is --keys: 500 leaves the typists' focus where compare.sh's
# round trips leave it (half of them restyle a box border on every key).
#
# GODEBUG: valgrind 3.19 cannot decode RDTSCP (Go's cputicks uses it when the
# CPU has it), and async preemption's signals slow it down further.
set -e
who=$1; out=$2; keys=${3:-0}
cd "$(dirname "$0")/../.."
go build -o /tmp/raxol-ssh ./cmd/raxol-ssh
go build -o /tmp/raxol-load ./cmd/raxol-load
rm -rf "$out" && mkdir -p "$out/d"
vg=(env GODEBUG=asyncpreemptoff=1,cpu.rdtscp=off valgrind --tool=callgrind "--callgrind-out-file=$out/cg.out" --dump-instr=no "--dump-before=*prometheus.(*Registry).Gather")
extra=()
if [ "$who" = raxol ]; then
  "${vg[@]}" /tmp/raxol-ssh --data-dir "$out/d" --ssh-addr 127.0.0.1:2700 --http-addr 127.0.0.1:8700 \
    --max-connections 30000 --max-per-ip 30000 --max-sessions-per-user 30000 --max-http-per-ip 3000 \
    --mcp-tool-calls-per-second 100000 --log-level warn > "$out/server.log" 2>&1 &
else
  "${vg[@]}" /tmp/raxol-load floor --ssh 127.0.0.1:2700 --http 127.0.0.1:8700 > "$out/server.log" 2>&1 &
  extra=(--mcp-url http://127.0.0.1:8700/mcp --tool echo --read-tool "")
fi
vpid=$!
for _ in $(seq 1 60); do (exec 3<>/dev/tcp/127.0.0.1/8700) 2>/dev/null && break; sleep 1; done
sleep 2
/tmp/raxol-load --ssh 127.0.0.1:2700 --metrics http://127.0.0.1:8700/metrics "${extra[@]}" --sessions 100 --parallel 8 \
  --agents 20 --hold 10s --settle 15s --calls 0 --keys "$keys" --typists 20 --typing 15s --closed-loop 15s > "$out/load.txt" 2>&1 || true
kill $vpid; wait $vpid 2>/dev/null || true
python3 - "$out" <<'PY'
import glob, os, re, sys
d = sys.argv[1]
rows = []
for f in sorted(glob.glob(d + "/cg.out.*"), key=lambda f: int(f.rsplit(".", 1)[1])):
    m = re.search(r"^summary:\s*(\d+)", open(f).read(), re.M)
    rows.append((os.stat(f).st_mtime, int(m.group(1)) if m else 0))
bursts = []  # [time, the first dump's count]: one burst per scrape time
for t, ir in rows:
    if not bursts or t - last >= 0.5:
        bursts.append([t, ir])
    last = t
load = open(d + "/load.txt").read()
hold = float(re.search(r"idle CPU over ([\d.]+)s", load).group(1))
typing = re.search(r"typing, \d+ typists for ([\d.]+)s: (\d+) keys", load)
loop = re.search(r"closed loop, \d+ agents for ([\d.]+)s: (\d+) calls", load)
# The last two bursts end typing and the closed loop; the hold's is the one
# that came closest to --hold after the burst before it.
hold_burst = min(range(1, len(bursts) - 2), key=lambda i: abs(bursts[i][0] - bursts[i - 1][0] - hold))
rate = bursts[hold_burst][1] / hold
for name, ir, m in (("key", bursts[-2][1], typing), ("call", bursts[-1][1], loop)):
    secs, n = float(m.group(1)), int(m.group(2))
    print(f"{name}: {n} in {secs:.1f} s: {ir / n / 1e3:.0f}k instructions gross, "
          f"{(ir - rate * secs) / n / 1e3:.0f}k net of idle ({rate / 1e6:.1f}M a second idle)")
PY
