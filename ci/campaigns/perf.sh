#!/usr/bin/env bash
# The training-step benchmark: both C++ implementations against PyTorch 2.x eager and
# torch.compile (the built-in `eager` and `compiled` implementations, variants/eager/train.py,
# run with the project venv's torch) on the `small` preset, AdamW, at batch 8 x 256 and at
# 01_base's own 4 x 128. Every implementation runs through `twinbench run` in its own
# process (the same weights, batches and step-time rules), in an order that rotates every
# round; then the round calibrates the matmul peak (`twinbench calibrate`).
# ci/campaigns/perf/table.py prints medians over the rounds, the share of the calibrated peak, the
# first-step (compile) time, and each ratio against eager and against compiled with its
# 95% interval (t on the per-round log ratios: the round is the unit). See
# docs/performance.md. Run after ci/build.sh and ci/venv.sh, on an otherwise idle machine.
#
#   ci/campaigns/perf.sh                         # 5 rounds, fp32, default environment, both shapes
#   ROUNDS=8 SHAPES=8x256 ci/campaigns/perf.sh
#   IMPLS="functional module eager compiled eager-debian linen nnx" ci/campaigns/perf.sh
#   ENVS="default tuned" DTYPES="fp32 bf16" ci/campaigns/perf.sh
# Environment: THREADS (2), ROUNDS (5), STEPS (8, the first 2 are warm-up: step 0 holds
# torch.compile's and XLA's compilation), PRESET (small), SHAPES ("8x256 4x128", batch x
# sequence), DTYPES (fp32), ENVS (default; "tuned" below), IMPLS ("functional module eager
# compiled"; any twinbench implementation), OUT (a scratch dir), RESULTS (the results file
# each table is written to, default docs/results/perf.md).
set -euo pipefail
cd "$(dirname "$0")/../.."

threads=${THREADS:-2}
rounds=${ROUNDS:-5}
steps=${STEPS:-8}
preset=${PRESET:-small}
shapes=${SHAPES:-8x256 4x128}
dtypes=${DTYPES:-fp32}
envs=${ENVS:-default}
out=${OUT:-$(mktemp -d /tmp/twinbench-perf.XXXXXX)}
impls=(${IMPLS:-functional module eager compiled})
bin=build/harness/twinbench
py=/usr/bin/python3  # runs ci/campaigns/perf/table.py (scipy)

[[ -x $bin ]] || { echo "ci/campaigns/perf.sh: $bin is missing: run ci/build.sh first" >&2; exit 2; }
$py -c "import scipy" 2>/dev/null || { echo "ci/campaigns/perf.sh: $py cannot import scipy: run ci/setup.sh" >&2; exit 2; }
for impl in "${impls[@]}"; do
  if [[ $impl =~ ^(eager|compiled|linen|nnx)$ && -z ${TWINBENCH_PYTHON:-} && ! -x .venv/bin/python ]]; then
    echo "ci/campaigns/perf.sh: $impl runs on the project venv: run ci/venv.sh first" >&2
    exit 2
  fi
done
((steps > 4)) || { echo "ci/campaigns/perf.sh: STEPS must be > 4 (2 warm-up steps, step 0 and the eval step are left out)" >&2; exit 2; }
for e in $envs; do
  [[ $e == default || $e == tuned ]] || { echo "ci/campaigns/perf.sh: ENVS: '$e' is not one of: default, tuned" >&2; exit 2; }
done

# Two process environments, for every implementation alike:
#   default: as a user runs it. twinbench itself sets OMP_WAIT_POLICY=PASSIVE when it is
#            unset and keeps freed memory in the process (harness/base/process_env.h);
#            its Python trainers inherit OMP_WAIT_POLICY (the malloc setting is made
#            inside twinbench's process and is not inherited).
#   tuned:   OMP_WAIT_POLICY=PASSIVE and glibc malloc without mmap and trimming set before
#            twinbench starts, and OPENBLAS_CORETYPE removed so OpenBLAS picks its kernels
#            for this CPU itself (this machine image exports OPENBLAS_CORETYPE=Haswell).
# All are read when the libraries load, so they must be set before the process starts.
tuned_env=(-u OPENBLAS_CORETYPE OMP_WAIT_POLICY=PASSIVE
  GLIBC_TUNABLES=glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=2147483647)
with_env() {
  local e=$1
  shift
  if [[ $e == tuned ]]; then env "${tuned_env[@]}" "$@"; else "$@"; fi
}

mkdir -p "$out"
echo "ci/campaigns/perf.sh: load before: $(cut -d' ' -f1-3 /proc/loadavg); writing to $out" >&2
n=${#impls[@]}
for ((r = 0; r < rounds; r++)); do
  for e in $envs; do
    for shape in $shapes; do
      batch=${shape%x*} seq=${shape#*x}
      for dt in $dtypes; do
        tag="$e-$shape-$dt-$r"
        # Rotate the order each round: on this machine the later of back-to-back runs is
        # often a few percent slower, whichever it is.
        for ((k = 0; k < n; k++)); do
          impl=${impls[$(((r + k) % n))]}
          echo "ci/campaigns/perf.sh: round $((r + 1))/$rounds $e $shape $dt: $impl" >&2
          with_env "$e" env TWINBENCH_THREADS="$threads" $bin run --preset "$preset" --variant "$impl" --json \
            --no-progress --db "$out/$e.db" train.batch="$batch" train.seq_len="$seq" train.steps="$steps" \
            train.dtype="$dt" train.eval_batches=1 >"$out/$impl-$tag.json"
        done
      done
    done
    # After the round's runs, not before: the run right after a calibration was often
    # the slowest of its round here, whichever implementation it was.
    with_env "$e" env TWINBENCH_THREADS="$threads" $bin calibrate --db "$out/$e.db" --dtype fp32,bf16 --json \
      >"$out/calibrate-$e-$r.json"
  done
done
echo "ci/campaigns/perf.sh: load after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2

# Each table also into the results file docs/performance.md quotes (ci/campaign_results.py).
command="THREADS=$threads ROUNDS=$rounds STEPS=$steps PRESET=$preset SHAPES='$shapes' DTYPES='$dtypes' ENVS='$envs'"
command+=" IMPLS='${impls[*]}' ci/campaigns/perf.sh"
RESULTS=${RESULTS:-docs/results/perf.md} RESULTS_COMMAND=$command \
  $py ci/campaigns/perf/table.py "$out" "$rounds" "$shapes" "$dtypes" "$envs" "${impls[*]}"
