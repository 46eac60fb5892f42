#!/usr/bin/env bash
# The gap between the two implementations on the quantized cases (issue #49's
# last item: module 16-21% behind functional on 04_int8 and 05_fp8, the design
# goal a gap of at most 2%): one adaptive matrix of interleaved functional/module
# pairs over CASES in their reduced forms (`run --adaptive`: the pairs go where a
# decision is likeliest, each step-time verdict at its look's level, Holm across
# the cases), then per case the pairs, the step-time verdict and change with its
# interval, and the per-pair ratios module/functional, from the pair report's JSON
# and the store. Writes the table as block `pair-gap` of docs/results/pair_gap.md
# (ci/campaign_results.py: command, commit, host, date; docs/verdicts.md §15 quotes it).
# Wall-clock times: run it on an otherwise idle machine. Not part of the test suite.
#
#   ci/campaigns/pair_gap.sh [overrides ...]
# Environment: CASES (default "04_int8,05_fp8"), BUDGET (seconds, default 420),
# MAX_PAIRS (default 16), SEED (the rounds' order, default 11), TWINBENCH_THREADS
# (default 1), OUT (default pair-gap: the store and the console), RESULTS
# (default docs/results/pair_gap.md).
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=$PWD/build/harness/twinbench
[[ -x $bin ]] || { echo "build first: bash ci/build.sh" >&2; exit 2; }
cases=${CASES:-04_int8,05_fp8}
budget=${BUDGET:-420}
max_pairs=${MAX_PAIRS:-16}
seed=${SEED:-11}
out=${OUT:-pair-gap}
results=${RESULTS:-docs/results/pair_gap.md}
export TWINBENCH_THREADS=${TWINBENCH_THREADS:-1}
rm -rf "$out" && mkdir -p "$out"
command="CASES=$cases BUDGET=$budget MAX_PAIRS=$max_pairs SEED=$seed bash ci/campaigns/pair_gap.sh${*:+ $*}"
start=$(date +%s)
TWINBENCH_WHY_RUNS=0 "$bin" run --case "$cases" --reduced --variants functional,module --adaptive \
  --max-pairs "$max_pairs" --budget "$budget" --order-seed "$seed" --no-progress --db "$out/gap.db" "$@" \
  >"$out/console.txt" 2>"$out/console.err"
seconds=$(( $(date +%s) - start ))
"$bin" report pair --db "$out/gap.db" --format json >"$out/pair.json"
sqlite3 -separator $'\t' "$out/gap.db" "SELECT r.case_name, r.variant, r.repeat_index, m.value FROM runs r JOIN run_metrics m
  ON m.run_id = r.run_id AND m.name = 'step_time_median_s' WHERE r.status = 'completed'" >"$out/runs.tsv"
python3 - "$out" >"$out/table.tsv" <<'PY'
import collections, json, sys
out = sys.argv[1]
times = collections.defaultdict(dict)
for line in open(f"{out}/runs.tsv"):
    case, variant, k, v = line.rstrip("\n").split("\t")
    times[(case, int(k))][variant] = float(v)
print("case\tpairs\tstep time\tmodule vs functional [CI]\tper-pair module/functional")
for c in json.load(open(f"{out}/pair.json"))["cases"]:
    m = next(x for x in c["metrics"] if x["metric"] == "step_time_median_s")
    ks = sorted(k for (case, k) in times if case == c["case"])
    ratios = [times[(c["case"], k)]["module"] / times[(c["case"], k)]["functional"] for k in ks
              if {"module", "functional"} <= times[(c["case"], k)].keys()]
    print("\t".join([c["case"], str(len(ratios)), m["verdict"], m["change"], " ".join(f"{100 * (r - 1):+.0f}%" for r in ratios)]))
PY
cat "$out/table.tsv"
python3 ci/campaign_results.py write "$results" pair-gap --command "$command" --tsv "$out/table.tsv" \
  --note "run --reduced --adaptive, functional vs module interleaved, one thread; $seconds s in all; the verdicts as the pair report gives them (Holm across the cases, each at the level its last look spent)"
