#!/usr/bin/env bash
# ci/campaigns/serve_bench.sh STORE OUT [SECONDS]
#
# `twinbench serve` under load (docs/serve.md, "Speed"), over a store the fleet
# bench filled (ci/campaigns/fleet_bench.sh calls it for each backend; any
# store of twinbench runs will do). For the index, a series page over a year
# of nights and the newest group's pair page:
#   1. cold: the first request's time, each page computed from the store;
#   2. quiet: 16 concurrent clients for SECONDS (default 30) each (wrk -c16,
#      latency distribution: median and p99), the store unchanged;
#   3. writing: the same while a writer stores a real run every few seconds
#      into the same store (`twinbench run --preset tiny`), so that pages are
#      computed again as the store changes;
# and the server's resident memory (VmRSS, sampled every 0.2 s) at start-up
# and at its highest. Writes OUT/serve.json and OUT/serve.md (with the
# command, commit, host and date). A benchmark, not a test: the figures mean
# something only on an idle machine.
set -euo pipefail
cd "$(dirname "$0")/../.."
store=$1
out=$2
seconds=${3:-30}
tb=$PWD/build/harness/twinbench
command -v wrk >/dev/null || { echo "serve_bench.sh: wrk is missing (ci/setup.sh installs it)" >&2; exit 1; }
[[ -x $tb ]] || { echo "serve_bench.sh: build first (bash ci/build.sh)" >&2; exit 1; }
mkdir -p "$out"
out=$(cd "$out" && pwd)
export TWINBENCH_THREADS=1

"$tb" serve --db "$store" --listen 127.0.0.1:0 --wait-ms 600000 >"$out/serve.out" 2>"$out/serve.log" &
server=$!
sampler=
writer=
cleanup() {
  [[ -n $writer ]] && kill "$writer" 2>/dev/null || true
  [[ -n $sampler ]] && kill "$sampler" 2>/dev/null || true
  kill "$server" 2>/dev/null || true
  wait 2>/dev/null || true
}
trap cleanup EXIT
url=
for _ in $(seq 600); do
  url=$(grep -o 'http://[0-9.:]*/' "$out/serve.out" 2>/dev/null || true)
  [[ -n $url ]] && break
  sleep 0.1
done
[[ -n $url ]] || { echo "serve_bench.sh: the server did not start:" >&2; cat "$out/serve.log" >&2; exit 1; }
curl -sf "${url}health" >/dev/null
rss() { awk '/^VmRSS/ {print $2}' "/proc/$server/status"; }
startup_kib=$(rss)
(while kill -0 "$server" 2>/dev/null; do rss; sleep 0.2; done) >"$out/rss.txt" &
sampler=$!

# The pages: the index, the series of the newest run over 365 nights, the newest group's pair.
json=$(curl -sf "${url}runs.json?limit=1")
read -r case_name variant hardware group < <(python3 -c '
import json, sys
r = json.loads(sys.argv[1])["runs"][0]
print(r["case"], r["variant"], r["hardware_fingerprint"], r["group_id"])' "$json")
enc() { python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$1"; }
declare -A pages=(
  [index]=""
  [series]="series?case=$(enc "$case_name")&variant=$(enc "$variant")&hardware=$(enc "$hardware")&metric=step_time_median_s&days=365"
  [pair]="pair/$(enc "$group")/"
)
results=()
for name in index series pair; do
  t=$(curl -s -o /dev/null -w '%{http_code} %{time_total}' "${url}${pages[$name]}")
  [[ ${t%% *} == 200 ]] || { echo "serve_bench.sh: $name answered ${t%% *}" >&2; exit 1; }
  results+=("cold $name ${t#* }")
  echo "serve_bench.sh: $name, cold: ${t#* } s" >&2
done

# wrk NAME PHASE: 16 connections for $seconds on one page; median and p99 latency (s) and requests/s.
load() {
  local name=$1 phase=$2
  wrk -t 4 -c 16 -d "${seconds}s" --latency --timeout 30s "${url}${pages[$name]}" >"$out/wrk-$phase-$name.txt"
  python3 - "$out/wrk-$phase-$name.txt" "$phase" "$name" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
unit = {"us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0}
def at(p):
    m = re.search(rf"^\s+{p}%\s+([\d.]+)(us|ms|s|m)\s*$", text, re.M)
    return float(m.group(1)) * unit[m.group(2)]
bad = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
errors = re.search(r"Socket errors: .*", text)
rate = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
print(sys.argv[2], sys.argv[3], at(50), at(99), rate, bad.group(1) if bad else 0,
      "errors" if errors else "ok")
PY
}
for name in index series pair; do
  line=$(load "$name" quiet)
  results+=("$line")
  echo "serve_bench.sh: $line" >&2
done

# The same while a writer stores real runs into the store.
db_store=$store
(while true; do "$tb" run --preset tiny --variant functional train.steps=10 --no-progress --group serve-bench-writer \
   --db "$db_store" >/dev/null 2>>"$out/writer.log" || true; done) &
writer=$!
sleep 3
for name in index series pair; do
  line=$(load "$name" writing)
  results+=("$line")
  echo "serve_bench.sh: $line" >&2
done
kill "$writer" 2>/dev/null || true
wait "$writer" 2>/dev/null || true
writer=
written=$(curl -sf "${url}runs.json?group=serve-bench-writer&limit=500" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["runs"]))')
kill "$sampler" 2>/dev/null || true
peak_kib=$(sort -n "$out/rss.txt" | tail -1)

python3 - "$out" "$store" "$seconds" "$startup_kib" "$peak_kib" "$written" "$(git rev-parse HEAD)" "$(hostname)" \
  "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$*" "${results[@]}" <<'PY'
import json, sys
out, store, seconds, startup, peak, written, commit, host, date, args = sys.argv[1:11]
cold, load = {}, {}
for r in sys.argv[11:]:
    f = r.split()
    if f[0] == "cold":
        cold[f[1]] = float(f[2])
    else:
        load.setdefault(f[0], {})[f[1]] = {"median_s": float(f[2]), "p99_s": float(f[3]), "requests_per_s": float(f[4]),
                                           "non_2xx": int(f[5]), "socket": f[6]}
doc = {"command": f"ci/campaigns/serve_bench.sh {args}", "commit": commit, "host": host, "date": date,
       "store": store.split("?")[0], "clients": 16, "seconds_per_load": int(seconds), "cold_s": cold, "load": load,
       "rss_startup_mib": int(startup) / 1024, "rss_peak_mib": int(peak) / 1024,
       "rss_above_startup_mib": (int(peak) - int(startup)) / 1024, "runs_written_meanwhile": int(written)}
json.dump(doc, open(f"{out}/serve.json", "w"), indent=2)
lines = [f"`{doc['command']}` at {commit[:12]} on {host}, {date}; 16 concurrent clients, {seconds} s per page",
         "",
         "| page | cold (s) | quiet: median (ms) | quiet: p99 (ms) | writing: median (ms) | writing: p99 (ms) |",
         "|---|---:|---:|---:|---:|---:|"]
for name in ("index", "series", "pair"):
    q, w = load["quiet"][name], load["writing"][name]
    lines.append(f"| {name} | {cold[name]:.2f} | {1e3 * q['median_s']:.1f} | {1e3 * q['p99_s']:.1f} | "
                 f"{1e3 * w['median_s']:.1f} | {1e3 * w['p99_s']:.1f} |")
lines += ["", f"Server memory: {doc['rss_startup_mib']:.0f} MiB at start-up, {doc['rss_peak_mib']:.0f} MiB at most "
          f"({doc['rss_above_startup_mib']:.0f} MiB above); {written} runs stored by the writer meanwhile."]
open(f"{out}/serve.md", "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
