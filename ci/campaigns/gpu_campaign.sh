#!/usr/bin/env bash
# The GPU campaign (issue 22), one call on a GPU host after ci/gpu_build.sh:
#   1. step-0 parity of functional vs module on CUDA, fp32 (01_base) and bf16 (02_bf16);
#   2. calibrate: measured bf16/tf32/fp32(/fp8) dense-matmul peaks beside the datasheet;
#   3. the matrix 01-06 at full size, both implementations, interleaved;
#   4. 06_1b at 1x2048 and at the largest per-device batch the plan says fits;
#   5. the pair report (HTML + markdown) and the MaxView tables.
# Everything lands in $OUT (default ./gpu-campaign): gpu.db, logs, report/.
#   TWINBENCH   binary (default build-gpu/harness/twinbench)
#   DEVICE      cuda (default), cuda:N, or cpu for a smoke test of this script
#   REDUCED=1   each case's [reduced] form and 3 steps (smoke test on a CPU host)
#   REPEATS     repeats per case and implementation (default 3)
set -euo pipefail
cd "$(dirname "$0")/../.."
out="${OUT:-gpu-campaign}"
bin="${TWINBENCH:-build-gpu/harness/twinbench}"
device="${DEVICE:-cuda}"
repeats="${REPEATS:-3}"
size=(); steps=()
if [[ "${REDUCED:-0}" == 1 ]]; then size=(--reduced); steps=(train.steps=3); fi
mkdir -p "$out"
db="$out/gpu.db"
log() { echo "gpu_campaign: $*" | tee -a "$out/campaign.log" >&2; }
step0() {  # step0 CASE TOLERANCE [overrides...]: functional and module step-0 losses, |diff| against TOLERANCE
  local c="$1" tol="$2"; shift 2
  "$bin" run --case "$c" --device "$device" --variants functional,module --db "$db" --json --no-progress \
    "${size[@]}" train.steps=1 "$@" |
    python3 -c 'import json,sys; r={x["variant"]:x["final_loss"] for x in json.load(sys.stdin)}; t=float(sys.argv[1])
f,m=r["functional"],r["module"]; d=abs(f-m); w=("within","OUTSIDE")[d>t]
print(f"functional {f:.7f} module {m:.7f} |diff| {d:.2e} (tolerance {t:g}: {w})")' "$tol"
}

command -v nvidia-smi >/dev/null && nvidia-smi -q >"$out/nvidia-smi.txt" 2>&1 || true
log "device $device, binary $bin, $("$bin" --version 2>/dev/null | head -1)"
# Step-0 tolerances (docs/gpu.md): fp32 with TF32 off differs only by the order of
# reductions; bf16 autocast rounds every matmul input to 8 significant bits.
log "parity fp32 (01_base): $(step0 01_base "${PARITY_TOL_FP32:-1e-4}")"
log "parity bf16 (02_bf16): $(step0 02_bf16 "${PARITY_TOL_BF16:-2e-2}")"

"$bin" calibrate --device "$device" --db "$db" --json >"$out/calibrate.json"
log "calibrate: $(tr -d '\n' <"$out/calibrate.json" | head -c 600)"

for c in 06_1b 07_8b; do
  "$bin" plan --case "$c" --device "$device" --json >"$out/plan_$c.json" 2>>"$out/campaign.log" || true
done
largest=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("largest_batch_that_fits") or 1)' "$out/plan_06_1b.json")
log "plan: 06_1b largest per-device batch that fits: $largest"

"$bin" matrix --cases '0[1-6]*' --device "$device" --repeats "$repeats" --db "$db" --no-progress \
  --group gpu-matrix "${size[@]}" "${steps[@]}" 2>&1 | tee "$out/matrix.txt"
batches=(1); [[ "$largest" -gt 1 ]] && batches+=("$largest")
for b in "${batches[@]}"; do
  "$bin" matrix --cases 06_1b --device "$device" --repeats "$repeats" --db "$db" --no-progress \
    --group "gpu-1b-b$b" "${size[@]}" "${steps[@]}" train.batch="$b" train.seq_len=2048 2>&1 | tee "$out/matrix_1b_b$b.txt"
done

"$bin" report pair --db "$db" --group gpu-matrix --out "$out/report" >/dev/null
"$bin" report pair --db "$db" --group gpu-matrix --format markdown >"$out/report.md"
log "done: $out/report/index.html, $out/report.md"
