#!/usr/bin/env bash
# Training-step performance of both implementations against plain PyTorch eager
# (ci/perf/eager_reference.py) on the `small` preset, batch 8 x 256, AdamW, fp32 and
# bf16, in the default and a tuned process environment: calibrates the matmul peak,
# then runs twinbench and the eager reference interleaved, ROUNDS times, and prints one
# table (medians over the rounds) with tokens/s, step time, model TFLOP/s, fraction of
# the calibrated peak of the run's dtype, and the ratio against eager, taken within
# each round. See docs/performance.md. Run after ci/build.sh.
#
#   ci/perf.sh                     # 2 rounds of 8 steps, 2 threads
#   ROUNDS=3 STEPS=10 ci/perf.sh
#   ENVS=default ci/perf.sh        # only as a user runs it
#   DTYPES=fp32 ci/perf.sh         # skip bf16
# Environment: THREADS (2), ROUNDS (2), STEPS (8, the first 2 are warm-up),
# PRESET (small), BATCH (8), SEQ (256), DTYPES ("fp32 bf16"), ENVS ("default tuned",
# see below), OUT (a scratch dir).
set -euo pipefail
cd "$(dirname "$0")/.."

threads=${THREADS:-2}
rounds=${ROUNDS:-2}
steps=${STEPS:-8}
preset=${PRESET:-small}
batch=${BATCH:-8}
seq=${SEQ:-256}
dtypes=${DTYPES:-fp32 bf16}
envs=${ENVS:-default tuned}
out=${OUT:-$(mktemp -d /tmp/twinbench-perf.XXXXXX)}
bin=build/harness/twinbench
py=/usr/bin/python3  # Debian's python3-torch: the same LibTorch 1.13 and BLAS as the build

[[ -x $bin ]] || { echo "ci/perf.sh: $bin is missing: run ci/build.sh first" >&2; exit 2; }
$py -c "import torch" 2>/dev/null || { echo "ci/perf.sh: $py cannot import torch: run ci/setup.sh (python3-torch)" >&2; exit 2; }
((steps > 4)) || { echo "ci/perf.sh: STEPS must be > 4 (2 warm-up steps, step 0 and the eval step are left out)" >&2; exit 2; }
for e in $envs; do
  [[ $e == default || $e == tuned ]] || { echo "ci/perf.sh: ENVS: '$e' is not one of: default, tuned" >&2; exit 2; }
done

# Two process environments, for twinbench and eager alike (same libgomp and OpenBLAS):
#   default: as a user runs it. twinbench itself sets OMP_WAIT_POLICY=PASSIVE when it is
#            unset (harness/base/process_env.h); eager does not.
#   tuned:   OMP_WAIT_POLICY=PASSIVE (LibTorch's OpenMP workers sleep instead of spinning
#            between ops, so they stop competing with OpenBLAS's own pthreads for the
#            cores) and OPENBLAS_CORETYPE removed, so OpenBLAS picks the kernels for this
#            CPU itself (this machine image exports OPENBLAS_CORETYPE=Haswell: AVX2 kernels
#            on an AVX-512 CPU that OpenBLAS detects as Cooperlake).
# Both are read when the libraries load, so they must be set before the process starts.
tuned_env=(-u OPENBLAS_CORETYPE OMP_WAIT_POLICY=PASSIVE)
with_env() {
  local e=$1
  shift
  if [[ $e == tuned ]]; then env "${tuned_env[@]}" "$@"; else "$@"; fi
}

mkdir -p "$out"
echo "ci/perf.sh: load before: $(cut -d' ' -f1-3 /proc/loadavg); tuned = ${tuned_env[*]}; writing to $out" >&2
for e in $envs; do
  with_env "$e" env TWINBENCH_THREADS="$threads" $bin calibrate --db "$out/$e.db" --dtype fp32,bf16 --json \
    >"$out/calibrate-$e.json"
done

for ((r = 0; r < rounds; r++)); do
  for dt in $dtypes; do
    for e in $envs; do
      # The implementations swap order every round: on this machine the second of two
      # back-to-back runs is often a few percent slower, whichever it is.
      order=functional,module
      ((r % 2)) && order=module,functional
      echo "ci/perf.sh: round $((r + 1))/$rounds $dt $e: twinbench $order, then eager" >&2
      with_env "$e" env TWINBENCH_THREADS="$threads" $bin run --preset "$preset" --variant $order --json \
        --db "$out/$e.db" train.batch="$batch" train.seq_len="$seq" train.steps="$steps" train.dtype="$dt" \
        train.eval_batches=1 >"$out/twinbench-$e-$dt-$r.json"
      # one step fewer: twinbench also leaves out step 0 and its last (eval) step
      with_env "$e" $py ci/perf/eager_reference.py --preset "$preset" --batch "$batch" --seq-len "$seq" \
        --steps $((steps - 1)) --warmup 2 --threads "$threads" --dtype "$dt" >"$out/eager-$e-$dt-$r.json"
    done
  done
done
echo "ci/perf.sh: load after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2

$py ci/perf/table.py "$out" "$rounds" "$dtypes" "$envs"
