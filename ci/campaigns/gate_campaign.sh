#!/usr/bin/env bash
# The branch gate's power (docs/verdicts.md, "The branch gate decides"): N tries
# of the real gate, ci/branch-report.sh, with the same build on both sides (A/A)
# and against a candidate made exactly 10% slower (TWINBENCH_TEST_SLOW_OP=step:10).
# Each try is a fresh store, so it is what one pull request's gate sees. Prints,
# per kind: tries, gate failed (exit 1), and the step-time verdicts of its
# sessions (regressed / improved / no change / inconclusive), mean pairs and
# minutes per try. Not part of the test suite: run it on an otherwise idle
# machine (`/work/cpu-slot --exclusive` here).
#
#   ci/campaigns/gate_campaign.sh [N=10]
# Environment: KINDS (default "aa step:10"), OUT (a directory to reuse / extend),
# FIRST (first try's number, default 1), RESULTS (default
# docs/results/gate_campaign.md; a smoke test writes elsewhere), and the gate's
# own TWINBENCH_GATE_CASES, TWINBENCH_GATE_VARIANTS, TWINBENCH_GATE_BUDGET,
# TWINBENCH_GATE_MAX_ROUNDS, TWINBENCH_THREADS (ci/branch-report.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
n=${1:-10}
bin=$PWD/build/harness/twinbench
[[ -x $bin ]] || { echo "build first: bash ci/build.sh" >&2; exit 2; }
out=${OUT:-$(mktemp -d /tmp/twinbench-gate-XXXXXX)}
results=${RESULTS:-docs/results/gate_campaign.md}
export TWINBENCH_ALLOW_TEST_HOOKS=1  # the planted slowdown is a test hook (docs/cli.md)
mkdir -p "$out"
echo "gate campaign: writing to $out" >&2
for kind in ${KINDS:-aa step:10}; do
  b=$bin
  if [[ $kind != aa ]]; then
    b=$out/slow-${kind#step:}.sh
    printf '#!/bin/sh\nTWINBENCH_ALLOW_TEST_HOOKS=1 TWINBENCH_TEST_SLOW_OP=%s exec %s "$@"\n' "$kind" "$bin" > "$b"
    chmod +x "$b"
  fi
  for i in $(seq "${FIRST:-1}" "$n"); do
    try=$out/$kind-$i
    rm -rf "$try" "$try.db"
    start=$(date +%s)
    rc=0
    TWINBENCH_GATE_A=$bin TWINBENCH_GATE_B=$b TWINBENCH_DB=$try.db TWINBENCH_OUT=$try \
      bash ci/branch-report.sh HEAD "gate-$kind-$i" > "$try.md" 2> "$try.log" || rc=$?
    "$bin" compare --db "$try.db" --baseline "HEAD@$(git rev-parse HEAD | cut -c1-9)" --candidate "gate-$kind-$i" \
      --format json > "$try.json" 2>> "$try.log" || true
    echo "{\"rc\": $rc, \"seconds\": $(( $(date +%s) - start ))}" > "$try.rc.json"
    echo "gate campaign: $kind $i/$n: exit $rc" >&2
  done
done
python3 - "$out" > "$out/table.md" <<'PY'
import glob, json, os, sys
out = sys.argv[1]
print("| candidate | tries | gate failed | regressed | improved | no change | inconclusive | mean pairs | min per try |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
for kind in os.environ.get("KINDS", "aa step:10").split():
    tries = sorted(glob.glob(f"{out}/{kind}-*.rc.json"))
    if not tries:
        continue
    failed, verdicts, pairs, minutes = 0, [], [], []
    for t in tries:
        rc = json.load(open(t))
        failed += rc["rc"] == 1
        minutes.append(rc["seconds"] / 60)
        try:
            j = json.load(open(t.replace(".rc.json", ".json")))
        except Exception:
            verdicts.append("error")
            continue
        for c in j["comparisons"]:
            pairs.append(c["a"]["repeats"])
            verdicts += [m["verdict"] for m in c["metrics"] if m["metric"] == "step_time_median_s"]
    name = "same build (A/A)" if kind == "aa" else f"{kind.split(':')[1]}% slower"
    mean = lambda v: sum(v) / len(v) if v else float("nan")
    print(f"| {name} | {len(tries)} | {failed} | {verdicts.count('regressed')} | {verdicts.count('improved')} | "
          f"{verdicts.count('no change')} | {verdicts.count('inconclusive')} | {mean(pairs):.1f} | {mean(minutes):.1f} |")
PY
cat "$out/table.md"
echo "(outputs in $out)" >&2
python3 ci/campaign_results.py write "$results" tries --command "ci/campaigns/gate_campaign.sh $n" --table "$out/table.md" \
  --note "The real gate (ci/branch-report.sh) with its defaults: ${TWINBENCH_GATE_CASES:-01_base}, ${TWINBENCH_GATE_VARIANTS:-functional}, one thread, ${TWINBENCH_GATE_BUDGET:-600} s and ${TWINBENCH_GATE_MAX_ROUNDS:-24} pairs a session; each try a fresh store; the step-time verdicts of its comparison (Holm across the sessions, each at the level its looks spent)."
