#!/usr/bin/env bash
# Run-level noise of this machine per measuring mode (docs/verdicts.md, "Less
# noise"): K separate processes of a case per mode, the CV of their per-run
# median step times, and for A/A pairs (sequential AB/BA rounds vs duet, both
# sides at once on their own core) the spread of ln(B/A), which is what a
# paired verdict has to beat. Not part of the test suite; run on an idle machine.
# Both tables are printed and written as blocks `runs` and `pairs` of
# docs/results/noise_modes.md (RESULTS: another file; ci/campaign_results.py, with
# the command, commit, host and date), which docs/verdicts.md §6 quotes.
#
#   ci/campaigns/noise_modes.sh [K=8] [case and overrides...]   (default: --case 01_base)
set -euo pipefail
cd "$(dirname "$0")/../.."
k=${1:-8}
shift || true
args=("$@")
[[ ${#args[@]} -eq 0 ]] && args=(--case 01_base)
bin=$PWD/build/harness/twinbench
out=$(mktemp -d /tmp/twinbench-noise-XXXXXX)
run_mode() {  # name, then the command prefix
  local name=$1; shift
  for i in $(seq 1 "$k"); do
    "$@" "$bin" run "${args[@]}" --variant functional --no-db --no-progress --json > "$out/$name-$i.json"
  done
}
run_mode threads-all env
run_mode threads-1 env TWINBENCH_THREADS=1
run_mode threads-1-pinned env TWINBENCH_THREADS=1 taskset -c 1
TWINBENCH_THREADS=1 "$bin" ab --a "$bin" --b "$bin" --rounds "$k" --seed 1 --db "$out/ab.db" --json "${args[@]}" \
  > "$out/pairs-sequential.json" 2>/dev/null
"$bin" ab --a "$bin" --b "$bin" --rounds "$k" --duet --db "$out/ab.db" --json "${args[@]}" \
  > "$out/pairs-duet.json" 2>/dev/null
python3 - "$out" "$k" > "$out/tables.md" <<'PY'
import glob, json, math, statistics, sys
out, k = sys.argv[1], int(sys.argv[2])
print("| mode | runs | median s/step (median of runs) | run-level CV |")
print("|---|---:|---:|---:|")
for mode in ["threads-all", "threads-1", "threads-1-pinned"]:
    v = [json.load(open(f))[0]["step_time_median_s"] for f in sorted(glob.glob(f"{out}/{mode}-[0-9]*.json"))]
    print(f"| {mode} | {len(v)} | {statistics.median(v):.4f} | {statistics.stdev(v) / statistics.mean(v) * 100:.1f}% |")
print()
print("| A/A pairs | pairs | sd of ln(B/A) (≈ CV of the ratio) | change [CI] over these pairs |")
print("|---|---:|---:|---:|")
for mode in ["sequential", "duet"]:
    j = json.load(open(f"{out}/pairs-{mode}.json"))
    m = next(x for x in j["metrics"] if x["metric"] == "step_time_median_s")
    d = [math.log(b / a) for a, b in zip(m["rounds_a"], m["rounds_b"]) if a and b]
    sd = statistics.stdev(d)
    print(f"| {mode} | {len(d)} | {sd * 100:.1f}% | {m['change']} |")
print(f"\n(outputs in {out})")
PY
cat "$out/tables.md"
# The two tables (separated by a blank line) as blocks of the results file.
awk -v RS= -v out="$out" 'NR <= 2 { print > (out "/table-" NR ".md") }' "$out/tables.md"
for part in 1:runs 2:pairs; do
  python3 ci/campaign_results.py write "${RESULTS:-docs/results/noise_modes.md}" "${part#*:}" \
    --command "ci/campaigns/noise_modes.sh $k ${args[*]}" --table "$out/table-${part%%:*}.md"
done
