#!/usr/bin/env bash
# Per-branch job: run the matrix for the current checkout, compare it with the
# newest runs of a baseline ref in the same database, render the branch report and
# print its markdown summary (for a pull-request comment). Exit 1 on regressions.
#   usage: ci/branch-report.sh BASELINE_REF [CANDIDATE_LABEL] [matrix args...]
#   TWINBENCH_DB (default twinbench.db), TWINBENCH_OUT (default twinbench-report)
set -euo pipefail
cd "$(dirname "$0")/.."
baseline="${1:?usage: ci/branch-report.sh BASELINE_REF [CANDIDATE_LABEL] [matrix args...]}"
shift
candidate="${1:-${TWINBENCH_BRANCH:-$(git rev-parse --abbrev-ref HEAD)}}"
[[ $# -gt 0 ]] && shift
db="${TWINBENCH_DB:-twinbench.db}"
out="${TWINBENCH_OUT:-twinbench-report}"
bash ci/setup.sh
bash ci/build.sh
tb=build/harness/twinbench
$tb matrix --reduced --repeats 2 --db "$db" --branch "$candidate" "$@"
$tb report branch --db "$db" --baseline "$baseline" --candidate "$candidate" --out "$out"
$tb compare --db "$db" --baseline "$baseline" --candidate "$candidate" --fail-on-regression | tee "$out/branch.md"
