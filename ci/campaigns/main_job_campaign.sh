#!/usr/bin/env bash
# The main job's timing (docs/verdicts.md, "The main job decides"): the demo's
# adaptive matrix — ci/demo.sh's `matrix --reduced --adaptive`, without setup,
# build and calibration — under each thread setting, budget and maximum of
# pairs asked for, K times each: the matrix's wall time, the pairs each case
# took, each case's step-time verdict and how many of the cases that ran are
# decisive (no change within the threshold, regressed or improved), and for
# each case left undecided what would decide it. Choose ci/demo.sh's defaults
# (TWINBENCH_THREADS, TWINBENCH_DEMO_BUDGET, TWINBENCH_DEMO_MAX_PAIRS) from its
# table. Not part of the test suite: run it on an otherwise idle machine
# (`/work/cpu-slot --exclusive` here).
#
#   ci/campaigns/main_job_campaign.sh [K=3] [matrix overrides...]
# Environment: THREADS (default "1"), BUDGETS (seconds, default "360"),
# MAX_PAIRS (default "8 12"), OUT (a directory to reuse / extend), RESULTS
# (default docs/results/main_job_campaign.md; a smoke test writes elsewhere),
# CLONES (1: each run a fresh clone of HEAD running `bash ci/demo.sh`, the
# README's main job as a new user runs it), BLOCK (the results block, default runs),
# VARIANTS (the two sides, default functional,module; functional,functional@aa is
# the main job's A/A: one implementation as both sides).
set -euo pipefail
cd "$(dirname "$0")/../.."
k=${1:-3}
shift || true
bin=$PWD/build/harness/twinbench
[[ -x $bin ]] || { echo "build first: bash ci/build.sh" >&2; exit 2; }
out=${OUT:-$(mktemp -d /tmp/twinbench-mainjob-XXXXXX)}
mkdir -p "$out"
echo "main job campaign: writing to $out" >&2
results=${RESULTS:-docs/results/main_job_campaign.md}
variants=${VARIANTS:-functional,module}
side_a=${variants%%,*}
side_b=${variants#*,}
for t in ${THREADS:-1}; do
  for budget in ${BUDGETS:-360}; do
    for m in ${MAX_PAIRS:-8 12}; do
      for i in $(seq 1 "$k"); do
        name=$out/t$t-b$budget-m$m-$i
        [[ -s $name.json ]] && continue
        rm -f "$name.db"
        if [[ ${CLONES:-0} == 1 ]]; then
          # The README's main job as a new user runs it: a fresh clone of this
          # repository's HEAD, `bash ci/demo.sh` there (setup, build, calibrate,
          # plan, the matrix, the report); the matrix's own seconds from its summary.
          clone=$(mktemp -d /tmp/twinbench-clone-XXXXXX)
          git clone -q "$PWD" "$clone"
          start=$(date +%s.%N)
          (cd "$clone" && TWINBENCH_THREADS=$t TWINBENCH_DEMO_BUDGET=$budget TWINBENCH_DEMO_MAX_PAIRS=$m \
            bash ci/demo.sh --variants "$variants" "$@" > "$name.txt" 2> "$name.log") || true
          python3 -c "import sys; print(float(sys.argv[2]) - float(sys.argv[1]))" "$start" "$(date +%s.%N)" > "$name.demo"
          sed -n 's/^adaptive matrix: .* in \([0-9.]*\) s (.*/\1/p' "$name.txt" | head -1 > "$name.wall"
          [[ -s $name.wall ]] || echo 0 > "$name.wall"
          cp "$clone/twinbench.db" "$name.db" 2>/dev/null || true
          rm -rf "$clone"
        else
          start=$(date +%s.%N)
          TWINBENCH_THREADS=$t "$bin" matrix --reduced --adaptive --budget "$budget" --max-pairs "$m" --db "$name.db" \
            --variants "$variants" --no-progress "$@" > "$name.txt" 2> "$name.log" || true
          python3 -c "import sys; print(float(sys.argv[2]) - float(sys.argv[1]))" "$start" "$(date +%s.%N)" > "$name.wall"
        fi
        "$bin" report pair --db "$name.db" --a "$side_a" --b "$side_b" --format json > "$name.json" 2>> "$name.log"
        echo "main job campaign: threads $t budget $budget max-pairs $m run $i: $(cat "$name.wall") s" >&2
      done
    done
  done
done
python3 - "$out" "$variants" > "$out/table.md" <<'PY'
import glob, json, math, re, sqlite3, statistics, sys
from collections import defaultdict
out = sys.argv[1]


def trimmed_mean(x, g=0.2):
    x = sorted(x)
    k = int(g * len(x))
    return statistics.mean(x[k:len(x) - k])


def duet_spread(db, a, b):
    """Per case of 4 or more duets, the sd of its duets' 20%-trimmed mean of ln(b/a) over
    their steady rounds (what a verdict judges, stats/duets.h), read from the run's store."""
    rows = sqlite3.connect(db).execute(
        "SELECT r.case_name, r.variant, r.repeat_index, s.step, s.step_time_s FROM runs r JOIN steps s USING (run_id)"
        " WHERE r.status = 'completed' AND s.is_warmup = 0 AND s.is_eval = 0 AND s.step_time_s > 0").fetchall()
    rounds = defaultdict(dict)
    for case, variant, repeat, step, t in rows:
        rounds[(case, repeat, step)][variant] = t
    duets = defaultdict(lambda: defaultdict(list))
    for (case, repeat, _), sides in rounds.items():
        if a in sides and b in sides:
            duets[case][repeat].append(math.log(sides[b] / sides[a]))
    return {case: statistics.stdev([trimmed_mean(x) for x in by.values() if len(x) >= 2])
            for case, by in duets.items() if sum(len(x) >= 2 for x in by.values()) >= 4}


groups = defaultdict(list)
for f in sorted(glob.glob(f"{out}/t*-b*-m*-*.json")):
    m = re.match(r".*/t(\d+)-b(\d+)-m(\d+)-(\d+)\.json$", f)
    if not m:
        continue
    j = json.load(open(f))
    wall = float(open(f.replace(".json", ".wall")).read())
    cases, loss_alarms = [], 0
    for c in j["cases"]:
        # A loss judged different between the implementations on the identical build is a false alarm.
        loss_alarms += sum(x["verdict"] in ("regressed", "improved") for x in c["metrics"]
                           if x["metric"] in ("final_loss", "eval_loss"))
        step = next((x for x in c["metrics"] if x["metric"] == "step_time_median_s"), None)
        if c["a"]["status"] != "completed" or c["b"]["status"] != "completed" or step is None:
            continue
        cases.append((c["case"], c["a"]["repeats"], step["verdict"], step["change"]))
    # What the matrix said of each case it left undecided (its summary under the tables).
    undecided = []
    for line in open(f.replace(".json", ".txt"), errors="replace"):
        g = re.match(r"\s+(\S+)\s+\d+\s+.*?((?:budget spent|maximum of|its interval reached).*)$", line.rstrip())
        if g:
            undecided.append(f"{g.group(1)}: {g.group(2).strip()}")
    db = f.replace(".json", ".db")
    spread = duet_spread(db, *sys.argv[2].split(",", 1)) if glob.glob(db) else {}
    groups[m.groups()[:3]].append((wall, cases, undecided, loss_alarms, spread))
# Regressed or improved step times: false alarms when both sides are one implementation (VARIANTS=x,x@aa).
print("| threads | budget s | max duets | runs | matrix wall (min) | decisive cases | loss alarms | step time regressed or improved | duets per case | sd of a duet's trimmed mean (cases of 4+ duets) | verdicts (case: duets, step time) | what would decide the others |")
print("|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---|---|")
for (t, b, m), runs in sorted(groups.items()):
    walls = [w for w, _, _, _, _ in runs]
    decisive = [sum(v != "inconclusive" for _, _, v, _ in cases) for _, cases, _, _, _ in runs]
    ran = [len(cases) for _, cases, _, _, _ in runs]
    alarms = " / ".join(str(a) for _, _, _, a, _ in runs)
    moved = " / ".join(str(sum(v in ("regressed", "improved") for _, _, v, _ in cases)) for _, cases, _, _, _ in runs)
    per_case = defaultdict(list)
    for _, cases, _, _, _ in runs:
        for name, pairs, verdict, change in cases:
            per_case[name].append(f"{pairs} {verdict} {change}")
    detail = "; ".join(f"{n}: " + " / ".join(v) for n, v in per_case.items())
    pairs = [p for _, cases, _, _, _ in runs for _, p, _, _ in cases]
    others = "; ".join(u for _, _, undecided, _, _ in runs for u in undecided) or "-"
    spreads = " / ".join(", ".join(f"{c} {100 * v:.2f}%" for c, v in sorted(sp.items())) or "-" for *_, sp in runs)
    print(f"| {t} | {b} | {m} | {len(runs)} | {sum(walls) / len(walls) / 60:.1f} (max {max(walls) / 60:.1f}) | "
          f"{' / '.join(f'{d} of {r}' for d, r in zip(decisive, ran))} | {alarms} | {moved} | {sum(pairs) / max(1, len(pairs)):.1f} | {spreads} | {detail} | {others} |")
PY
cat "$out/table.md"
echo "(outputs in $out; the demo adds setup, build, calibration and plan to the matrix's wall time)" >&2
demo_note=""
if [[ ${CLONES:-0} == 1 ]]; then
  demo_note=" Each run a fresh clone of HEAD running \`bash ci/demo.sh\` (setup, build, calibrate, plan, the matrix, the report): the whole demo took $(cat "$out"/*.demo | python3 -c "import sys; v=[float(x) for x in sys.stdin]; print(f'{min(v):.0f}-{max(v):.0f}')") s; the matrix wall is its own summary's."
fi
python3 ci/campaign_results.py write "$results" "${BLOCK:-runs}" \
  --command "${CLONES:+CLONES=$CLONES }${VARIANTS:+VARIANTS=$VARIANTS }THREADS='${THREADS:-1}' BUDGETS='${BUDGETS:-360}' MAX_PAIRS='${MAX_PAIRS:-8 12}' ci/campaigns/main_job_campaign.sh $k${*:+ $*}" \
  --table "$out/table.md" \
  --note "The demo's matrix (\`matrix --reduced --adaptive\`, sides $variants) per setting, K runs each, fresh stores; a case is decisive when its step-time verdict is regressed, improved or no change; the pair report's verdicts (compare/, Holm across the matrix, one look a case).$demo_note"
