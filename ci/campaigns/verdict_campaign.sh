#!/usr/bin/env bash
# The verdict campaign of docs/verdicts.md §7 (not part of the test suite): on
# the real binary, N `twinbench ab` sessions of a case against the same build
# (A/A) and against builds made exactly 5% and 10% slower with
# TWINBENCH_TEST_SLOW_OP=step:P, and both sets of rules judged on the very same
# pairs: each session runs a fixed ROUNDS rounds (default 24, `ab --rounds`), and
# tests/tools/verdict_sim.cpp `replay` plays the old rule (Bonferroni over 2 timing
# tests x looks) and the new one (O'Brien-Fleming spending, the step time
# primary) over them, each stopping at its first decisive look of
# default_plan(ROUNDS). Prints and writes, per kind and rule: sessions,
# regressed, improved, no change, inconclusive, mean pairs to stop. With
# REPLAY=0 the sessions are `ab` as shipped (sequential, new rules) and the
# table adds CPU-minutes per side per verdict. Run it on an otherwise idle
# machine.
#
#   ci/campaigns/verdict_campaign.sh [N=20] [--case 01_base] [ab options / overrides ...]
# Environment: TWINBENCH_THREADS (default 1: the low-noise mode), KINDS
# (default "aa step:5 step:10"), ROUNDS (default 24), REPLAY (default 1), OUT (a
# directory: reuse one to extend a campaign; its table counts every session in
# it), FIRST (the first session's seed, default 1: FIRST=11 with the same OUT
# adds sessions 11..N), RESULTS (default docs/results/verdict_campaign.md; a
# smoke test writes elsewhere), BLOCK (the results block, default replay or shipped).
set -euo pipefail
cd "$(dirname "$0")/../.."
n=${1:-20}
shift || true
args=("$@")
[[ ${#args[@]} -eq 0 ]] && args=(--case 01_base)
bin=$PWD/build/harness/twinbench
[[ -x $bin ]] || { echo "build first: bash ci/build.sh" >&2; exit 2; }
replay=${REPLAY:-1}
rounds=${ROUNDS:-24}
results=${RESULTS:-docs/results/verdict_campaign.md}
if [[ $replay == 1 ]]; then
  cmake --build build --target twinbench_verdict_sim >&2
  fixed=(--rounds "$rounds")
else
  fixed=()
fi
export TWINBENCH_THREADS=${TWINBENCH_THREADS:-1}
export TWINBENCH_ALLOW_TEST_HOOKS=1  # the planted slowdowns are test hooks (docs/cli.md)
out=${OUT:-$(mktemp -d /tmp/twinbench-campaign-XXXXXX)}
mkdir -p "$out"
echo "campaign: writing to $out" >&2
for kind in ${KINDS:-aa step:5 step:10}; do
  if [[ $kind != aa ]]; then
    b=$out/slow-${kind#step:}.sh
    printf '#!/bin/sh\nTWINBENCH_ALLOW_TEST_HOOKS=1 TWINBENCH_TEST_SLOW_OP=%s exec %s "$@"\n' "$kind" "$bin" > "$b"
    chmod +x "$b"
  fi
done
# Session-major: the kinds take turns, so that each meets the same hours of the host.
for i in $(seq "${FIRST:-1}" "$n"); do
  for kind in ${KINDS:-aa step:5 step:10}; do
    b=$bin
    [[ $kind != aa ]] && b=$out/slow-${kind#step:}.sh
    [[ -s $out/$kind-$i.json ]] && continue
    "$bin" ab --a "$bin" --b "$b" --db "$out/campaign.db" --seed "$i" --json --why-runs 0 "${fixed[@]}" "${args[@]}" \
      > "$out/$kind-$i.json" 2> "$out/$kind-$i.log" || true
    echo "campaign: $kind $i/$n: $(python3 -c "import json,sys; j=json.load(open(sys.argv[1])); \
print(j['verdict'], len(j['rounds']), 'rounds', j['stopped_because'])" "$out/$kind-$i.json" 2>/dev/null || echo failed)" >&2
  done
done
python3 - "$out" "$TWINBENCH_THREADS" "$replay" "$PWD/build/tests/twinbench_verdict_sim" > "$out/table.md" <<'PY'
import glob, json, os, subprocess, sys
out, threads, replay, sim = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1", sys.argv[4]
kinds = os.environ.get("KINDS", "aa step:5 step:10").split()
def step(j):
    return next((m for m in j["metrics"] if m["metric"] == "step_time_median_s"), None)
def label(kind):
    return "same build (A/A)" if kind == "aa" else f"{kind.split(':')[1]}% slower"
if replay:
    print("| candidate | rules | sessions | regressed | improved | no change | inconclusive | mean pairs to stop |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
else:
    print("| candidate | sessions | regressed | improved | no change | inconclusive | false alarms or power | mean rounds | "
          "seconds a session (median, max) | seconds to regressed (median, max) | CPU-min per side per verdict |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for kind in kinds:
    rows = []
    for f in sorted(glob.glob(f"{out}/{kind}-*.json")):
        try:
            rows.append(json.load(open(f)))
        except Exception:
            pass
    rows = [j for j in rows if step(j)]
    if not rows:
        continue
    if replay:
        lines = []
        for k, j in enumerate(rows):
            m = step(j)
            fmt = lambda v: ",".join("" if x is None else repr(x) for x in v)
            lines.append(f"{kind}-{k}\t{fmt(m['rounds_a'])}\t{fmt(m['rounds_b'])}")
        got = subprocess.run([sim, "replay"], input="\n".join(lines) + "\n", capture_output=True, text=True, check=True)
        judged = [l.split("\t") for l in got.stdout.splitlines()]
        for rule, (vi, pi) in (("old", (1, 2)), ("new", (3, 4))):
            v = [r[vi] for r in judged]
            pairs = sum(int(r[pi]) for r in judged) / len(judged)
            print(f"| {label(kind)} | {rule} | {len(judged)} | {v.count('regressed')} | {v.count('improved')} | "
                  f"{v.count('no change')} | {v.count('inconclusive')} | {pairs:.1f} |")
    else:
        import statistics
        v = [step(j)["verdict"] for j in rows]
        rounds = sum(len(j["rounds"]) for j in rows) / len(rows)
        cpu_min = sum(j["seconds"] for j in rows) / len(rows) / 2 * threads / 60
        secs = [j["seconds"] for j in rows]
        reg = [j["seconds"] for j, x in zip(rows, v) if x == "regressed"]
        rate = (f"{100 * (v.count('regressed') + v.count('improved')) / len(v):.0f}% false alarms" if kind == "aa"
                else f"{100 * v.count('regressed') / len(v):.0f}% found")
        span = lambda xs: f"{statistics.median(xs):.0f}, {max(xs):.0f}" if xs else "-"
        print(f"| {label(kind)} | {len(rows)} | {v.count('regressed')} | {v.count('improved')} | {v.count('no change')} | "
              f"{v.count('inconclusive')} | {rate} | {rounds:.1f} | {span(secs)} | {span(reg)} | {cpu_min:.2f} |")
PY
cat "$out/table.md"
echo "(outputs in $out; TWINBENCH_THREADS=$TWINBENCH_THREADS)" >&2
if [[ $replay == 1 ]]; then
  note="Both rules judge the same sessions: each ran $rounds rounds (\`ab --rounds $rounds\`); the old rule (every look at 1 - 0.05 / (2 timing tests x looks)) and the new one (O'Brien-Fleming spending, the step time alone in its family) stop at their first decisive look of default_plan($rounds) (twinbench_verdict_sim replay). TWINBENCH_THREADS=$TWINBENCH_THREADS; the step-time verdict is counted."
else
  note="Sessions as shipped (sequential \`ab\`, its default pairing: lockstep duets since issue #55), the kinds taking turns session by session. TWINBENCH_THREADS=$TWINBENCH_THREADS; the step-time verdict is counted; seconds: each session's rounds (ab's own clock, the probes not included)."
fi
python3 ci/campaign_results.py write "$results" "${BLOCK:-$( [[ $replay == 1 ]] && echo replay || echo shipped )}" \
  --command "KINDS='${KINDS:-aa step:5 step:10}' ROUNDS=$rounds REPLAY=$replay${BLOCK:+ BLOCK=$BLOCK} ci/campaigns/verdict_campaign.sh $n ${args[*]}" \
  --table "$out/table.md" --note "$note"
