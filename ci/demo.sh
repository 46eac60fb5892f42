#!/usr/bin/env bash
# The README's main job: set up, build, calibrate this machine's matmul peak (for
# MFU), plan every case, then run the CPU matrix — both implementations, every case
# (06_1b and 07_8b in their [reduced] forms — 07_8b's one 8B-shaped layer sharded
# over 2 Gloo ranks, about 6 GB of memory each; what cannot run here recorded as skipped with the
# reason) — into ./twinbench.db and print the MaxView tables. The matrix is
# adaptive (docs/verdicts.md, "The main job decides"): each case runs as
# lockstep duets (both implementations resident, one step of each a round, in
# a random order: §1), every case one duet first, then the budget going to the
# cases most likely to decide, until its step-time verdict is decisive, it is
# futile, the budget is spent or the maximum of duets is reached. Then render the pair
# report and the index for that matrix and print the path of index.html, and
# last the command that serves the store live (docs/serve.md).
# Extra arguments go to `twinbench matrix` (e.g. train.steps=20).
#   TWINBENCH_THREADS         intra-op threads per run (default 1: half the run-level noise of 2)
#   TWINBENCH_DEMO_BUDGET     seconds for the matrix (default 360)
#   TWINBENCH_DEMO_MAX_PAIRS  duets per case at most (default 8: a plan the budget can reach, so that
#                             its last look spends the most; docs/verdicts.md §11)
# On the 2-core development host the matrix takes about 6 minutes; how many of
# its cases decide there, and why not more, is docs/verdicts.md section 11;
# ci/campaigns/main_job_campaign.sh compares settings.
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/setup.sh
bash ci/build.sh debian twinbench
tb=build/harness/twinbench
export TWINBENCH_THREADS="${TWINBENCH_THREADS:-1}"
$tb calibrate --db twinbench.db
$tb plan --all
$tb matrix --reduced --adaptive --budget "${TWINBENCH_DEMO_BUDGET:-360}" --max-pairs "${TWINBENCH_DEMO_MAX_PAIRS:-8}" \
  --db twinbench.db "$@"
$tb report pair --db twinbench.db --out twinbench-report
echo "Live, every report of this store at a stable URL (http://127.0.0.1:8080/, Ctrl-C stops it):"
echo "  $tb serve --db twinbench.db"
