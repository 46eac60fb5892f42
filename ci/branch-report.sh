#!/usr/bin/env bash
# Per-branch gate (docs/verdicts.md, "The branch gate decides"): build the
# baseline — the merge-base of BASELINE_REF and HEAD, in a git worktree beside
# this checkout — and the candidate (this checkout), then run them against each
# other as interleaved, adaptive pairs: one `twinbench ab` session per case and
# implementation (rounds AB or BA at random until the step-time verdict decides
# or the session's budget is spent; each session stops on its share of the
# false-alarm rate). Then render the branch report of those sessions and print
# the markdown summary (for a pull-request comment): its verdicts judge all the
# sessions as one family (Holm, docs/verdicts.md §4 and §12), each at the level
# its looks spent. Exit 1 when that comparison finds a regression, 2 when a
# session could not run (a refusal: its message says why).
# With --github (in a GitHub Actions job) or --gitlab (GitLab CI) the verdict
# goes on the pull request too: a check run (commit status) on its head commit
# and one comment edited in place (docs/alerts.md); --comment MODE and --alerts
# are passed on to `twinbench compare`.
#   usage: ci/branch-report.sh [--github|--gitlab] [--comment always|on-change|never] [--alerts] BASELINE_REF [CANDIDATE_LABEL]
# Environment:
#   TWINBENCH_DB (default twinbench.db), TWINBENCH_OUT (default twinbench-report)
#   TWINBENCH_GATE_CASES     cases to gate on (default "01_base")
#   TWINBENCH_GATE_VARIANTS  implementations (default "functional")
#   TWINBENCH_GATE_BUDGET    seconds per session (default 600; `ab --budget`)
#   TWINBENCH_GATE_MAX_ROUNDS  pairs per session at most (default 24; `ab --max-rounds`)
#   TWINBENCH_GATE_ALPHA     false-alarm rate of the whole gate (default 0.05)
#   TWINBENCH_THREADS        intra-op threads of every run (default 1: half the run-level noise
#                            of 2 threads here, docs/verdicts.md "Less noise")
#   TWINBENCH_GATE_A, TWINBENCH_GATE_B  prebuilt baseline / candidate (executables or build
#                            directories): nothing is built (measurement campaigns, ci/campaigns/gate_campaign.sh)
#   TWINBENCH_BASELINE_DIR   the baseline's worktree (default .twinbench-baseline)
set -euo pipefail
cd "$(dirname "$0")/.."
deliver=()
while (($#)); do
  case "$1" in
    --github | --gitlab | --alerts) deliver+=("$1"); shift ;;
    --comment) deliver+=("$1" "${2:?--comment needs always, on-change or never}"); shift 2 ;;
    *) break ;;
  esac
done
baseline="${1:?usage: ci/branch-report.sh [--github|--gitlab] [--comment MODE] [--alerts] BASELINE_REF [CANDIDATE_LABEL]}"
candidate="${2:-${TWINBENCH_BRANCH:-$(git rev-parse --abbrev-ref HEAD)}}"
db="${TWINBENCH_DB:-twinbench.db}"
out="${TWINBENCH_OUT:-twinbench-report}"
export TWINBENCH_THREADS="${TWINBENCH_THREADS:-1}"
read -r -a cases <<< "${TWINBENCH_GATE_CASES:-01_base}"
read -r -a variants <<< "${TWINBENCH_GATE_VARIANTS:-functional}"

if [[ -n ${TWINBENCH_GATE_A:-} || -n ${TWINBENCH_GATE_B:-} ]]; then
  a="${TWINBENCH_GATE_A:?TWINBENCH_GATE_B needs TWINBENCH_GATE_A}"
  b="${TWINBENCH_GATE_B:?TWINBENCH_GATE_A needs TWINBENCH_GATE_B}"
  base_commit=$(git merge-base "$baseline" HEAD 2>/dev/null || echo prebuilt)
else
  bash ci/setup.sh
  bash ci/build.sh
  base_commit=$(git merge-base "$baseline" HEAD)
  base_dir="${TWINBENCH_BASELINE_DIR:-.twinbench-baseline}"
  if [[ -d $base_dir ]]; then
    git -C "$base_dir" checkout --quiet --detach "$base_commit"
  else
    git worktree add --quiet --detach "$base_dir" "$base_commit"
  fi
  echo "branch gate: baseline $baseline at the merge-base ${base_commit:0:9}, built in $base_dir" >&2
  bash "$base_dir/ci/build.sh"
  a="$base_dir/build"
  b="build"
fi
tb=build/harness/twinbench
[[ -x $tb ]] || tb="$b"  # a prebuilt candidate executable reads the store as well
label_a="$baseline@${base_commit:0:9}"
label_b="$candidate"
sessions=$(( ${#cases[@]} * ${#variants[@]} ))
gate_alpha=${TWINBENCH_GATE_ALPHA:-0.05}
# Each session stops on its Bonferroni share; the gate's verdict below is Holm's over all of them,
# which rejects whatever a session rejected and never holds the family's rate less.
alpha=$(python3 -c "print($gate_alpha / $sessions)")
for c in "${cases[@]}"; do
  for v in "${variants[@]}"; do
    # Each build records its own commit (CI's TWINBENCH_COMMIT would label both alike).
    env -u TWINBENCH_COMMIT -u TWINBENCH_BRANCH "$tb" ab --a "$a" --b "$b" --case "$c" --variant "$v" --db "$db" \
      --label-a "$label_a" --label-b "$label_b" --alpha "$alpha" --budget "${TWINBENCH_GATE_BUDGET:-600}" \
      --max-rounds "${TWINBENCH_GATE_MAX_ROUNDS:-24}" >&2
  done
done
mkdir -p "$out"
"$tb" report branch --db "$db" --baseline "$label_a" --candidate "$label_b" --alpha "$gate_alpha" --out "$out" >&2
status=0
"$tb" compare --db "$db" --baseline "$label_a" --candidate "$label_b" --alpha "$gate_alpha" --fail-on-regression \
  "${deliver[@]}" | tee "$out/branch.md" || status=${PIPESTATUS[0]}
exit "$status"
