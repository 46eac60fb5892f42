#!/usr/bin/env bash
# Variance components of the lockstep duet on the real binary (issue #55), in
# one session of an otherwise idle host, one thread:
#
#  1. A/A, one build against itself (`ab`), for AA_CASES in their reduced
#     forms: CHUNKS x (an `ab --pairing lockstep` session of K rounds, then an
#     `ab --pairing runs` session of K rounds, in alternating order), so that
#     both designs meet the same hours of the host. Per design the sd of
#     ln(B/A) per replicate (a duet, or a run-level pair), its 90% range, and
#     for duets the spread within a duet (round to round) and between duets.
#  2. The main job's cases, functional vs module, each as REPEATS lockstep
#     duets (`matrix --reduced --repeats`, 07_8b as REPEATS_8B): per case the
#     change, the sd per duet, its two components and the seconds a duet takes.
#  3. The main job by simulation from those figures: tests/tools/verdict_sim.cpp's
#     matrix-model (AdaptiveMatrix as the binary runs it, on duets of the
#     components measured: unit/sim_duets.h), the cases as measured and
#     unchanged (A/A), at the noise measured and at half of it, at most 4, 8
#     and 16 duets a case, at the demo's 360 s budget.
#
# Writes blocks `aa`, `components` and `plan` of docs/results/duet_variance.md
# (ci/campaign_results.py). Not part of the test suite.
#
#   ci/campaigns/duet_variance.sh
# Environment: TAG (blocks components-TAG and plan-TAG instead), SKIP_AA (1: part 1 not run, block aa kept), AA_CASES (default 01_base,04_int8,06_1b), CHUNKS (3), K (4),
# CASES (the main job's cases but 07_8b, default '0[1-68]*'), REPEATS (8), REPEATS_8B (07_8b's, 3),
# STEPS (train.steps of part 2's duets, default the reduced forms'; STEPS_8B 07_8b's: rounds within a duet are
# what part 2 measures), OUT (default duet-variance), RESULTS (default docs/results/duet_variance.md).
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=$PWD/build/harness/twinbench
sim=$PWD/build/tests/twinbench_verdict_sim
[[ -x $bin && -x $sim ]] || { echo "build first: bash ci/build.sh" >&2; exit 2; }
aa_cases=${AA_CASES:-01_base,04_int8,06_1b}
chunks=${CHUNKS:-3}
k=${K:-4}
cases=${CASES:-0[1-68]*}
repeats=${REPEATS:-8}
repeats_8b=${REPEATS_8B:-3}
out=${OUT:-duet-variance}
results=${RESULTS:-docs/results/duet_variance.md}
export TWINBENCH_THREADS=1 TWINBENCH_WHY_RUNS=0
rm -rf "$out" && mkdir -p "$out"
steps=${STEPS:+train.steps=$STEPS}
steps_8b=${STEPS_8B:+train.steps=$STEPS_8B}
command="${TAG:+TAG=$TAG }SKIP_AA=${SKIP_AA:-0} AA_CASES=$aa_cases CHUNKS=$chunks K=$k CASES='$cases' REPEATS=$repeats REPEATS_8B=$repeats_8b${STEPS:+ STEPS=$STEPS}${STEPS_8B:+ STEPS_8B=$STEPS_8B} ci/campaigns/duet_variance.sh"
start=$(date +%s)

# 1. A/A: both designs, alternating, the same build on both sides (SKIP_AA=1: keep block aa as it is).
IFS=, read -ra aa <<<"$aa_cases"
[[ ${SKIP_AA:-0} == 1 ]] && aa=()
for c in "${aa[@]}"; do
  for ((i = 0; i < chunks; i++)); do
    designs=(lockstep runs)
    ((i % 2)) && designs=(runs lockstep)
    for d in "${designs[@]}"; do
      echo "duet_variance: A/A $c chunk $((i + 1))/$chunks $d" >&2
      "$bin" ab --a "$bin" --b "$bin" --case "$c" --reduced --rounds "$k" --pairing "$d" --db "$out/aa.db" \
        >>"$out/aa.log" 2>&1
    done
  done
done
aa_s=$(( $(date +%s) - start ))
[[ ${#aa[@]} -gt 0 ]] && python3 ci/campaigns/duet_variance.py "$out/aa.db" --side-key branch --a ab:A --b ab:B --tsv >"$out/aa.tsv"

# 2. The main job's cases as lockstep duets, functional vs module (STEPS: longer duets, more rounds each).
mid=$(date +%s)
"$bin" matrix --cases "$cases" --reduced --repeats "$repeats" --db "$out/matrix.db" --no-progress $steps \
  >"$out/matrix.log" 2>&1 || true
# 07_8b (a minute or more a duet) with fewer.
[[ $repeats_8b -gt 0 ]] && "$bin" matrix --cases 07_8b --reduced --repeats "$repeats_8b" --db "$out/matrix.db" \
  --no-progress $steps_8b >>"$out/matrix.log" 2>&1 || true
matrix_s=$(( $(date +%s) - mid ))
# The steady rounds each case's reduced form plans (warm-up and the last step left out): the model's duets start so.
planned=""
for f in cases/*.toml; do
  name=$(basename "$f" .toml)
  n=$(sed -n 's/^"train.steps" *= *\([0-9]*\).*/\1/p' "$f" | tail -1)
  w=$(sed -n 's/^"measure.warmup_steps" *= *\([0-9]*\).*/\1/p' "$f" | tail -1)
  [[ -n $n ]] && planned+="${planned:+,}$name=$(( n - ${w:-1} - 1 ))"
done
python3 ci/campaigns/duet_variance.py "$out/matrix.db" --a functional --b module --tsv --json "$out/matrix.json" \
  --model "$out/model.tsv" --planned "$planned" >"$out/components.tsv"

# 3. The main job by simulation of the measured components (unit/sim_duets.h).
"$sim" matrix-model "$out/model.tsv" 1000 360 >"$out/plan.md"
cat "$out/components.tsv" "$out/plan.md"

host_note="TWINBENCH_THREADS=1, each duet's sides pinned to one core drawn per duet"
[[ ${#aa[@]} -gt 0 ]] && python3 ci/campaign_results.py write "$results" aa --command "$command" --tsv "$out/aa.tsv" \
  --note "A/A: ab of one build against itself, reduced forms, $chunks chunks of a lockstep session and a run-level session of $k rounds each, alternating; $host_note; $aa_s s. sd med: of ln(B/A) per replicate, the ratio of the sides' median steady step times; gm and mr: per duet, the mean and median over its rounds of ln(b_i/a_i); round sd: within a duet; between sd: what is left between duets (Kalibera & Jones's two levels); tm: the 20%-trimmed mean of a duet's rounds (what the verdicts judge since #60), its Tukey-McLaughlin within se, the between sd left, a round's winsorized sd, a round's and the rest of a duet's seconds"
python3 ci/campaign_results.py write "$results" "components${TAG:+-$TAG}" --command "$command" --tsv "$out/components.tsv" \
  --note "the main job's cases, functional vs module, each $repeats lockstep duets (07_8b $repeats_8b)${STEPS:+ of $STEPS steps}${STEPS_8B:+ (07_8b $STEPS_8B)}, reduced forms; $host_note; $matrix_s s; tm: the 20%-trimmed mean of a duet's rounds (what the verdicts judge since #60), its Tukey-McLaughlin within se, the between sd left (sqrt(max(0, var tm - mean within var))), a round's winsorized sd, a round's and the rest of a duet's seconds"
python3 ci/campaign_results.py write "$results" "plan${TAG:+-$TAG}" --command "$command" --table "$out/plan.md" \
  --note "twinbench_verdict_sim matrix-model over the components above (per case the change, the between-duet sd, a round's sd, a duet's overhead and a round's seconds, the steady rounds its reduced form plans; 07_8b's between sd, where it had one duet, the others' root mean square): the adaptive matrix as the binary runs it (noise-based stopping, one look a case, tests/unit/sim_duets.h), 1000 matrices per row, alpha 5% for the whole matrix, 360 s"
