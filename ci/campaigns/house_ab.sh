#!/usr/bin/env bash
# The int8/fp8 fix of issue #49 proven with the tool's own `ab`: the build before
# the fix (BEFORE, e.g. d3ae048, whose quantizer made a transposed contiguous copy
# of the logits weight) against a build after it (AFTER), on 04_int8 and 05_fp8
# in their reduced forms, for the module implementation (the one the copy
# slowed) and the functional one (which must not have become slower). Each
# session is sequential (`ab`'s look schedule at alpha 0.05) with --duet: both
# sides of a round at once, one core and one thread each, so that they meet the
# same interference. A decisive session makes its profiled rounds (--why-runs),
# and the table names the why's headline.
# Writes the table as the block `house-ab` of docs/results/house_ab.md
# (ci/campaign_results.py: with the command, commit, host and date; docs/verdicts.md quotes it).
# Wall-clock times: run it on an otherwise idle machine. Not part of the test suite.
#
#   ci/campaigns/house_ab.sh BEFORE AFTER [ab options / overrides ...]
#     BEFORE, AFTER  twinbench executables or build directories
# Environment: CASES (default "04_int8 05_fp8"), VARIANTS (default "module functional"),
# BUDGET (seconds per session, default 240), WHY_RUNS (default 3), OUT (default
# house-ab: the store, each session's JSON and log), RESULTS (default docs/results/house_ab.md).
set -euo pipefail
cd "$(dirname "$0")/../.."
[[ $# -ge 2 ]] || { sed -n '2,19p' "$0" >&2; exit 2; }
before=$1 after=$2
shift 2
bin=$PWD/build/harness/twinbench
[[ -x $bin ]] || { echo "build first: bash ci/build.sh" >&2; exit 2; }
budget=${BUDGET:-240}
why_runs=${WHY_RUNS:-3}
out=${OUT:-house-ab}
results=${RESULTS:-docs/results/house_ab.md}
mkdir -p "$out"
command="BUDGET=$budget WHY_RUNS=$why_runs bash ci/campaigns/house_ab.sh $before $after${*:+ $*}"
printf 'case\tvariant\trounds\tseconds\tstep time change [CI]\tstep time\tpeak memory change\tpeak memory\twhy\n' >"$out/table.tsv"
for c in ${CASES:-04_int8 05_fp8}; do
  for v in ${VARIANTS:-module functional}; do
    name=$out/$c-$v
    "$bin" ab --a "$before" --b "$after" --case "$c" --reduced --variant "$v" --duet --budget "$budget" \
      --why-runs "$why_runs" --db "$out/ab.db" --json "$@" >"$name.json" 2>"$name.log" || true
    python3 - "$c" "$v" "$name.json" >>"$out/table.tsv" <<'PY'
import json, sys
case, variant, path = sys.argv[1:4]
j = json.load(open(path))
m = {x["metric"]: x for x in j["metrics"]}
def change(x):
    if x.get("ratio") is None:
        return x.get("change", "")
    if x.get("ratio_ci_low") is None:  # too few rounds for an interval
        return f"{100 * (x['ratio'] - 1):+.1f}% [no interval]"
    return f"{100 * (x['ratio'] - 1):+.1f}% [{100 * (x['ratio_ci_low'] - 1):+.1f}%, {100 * (x['ratio_ci_high'] - 1):+.1f}%]"
st, mem = m["step_time_median_s"], m["peak_memory_bytes"]
why = j.get("why") or {}
headline = "; ".join(h for h in ((why.get("time") or {}).get("headline"), (why.get("memory") or {}).get("headline")) if h) \
    or why.get("trigger") or ""
print("\t".join([case, variant, str(len(j["rounds"])), f"{j['seconds']:.0f}", change(st), st["verdict"],
                 f"{mem['a'] / 2**20:,.1f} → {mem['b'] / 2**20:,.1f} MiB", mem["verdict"], headline]))
PY
    tail -1 "$out/table.tsv" >&2
  done
done
# The commits each side's runs recorded (the paths above are this host's).
commits=$(python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); print("A =", j["a"]["commit"] + ", B =", j["b"]["commit"])' \
  "$(ls "$out"/*.json | head -1)")
python3 ci/campaign_results.py write "$results" house-ab --command "$command" --tsv "$out/table.tsv" \
  --note "ab --duet, sequential at alpha 0.05 (the step time its primary test), reduced forms, one thread per side; $commits"
