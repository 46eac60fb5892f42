#!/usr/bin/env bash
# The verdict campaign of docs/verdicts.md (not part of the test suite): on the
# real binary, N sequential `twinbench ab` sessions of a case against the same
# build (A/A) and against builds made exactly 5% and 10% slower with
# TWINBENCH_TEST_SLOW_OP=step:P. Prints, per kind: sessions, regressed,
# improved, no change, inconclusive, mean rounds and CPU-minutes per side per
# verdict. Run it on an otherwise idle machine.
#
#   ci/campaigns/verdict_campaign.sh [N=20] [--case 01_base] [ab options / overrides ...]
# Environment: TWINBENCH_THREADS (default 1: the low-noise mode), KINDS
# (default "aa step:5 step:10"), OUT (a directory: reuse one to extend a campaign;
# its table counts every session in it) and FIRST (the first session's seed,
# default 1: FIRST=11 with the same OUT adds sessions 11..N).
set -euo pipefail
cd "$(dirname "$0")/../.."
n=${1:-20}
shift || true
args=("$@")
[[ ${#args[@]} -eq 0 ]] && args=(--case 01_base)
bin=$PWD/build/harness/twinbench
[[ -x $bin ]] || { echo "build first: bash ci/build.sh" >&2; exit 2; }
export TWINBENCH_THREADS=${TWINBENCH_THREADS:-1}
out=${OUT:-$(mktemp -d /tmp/twinbench-campaign-XXXXXX)}
mkdir -p "$out"
echo "campaign: writing to $out" >&2
for kind in ${KINDS:-aa step:5 step:10}; do
  b=$bin
  if [[ $kind != aa ]]; then
    b=$out/slow-${kind#step:}.sh
    printf '#!/bin/sh\nTWINBENCH_ALLOW_TEST_HOOKS=1 TWINBENCH_TEST_SLOW_OP=%s exec %s "$@"\n' "$kind" "$bin" > "$b"
    chmod +x "$b"
  fi
  for i in $(seq "${FIRST:-1}" "$n"); do
    "$bin" ab --a "$bin" --b "$b" --db "$out/campaign.db" --seed "$i" --json "${args[@]}" \
      > "$out/$kind-$i.json" 2> "$out/$kind-$i.log" || true
    echo "campaign: $kind $i/$n: $(python3 -c "import json,sys; j=json.load(open(sys.argv[1])); \
print(j['verdict'], len(j['rounds']), 'rounds', j['stopped_because'])" "$out/$kind-$i.json" 2>/dev/null || echo failed)" >&2
  done
done
python3 - "$out" "$TWINBENCH_THREADS" <<'PY'
import glob, json, os, sys
out, threads = sys.argv[1], int(sys.argv[2])
print(f"| candidate | sessions | regressed | improved | no change | inconclusive | mean rounds | CPU-min per side per verdict |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
for kind in os.environ.get("KINDS", "aa step:5 step:10").split():
    rows = []
    for f in sorted(glob.glob(f"{out}/{kind}-*.json")):
        try:
            rows.append(json.load(open(f)))
        except Exception:
            pass
    if not rows:
        continue
    def step_verdict(j):
        for m in j["metrics"]:
            if m["metric"] == "step_time_median_s":
                return m["verdict"]
        return "missing"
    v = [step_verdict(j) for j in rows]
    rounds = sum(len(j["rounds"]) for j in rows) / len(rows)
    cpu_min = sum(j["seconds"] for j in rows) / len(rows) / 2 * threads / 60
    name = "same build (A/A)" if kind == "aa" else f"{kind.split(':')[1]}% slower"
    print(f"| {name} | {len(rows)} | {v.count('regressed')} | {v.count('improved')} | {v.count('no change')} | "
          f"{v.count('inconclusive')} | {rounds:.1f} | {cpu_min:.2f} |")
print(f"\n(outputs in {out}; TWINBENCH_THREADS={threads})")
PY
