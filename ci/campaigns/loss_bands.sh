#!/usr/bin/env bash
# The loss-band campaign of docs/verdicts.md ("Losses judged by their own
# arithmetic"): how far the final and eval losses of *the same computation*
# move when only the order of floating-point reductions changes. For every
# precision / quantization mode (one case each) and seed, the case is trained
# by both implementations under several thread counts and both fp32 GEMM paths
# (oneDNN and ATen); every run of one (mode, seed) computes the same
# mathematical function, so the spread of their losses is that arithmetic's own
# noise. Numerics only: timings are not read, so this may run on a busy host.
# Prints one row per mode: runs, the largest spread of final and eval loss over
# the seeds (implementations alone, and all orders), and the tolerance it
# suggests (3 x the largest spread, rounded up to 1/2/5 x 10^k, never below
# the fp32 exact rule's 1e-4). The table goes to docs/results/loss_bands.md
# (block bands, stamped with the command, commit, host and date; docs/verdicts.md
# quotes it) and the tolerances to harness/metrics/loss_bands.cpp.
#
#   ci/campaigns/loss_bands.sh [SEEDS=3] [extra overrides...]
# Environment: CASES (default "01_base 02_bf16 03_dropout 04_int8 05_fp8"),
# THREADS (default "1 2 3"), GEMMS (default "onednn aten"; the path of fp32 products only,
# so bf16 cases need just one), OUT (a directory; default a new temp dir), BIN (default
# build/harness/twinbench).
set -euo pipefail
cd "$(dirname "$0")/../.."
seeds=${1:-3}
shift || true
bin=${BIN:-$PWD/build/harness/twinbench}
[[ -x $bin ]] || { echo "build first: bash ci/build.sh" >&2; exit 2; }
out=${OUT:-$(mktemp -d /tmp/twinbench-bands-XXXXXX)}
mkdir -p "$out"
echo "loss bands: writing to $out" >&2
for case in ${CASES:-01_base 02_bf16 03_dropout 04_int8 05_fp8}; do
  for seed in $(seq 0 $((seeds - 1))); do
    for threads in ${THREADS:-1 2 3}; do
      for gemm in ${GEMMS:-onednn aten}; do
        f=$out/$case-s$seed-t$threads-$gemm.json
        [[ -s $f ]] && continue  # an earlier, interrupted campaign in OUT: keep what it measured
        # --oversubscribe: more threads than cores only changes how reductions are split, which
        # is the point here (timings are not read).
        TWINBENCH_THREADS=$threads TWINBENCH_GEMM=$gemm "$bin" run --case "$case" --variant functional,module \
          --no-db --no-progress --oversubscribe --json "train.seed=$seed" "$@" > "$f.tmp" 2> "$out/last.log"
        mv "$f.tmp" "$f"
      done
    done
    echo "loss bands: $case seed $seed done" >&2
  done
done
python3 - "$out" > "$out/bands.md" <<'PY'
import glob, json, math, os, re, sys
out = sys.argv[1]
def nice_up(x):
    """The smallest 1, 2 or 5 x 10^k at or above x."""
    if x <= 0:
        return 0.0
    k = math.floor(math.log10(x))
    for m in (1, 2, 5, 10):
        if m * 10 ** k >= x * (1 - 1e-12):
            return m * 10 ** k
# the cases' arithmetic (cases/*.toml): dtype / quant.mode
MODES = {"01_base": "fp32", "02_bf16": "bf16", "03_dropout": "fp32 (dropout)", "04_int8": "fp32 + int8",
         "05_fp8": "fp32 + fp8"}
runs = {}
for f in sorted(glob.glob(f"{out}/*.json")):
    m = re.match(r".*/(.+)-s(\d+)-t(\d+)-(\w+)\.json$", f)
    if not m:
        continue
    case, seed, threads, gemm = m.group(1), int(m.group(2)), int(m.group(3)), m.group(4)
    for r in json.load(open(f)):
        if r["status"] != "completed":
            sys.exit(f"{f}: {r['variant']} {r['status']}: {r['reason']}")
        runs.setdefault(case, {}).setdefault(seed, []).append((r["variant"], threads, gemm, r["final_loss"], r["eval_loss"]))
print("| case | mode | runs | max spread, implementations only (final / eval) | max spread, all orders (final / eval) | suggested tolerance |")
print("|---|---|---:|---:|---:|---:|")
for case, by_seed in runs.items():
    n = sum(len(v) for v in by_seed.values())
    impl = [0.0, 0.0]
    every = [0.0, 0.0]
    for seed, rs in by_seed.items():
        for k in (0, 1):
            vals = [r[3 + k] for r in rs]
            every[k] = max(every[k], max(vals) - min(vals))
            # functional vs module under the same threads and GEMM path
            for t in {(r[1], r[2]) for r in rs}:
                pair = [r[3 + k] for r in rs if (r[1], r[2]) == t]
                impl[k] = max(impl[k], max(pair) - min(pair))
    tol = max(1e-4, nice_up(3 * max(every)))
    print(f"| {case} | {MODES.get(case, '?')} | {n} | {impl[0]:.2g} / {impl[1]:.2g} | "
          f"{every[0]:.2g} / {every[1]:.2g} | {tol:g} |")
print(f"\n(outputs in {out}; seeds {sorted({s for v in runs.values() for s in v})})")
PY
cat "$out/bands.md"
# The table into the results file docs/verdicts.md §10 quotes (ci/campaign_results.py), as
# block bands (RESULTS: another file; BLOCK: another name, for a partial campaign).
sed -n '/^|/p' "$out/bands.md" > "$out/bands.table.md"
python3 ci/campaign_results.py write "${RESULTS:-docs/results/loss_bands.md}" "${BLOCK:-bands}" --table "$out/bands.table.md" \
  --command "CASES='${CASES:-01_base 02_bf16 03_dropout 04_int8 05_fp8}' THREADS='${THREADS:-1 2 3}' GEMMS='${GEMMS:-onednn aten}' ci/campaigns/loss_bands.sh $seeds${*:+ $*}"
