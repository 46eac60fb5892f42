#!/usr/bin/env bash
# The `ab` sessions in simulation (docs/verdicts.md §5): the rules before issue
# #50 (Bonferroni over looks and tests) beside the rules after it (O'Brien-Fleming
# error spending, the step time primary), on the same simulated pairs of the
# tests' simulated host: A/A false alarms, power at +5% and +10%, mean pairs.
# (The main job's plan is simulated from its measured components by
# ci/campaigns/duet_variance.sh; the block `matrix` of the results file is the
# pre-#60 matrix, kept as history.) Seeded and exact: a rerun writes the same
# table. Counts, not timings: run it anywhere.
#
#   ci/campaigns/verdict_sim.sh [N=1000]
# Environment: RESULTS (default docs/results/verdict_sim.md; a smoke test writes elsewhere).
set -euo pipefail
cd "$(dirname "$0")/../.."
n=${1:-1000}
results=${RESULTS:-docs/results/verdict_sim.md}
[[ -f ci/campaign_results.py ]] || { echo "verdict_sim.sh: ci/campaign_results.py is missing" >&2; exit 2; }
cmake --build build --target twinbench_verdict_sim >&2
sim=build/tests/twinbench_verdict_sim
tmp=$(mktemp -d /tmp/twinbench-verdict-sim-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
"$sim" sessions "$n" > "$tmp/sessions.md"
cat "$tmp/sessions.md"
python3 ci/campaign_results.py write "$results" sessions --command "ci/campaigns/verdict_sim.sh $n" \
  --table "$tmp/sessions.md" \
  --note "twinbench_verdict_sim sessions $n: \`ab\` sessions of one case, at most 24 pairs, looks at 3, 4, 6, 8, 12, 16 and 24, 3% threshold, alpha 5%, on the simulated host (tests/unit/sim_model.h: lognormal processes, AR(1) steps with 1% stalls, a quarter of the run-level variance shared by the two runs of a pair). Each session's 24 pairs are judged by both rules; a rule stops at its first decisive look. Old: every look at 1 - 0.05 / (2 timing tests x 7 looks). New: each look at what O'Brien-Fleming spending releases there, the step time alone in its family."
