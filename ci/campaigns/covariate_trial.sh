#!/usr/bin/env bash
# The covariate trial of issue #50 (docs/verdicts.md §6): can a measure of the
# machine taken just before each run narrow the interval of a pair's ratio at
# the same A/A rate? Before every timed run of N A/A `ab` sessions (R rounds
# each, fixed), a wrapper times a short fixed probe on the same host: the tiny
# model's median step time (6 steps, batch 2 x 32 tokens, functional: its
# matrix products and little else, about a second in all); the analysis then
# adjusts each pair's ln(B/A) by the probe's ln(B/A) CUPED-style,
# d_i - theta * x_i, theta the regression slope of d on x over the OTHER
# sessions (so that no session fits its own noise), and compares, session by
# session, the 95% interval's width with and without the adjustment and how
# often each leaves 0 out (A/A: at most 5% should). It keeps the covariate
# when the median width shrinks by 10% or more and the adjusted A/A rate is
# within its binomial margin of the plain one; the table says which. The
# probe runs in a process of its own just before the run's (the harness times
# no probe inside a run): what it measures is the machine's state then.
# Not part of the test suite: run it on an otherwise idle machine.
#
#   ci/campaigns/covariate_trial.sh [N=20] [R=12] [--case 01_base --reduced] [overrides ...]
# Environment: TWINBENCH_THREADS (default 1), OUT (a directory to reuse / extend),
# PYTHON (with scipy; default .venv/bin/python), RESULTS (default
# docs/results/covariate_trial.md; a smoke test writes elsewhere).
set -euo pipefail
cd "$(dirname "$0")/../.."
n=${1:-20}
r=${2:-12}
shift 2 || shift $# || true
args=("$@")
[[ ${#args[@]} -eq 0 ]] && args=(--case 01_base --reduced)
bin=$PWD/build/harness/twinbench
[[ -x $bin ]] || { echo "build first: bash ci/build.sh" >&2; exit 2; }
py=${PYTHON:-$PWD/.venv/bin/python}
"$py" -c "import scipy" 2>/dev/null || { echo "covariate_trial.sh: $py has no scipy (PYTHON=...)" >&2; exit 2; }
results=${RESULTS:-docs/results/covariate_trial.md}
export TWINBENCH_THREADS=${TWINBENCH_THREADS:-1}
out=${OUT:-$(mktemp -d /tmp/twinbench-covariate-XXXXXX)}
mkdir -p "$out"
echo "covariate trial: writing to $out" >&2
# The wrapper: for a timed run (`run ... --repeat-index K --branch LABEL`), the
# probe first, its median step time appended to probes.tsv as SESSION, LABEL, K, value; then the run.
cat > "$out/probed.sh" <<EOF
#!/bin/sh
label=""; round=""; timed=0; prev=""
for a in "\$@"; do
  case "\$prev" in --branch) label=\$a ;; --repeat-index) round=\$a ;; esac
  [ "\$a" = run ] && timed=1
  [ "\$a" = --profile-run ] && timed=0
  prev=\$a
done
if [ \$timed = 1 ] && [ -n "\$round" ] && [ -n "\$label" ]; then
  v=\$("$bin" run --preset tiny --variant functional --repeats 1 --no-db --no-progress --json train.steps=6 train.batch=2 \
      train.seq_len=32 measure.warmup_steps=1 2>/dev/null | python3 -c "import json,sys; print(json.load(sys.stdin)[0]['step_time_median_s'])" 2>/dev/null || echo nan)
  printf '%s\t%s\t%s\t%s\n' "\$TWINBENCH_COVARIATE_SESSION" "\$label" "\$round" "\$v" >> "$out/probes.tsv"
fi
exec "$bin" "\$@"
EOF
chmod +x "$out/probed.sh"
for i in $(seq 1 "$n"); do
  [[ -s $out/aa-$i.json ]] && continue
  TWINBENCH_COVARIATE_SESSION=$i "$bin" ab --a "$out/probed.sh" --b "$out/probed.sh" --db "$out/trial.db" --seed "$i" \
    --rounds "$r" --json --why-runs 0 "${args[@]}" > "$out/aa-$i.json" 2> "$out/aa-$i.log" || true
  echo "covariate trial: session $i/$n" >&2
done
"$py" - "$out" > "$out/table.md" <<'PY'
import glob, json, math, sys
import numpy as np
from scipy import stats
out = sys.argv[1]
probes = {}
for line in open(f"{out}/probes.tsv"):
    s, label, k, v = line.rstrip("\n").split("\t")
    try:
        probes[(s, label, int(k))] = float(v)
    except ValueError:
        pass
sessions = []
for f in sorted(glob.glob(f"{out}/aa-*.json")):
    s = f.rsplit("-", 1)[1][:-5]
    try:
        j = json.load(open(f))
    except Exception:
        continue
    m = next((x for x in j["metrics"] if x["metric"] == "step_time_median_s"), None)
    if not m:
        continue
    d, x = [], []
    for k, (a, b) in enumerate(zip(m["rounds_a"], m["rounds_b"])):
        pa, pb = probes.get((s, j["a"]["label"], k)), probes.get((s, j["b"]["label"], k))
        if a and b and pa and pb and pa > 0 and pb > 0:
            d.append(math.log(b / a))
            x.append(math.log(pb / pa))  # a slower probe step: a slower machine then
    if len(d) >= 3:
        sessions.append((np.array(d), np.array(x)))
if len(sessions) < 2:
    sys.exit("covariate trial: fewer than two sessions with probes")
def interval(v):
    n = len(v)
    h = stats.t.ppf(0.975, n - 1) * v.std(ddof=1) / math.sqrt(n)
    return v.mean(), h
rows, widths, plain_alarms, adj_alarms = [], [], 0, 0
corr = np.corrcoef(np.concatenate([s[0] for s in sessions]), np.concatenate([s[1] for s in sessions]))[0, 1]
for i, (d, x) in enumerate(sessions):
    others_d = np.concatenate([s[0] for j, s in enumerate(sessions) if j != i])
    others_x = np.concatenate([s[1] for j, s in enumerate(sessions) if j != i])
    theta = np.cov(others_d, others_x)[0, 1] / np.var(others_x, ddof=1) if np.var(others_x) > 0 else 0.0
    m0, h0 = interval(d)
    m1, h1 = interval(d - theta * x)
    widths.append(h1 / h0)
    plain_alarms += abs(m0) > h0
    adj_alarms += abs(m1) > h1
n = len(sessions)
margin = 3 * math.sqrt(n * 0.05 * 0.95)
median_ratio = float(np.median(widths))
keep = median_ratio <= 0.9 and adj_alarms <= plain_alarms + margin
print("| sessions | pairs each | corr(ln B/A, probe) | median width, adjusted / plain | A/A intervals leaving 0 out, plain | adjusted | decision |")
print("|---:|---:|---:|---:|---:|---:|---|")
print(f"| {n} | {len(sessions[0][0])} | {corr:+.2f} | {median_ratio:.2f} | {plain_alarms} | {adj_alarms} | "
      f"{'keep: the covariate narrows the interval at the same A/A rate' if keep else 'leave it out: it does not narrow the interval by 10% at the same A/A rate'} |")
PY
cat "$out/table.md"
python3 ci/campaign_results.py write "$results" trial --command "ci/campaigns/covariate_trial.sh $n $r ${args[*]}" \
  --table "$out/table.md" \
  --note "A/A sessions of $r fixed rounds each; before every timed run, the tiny model's median step time (6 steps) in a process of its own as the probe; CUPED adjustment with the slope of the other sessions; 95% t intervals; TWINBENCH_THREADS=$TWINBENCH_THREADS."
