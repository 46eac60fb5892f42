#!/usr/bin/env bash
# twinbench's GPU campaign, run from the kit that ci/gpu_kit.sh makes, in ONE
# call of a lent GPU machine (docs/gpu.md, "The GPU kit"):
#
#   bash gpu-kit/campaign.sh                the campaign on cuda (about 7 minutes)
#   bash gpu-kit/campaign.sh --device cpu   the same steps on the CPU with reduced
#                                           shapes: the rehearsal on a bare system (CI)
#
# Steps, each with a budget in seconds that it prints and holds to (a watchdog):
# calibrate (bf16, fp32), plan every case, 01-05 as interleaved pairs of the two
# implementations (`matrix --adaptive`), 06_1b at full size in bf16, 07_8b with
# its layers reduced to what one device holds (recorded as reduced), the why of
# one decisive pair (Kineto kernel times on CUDA), an out-of-memory case stored as
# an outcome, the eager PyTorch peer on 01/02, the reports. A failing step is
# logged and the campaign goes on.
#
# Results in $OUT (default ./gpu-campaign), within the device tool's limits (at
# most 8 files, 16 MiB each): summary.md (one page: device, driver, versions, MFU
# and memory per case, loss band per arithmetic, what failed and why),
# campaign.log, gpu.db (the store), verdicts.json (every report's JSON),
# pair.html (the pair report), facts.json (device facts, calibration, plans,
# steps).
#
# Environment: TWINBENCH_TORCH_PYTHON, the interpreter whose torch libraries the
# binary runs on (default python3); GPU_8B_MAX_LAYERS (default 4), a cap on
# 07_8b's layers that keeps its step inside the budget.
#
# Exit: the number of steps that failed (0: all passed); 100: the kit cannot run
# here (a library is missing: named on one line); 2: bad arguments.
set -uo pipefail

kit=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
device=cuda
while [[ $# -gt 0 ]]; do
  case "$1" in
    --device) device="${2:-}"; shift 2 || shift ;;
    --device=*) device="${1#*=}"; shift ;;
    -h|--help) sed -n '2,30p' "$0"; exit 0 ;;
    *) echo "campaign.sh: unknown argument '$1' (usage: campaign.sh [--device cuda|cpu])" >&2; exit 2 ;;
  esac
done
case "$device" in cuda|cuda:[0-9]*|cpu) ;; *) echo "campaign.sh: --device is cuda, cuda:N or cpu, not '$device'" >&2; exit 2 ;; esac
gpu=1; [[ "$device" == cpu ]] && gpu=0

out="${OUT:-$PWD/gpu-campaign}"
mkdir -p "$out"
out=$(cd "$out" && pwd)
(cd "$out" && rm -rf campaign.log summary.md facts.json verdicts.json pair.html gpu.db gpu.db-*)  # a rerun's own
work=$(mktemp -d "${TMPDIR:-/tmp}/twinbench-campaign-XXXXXX")
trap 'rm -rf "$work"' EXIT
log="$out/campaign.log"
: >"$log"
db="$work/gpu.db"  # copied to $OUT at the end as one file (no -wal, -shm or cause folder)
start=$(date +%s)
say() { echo "campaign: $*" | tee -a "$log" >&2; }

# --- The libraries: the kit's own, then torch's folder and its CUDA libraries -----
python="${TWINBENCH_TORCH_PYTHON:-python3}"
torch_libs=$(bash "$kit/torch_libs.sh" "$python" 2>>"$log") ||
  { say "no torch: '$python' cannot import torch (set TWINBENCH_TORCH_PYTHON to the interpreter that has it)"; exit 100; }
export LD_LIBRARY_PATH="$kit/lib:$torch_libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
bin="$kit/bin/twinbench"
missing() { ldd "$bin" 2>&1 | grep -E 'not found' | sed -E 's/^[[:space:]]+//; s/ => not found//' | sort -u | tr '\n' ' '; }
gone=$(missing)
if [[ -n "$gone" ]] && grep -q -E 'libstdc\+\+|libgcc_s|GLIBCXX|CXXABI' <<<"$gone"; then
  # This host's C++ runtime is older than the build host's: use the kit's copy.
  export LD_LIBRARY_PATH="$kit/lib/fallback:$LD_LIBRARY_PATH"
  say "this host's libstdc++ is too old for the kit: using the kit's copy (lib/fallback)"
  gone=$(missing)
fi
if [[ -n "$gone" ]]; then
  say "missing libraries: $gone(kit $kit, torch $torch_libs)"
  exit 100
fi

# Everything the binary reads comes from the kit: its case files and the eager trainer.
export TWINBENCH_SOURCE_DIR="$kit" TWINBENCH_CASES="$work/cases" TWINBENCH_PYTHON="$python" TWINBENCH_DB="$db"
mkdir -p "$work/cases"
cp "$kit"/cases/*.toml "$work/cases/"

tb() { "$bin" "$@"; }
version=$(tb --version 2>&1 | head -1)
say "device $device; $version; kit built from $(cat "$kit/BUILT_FROM" 2>/dev/null || echo unknown); torch libraries $torch_libs"

# --- Steps ----------------------------------------------------------------------
failed=0
steps_json="$work/steps.jsonl"
: >"$steps_json"
# step NAME BUDGET_S COMMAND...: runs COMMAND (a function or a program) within BUDGET_S
# seconds, its stdout in $work/NAME.out. The step runs as a job of its own (set -m: its own
# process group), so that the watchdog stops it and every process it started.
step() {
  local name="$1" budget="$2"; shift 2
  local t0 rc status pid dog
  say "step $name: budget ${budget} s"
  t0=$(date +%s.%N)
  set -m
  ( set +m; "$@" ) >"$work/$name.out" 2>>"$log" &
  pid=$!
  ( sleep "$budget"; kill -TERM -- "-$pid" 2>/dev/null; sleep 15; kill -KILL -- "-$pid" 2>/dev/null ) &
  dog=$!
  set +m
  wait "$pid"
  rc=$?
  kill -- "-$dog" 2>/dev/null
  wait "$dog" 2>/dev/null
  ((rc == 143 || rc == 137)) && rc=124
  local took
  took=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  case $rc in
    0) status=passed ;;
    124) status="over its budget of ${budget} s"; failed=$((failed + 1)) ;;
    *) status="failed (exit $rc)"; failed=$((failed + 1)) ;;
  esac
  say "step $name: $status in $took s"
  printf '{"step": "%s", "budget_s": %s, "took_s": %s, "exit": %d, "status": "%s"}\n' \
    "$name" "$budget" "$took" "$rc" "$status" >>"$steps_json"
  return 0
}

# Budgets (s): GPU steps are sized for an H100/H200 and sum to 535 s at most;
# the CPU rehearsal runs each case's [reduced] form.
if ((gpu)); then
  b_cal=50 b_plan=30 b_pairs=150 b_aa=60 b_1b=80 b_8b=70 b_why=30 b_oom=20 b_eager=45
  size=(); pair_opts=(--adaptive --budget 120 --max-pairs 6); aa_rounds=4
  dtypes=bf16,fp32
else
  # Generous: the rehearsal proves the kit runs, on a CI host busy with other tests.
  b_cal=60 b_plan=60 b_pairs=300 b_aa=120 b_1b=120 b_8b=240 b_why=120 b_oom=60 b_eager=180
  size=(--reduced train.steps=3 measure.warmup_steps=1); pair_opts=(--repeats 1); aa_rounds=2
  dtypes=fp32
fi
common=(--device "$device" --no-progress --why-runs 0)

# The device as it is (never changed): nvidia-smi's report, torch's versions.
{
  "$python" - <<'EOF'
import json, torch
facts = {"torch": torch.__version__, "cuda": torch.version.cuda, "cuda_available": torch.cuda.is_available()}
if torch.cuda.is_available():
    p = torch.cuda.get_device_properties(0)
    facts.update(gpu=p.name, capability=f"{p.major}.{p.minor}", sm_count=p.multi_processor_count,
                 memory_bytes=p.total_memory, cudnn=torch.backends.cudnn.version(),
                 nccl=".".join(map(str, torch.cuda.nccl.version())))
print(json.dumps(facts))
EOF
} >"$work/torch.json" 2>>"$log" || echo '{}' >"$work/torch.json"
if command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,power.limit --format=csv,noheader \
    >"$work/nvidia-smi.csv" 2>>"$log" || true
fi

step calibrate "$b_cal" tb calibrate --device "$device" --dtype "$dtypes" --json

plan_all() {
  for c in "$work"/cases/*.toml; do
    local name
    name=$(basename "$c" .toml)
    echo "{\"case\": \"$name\", \"plan\": $(tb plan --case "$name" --device "$device" --json "${size[@]}" 2>/dev/null || echo null)}"
  done
}
step plan "$b_plan" plan_all

step pairs "$b_pairs" tb matrix --cases '0[1-5]*' "${common[@]}" "${size[@]}" "${pair_opts[@]}" --group campaign-pairs --json

# A/A, this build against itself on 01_base: lockstep duets beside run-level pairs
# (docs/verdicts.md §1), the spread of ln(B/A) per replicate on this device
# (summary.md's "A/A" section, from the two `ab --json`).
aa_both() {
  local pairing
  for pairing in lockstep runs; do
    tb ab --a "$bin" --b "$bin" --case 01_base "${size[@]}" --rounds "$aa_rounds" --pairing "$pairing" --why-runs 0 \
      --json >"$work/aa-$pairing.json" || return 1
  done
}
step aa "$b_aa" aa_both

# 06_1b: MaxText's 1B at full size (1 x 2048) in bf16 on the GPU; its [reduced] slice on the CPU.
step 1b "$b_1b" tb matrix --cases 06_1b "${common[@]}" "${size[@]}" --repeats $((gpu ? 2 : 1)) --group campaign-1b --json \
  train.dtype=bf16

# 07_8b on one device: llama3.1-8b's shape with as many layers as the plan says one
# device holds (at most GPU_8B_MAX_LAYERS), written as the case's [reduced] form so
# that the run records it was reduced and how. The CPU keeps the case's own [reduced].
if ((gpu)); then
  fit_8b() {
    local cap="${GPU_8B_MAX_LAYERS:-4}" layers=0 l
    for ((l = cap; l >= 1; l--)); do
      if tb plan --case 07_8b --device "$device" --devices 1 --json dist.nproc=1 dist.shard=none train.remat=full \
          model.layers=$l | "$python" -c 'import json,sys; sys.exit(0 if json.load(sys.stdin)["fits"] else 1)'; then
        layers=$l; break
      fi
    done
    ((layers > 0)) || { echo "07_8b: not one layer of llama3.1-8b fits this device" >&2; return 1; }
    sed -i '/^\[reduced\]/,$d' "$work/cases/07_8b.toml"
    cat >>"$work/cases/07_8b.toml" <<EOF
[reduced]
"requires.device" = "cuda"
"dist.nproc" = 1
"dist.shard" = "none"
"model.layers" = $layers
"train.steps" = 6
"measure.warmup_steps" = 2
EOF
    echo "07_8b: $layers of 32 layers on one device (cap GPU_8B_MAX_LAYERS=$cap)" >&2
    tb matrix --cases 07_8b "${common[@]}" --reduced --repeats 1 --group campaign-8b --json
  }
  step 8b "$b_8b" fit_8b
else
  # The case's own [reduced] form (2 processes, zero3), one implementation: its 252M
  # parameters make each run the rehearsal's longest.
  step 8b "$b_8b" tb matrix --cases 07_8b --variants functional "${common[@]}" "${size[@]}" train.seq_len=16 \
    --repeats 1 --group campaign-8b --json
fi

# The why of one decisive pair: the first case of the pairs whose step-time or
# peak-memory verdict decided a difference (else 04_int8), profiled once each way.
why() {
  tb report pair --group campaign-pairs --format json >"$work/pairs-report.json" 2>/dev/null || true
  local c
  c=$("$python" - "$work/pairs-report.json" <<'EOF'
import json, sys
try:
    cases = json.load(open(sys.argv[1]))["cases"]
except Exception:
    cases = []
for c in cases:
    for m in c["metrics"]:
        if m["metric"] in ("step_time_median_s", "peak_memory_bytes") and m["verdict"] in ("regressed", "improved"):
            print(c["case"]); sys.exit(0)
print("04_int8")
EOF
)
  echo "why: case $c" >&2
  tb run --case "$c" --device "$device" --no-progress "${size[@]}" --repeats 1 --why-runs 1 --why-always --group campaign-why --json
}
step why "$b_why" why

# Out of memory, stored as an outcome: a shape that cannot fit, declared small
# (requires.memory_gb) so that the plan lets it start. On the CPU the address
# space is capped so that the allocation fails instead of swapping.
oom() {
  local shape=(train.batch=4096 train.seq_len=4096 train.steps=2 measure.warmup_steps=0 requires.memory_gb=1)
  ((gpu)) || ulimit -v $((16 * 1024 * 1024))
  tb run --case 01_base --variants functional --device "$device" --no-progress --why-runs 0 --repeats 1 \
    --group campaign-oom --json "${shape[@]}"
  local rc=$?
  "$python" - "$work/oom.out" <<'EOF' || return 1
import json, sys
runs = json.load(open(sys.argv[1]))
r = runs[0] if runs else {}
ok = r.get("status") == "failed" and "out of memory" in r.get("reason", "")
print(("stored as an outcome: " if ok else "NOT an out-of-memory outcome: ") + f"{r.get('status')}: {r.get('reason')}", file=sys.stderr)
sys.exit(0 if ok else 1)
EOF
  [[ $rc -ne 0 ]]  # the run failed, so the command must say so
}
step oom "$b_oom" oom

# The eager PyTorch peer on the same shapes (01_base, 02_bf16), where this python runs it.
step eager "$b_eager" tb matrix --cases '0[12]*' --variants functional,module,eager "${common[@]}" "${size[@]}" \
  --repeats 1 --group campaign-eager --json

# --- Reports and the summary -------------------------------------------------------
{
  echo '{'
  first=1
  for g in pairs 1b 8b why eager; do
    kind=pair; [[ $g == eager ]] && kind=nway
    json=$(tb report "$kind" --group "campaign-$g" --format json 2>>"$log") || json=null
    ((first)) || echo ','
    first=0
    printf '"%s": %s' "$g" "$json"
  done
  echo '}'
} >"$out/verdicts.json"
if tb report pair --group campaign-pairs --out "$work/report" >/dev/null 2>>"$log"; then
  page=$(ls "$work"/report/pair*.html 2>/dev/null | head -1)
  [[ -n "$page" ]] && cp "$page" "$out/pair.html"
fi
"$python" - "$db" "$out/gpu.db" <<'EOF' 2>>"$log" || say "could not copy the store to $out"
import sqlite3, sys
src, dst = sqlite3.connect(sys.argv[1]), sqlite3.connect(sys.argv[2])
src.backup(dst)  # one self-contained file, whatever the source's journal
dst.execute("PRAGMA journal_mode=DELETE")
dst.close(); src.close()
EOF
"$python" "$kit/summary.py" --work "$work" --out "$out" --device "$device" --version "$version" \
  --elapsed "$(($(date +%s) - start))" --failed "$failed" 2>>"$log" || say "summary.py failed (see the log)"
say "done in $(($(date +%s) - start)) s: $failed step(s) failed; $out: $(cd "$out" && ls | tr '\n' ' ')"
exit $((failed > 99 ? 99 : failed))
