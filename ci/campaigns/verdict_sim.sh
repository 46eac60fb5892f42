#!/usr/bin/env bash
# The verdict campaigns in simulation (docs/verdicts.md §5, §7, §11): the rules
# before issue #50 (Bonferroni over looks, tests and cases; the matrix's cases
# one after another with equal shares of the budget) beside the rules after it
# (O'Brien-Fleming error spending, Holm, the step time primary, the budget where
# a decision is likeliest), on the same simulated pairs: `ab` sessions on the
# simulated host of the tests (A/A false alarms, power at +5% and +10%, mean
# pairs) and the main job on a model of this host's reduced cases (A/A matrices
# with a false alarm, cases decided within 360 s and 720 s). Seeded and exact: a
# rerun writes the same tables. Counts, not timings: run it anywhere.
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
"$sim" matrix "$n" > "$tmp/matrix.md"
cat "$tmp/sessions.md" "$tmp/matrix.md"
python3 ci/campaign_results.py write "$results" sessions --command "ci/campaigns/verdict_sim.sh $n" \
  --table "$tmp/sessions.md" \
  --note "twinbench_verdict_sim sessions $n: \`ab\` sessions of one case, at most 24 pairs, looks at 3, 4, 6, 8, 12, 16 and 24, 3% threshold, alpha 5%, on the simulated host (tests/unit/sim_model.h: lognormal processes, AR(1) steps with 1% stalls, a quarter of the run-level variance shared by the two runs of a pair). Each session's 24 pairs are judged by both rules; a rule stops at its first decisive look. Old: every look at 1 - 0.05 / (2 timing tests x 7 looks). New: each look at what O'Brien-Fleming spending releases there, the step time alone in its family."
python3 ci/campaign_results.py write "$results" matrix --command "ci/campaigns/verdict_sim.sh $n" \
  --table "$tmp/matrix.md" \
  --note "twinbench_verdict_sim matrix $n: the main job's 8 reduced cases as a model (tests/tools/verdict_sim.cpp: per case the change the runs of issue #50 suggest, the spread of ln(B/A) per pair and the seconds a pair took, from docs/verdicts.md §11; 06_1b's and 07_8b's spreads guessed from the intervals the issue quotes), alpha 5% for the whole matrix. Old: the cases one after another, each with the budget left over the cases left, every look at 1 - 0.05 / (8 cases x 2 timing tests x looks), futile when the pairs to decide exceed the maximum. New: compare::AdaptiveMatrix as the binary runs it. A false alarm: regressed or improved where nothing changed; decided: regressed, improved or no change."
