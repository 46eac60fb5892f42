#!/usr/bin/env bash
# Nightly job: run the CPU matrix (adaptive, as ci/demo.sh) into a persistent
# database, render the nightly trends and the pair report, print the markdown
# summaries, and exit non-zero on confirmed regressions (two consecutive nights
# beyond the threshold) or missing data (a case and implementation whose
# completed runs stopped; TWINBENCH_FAIL_ON_MISSING=0 reports it without failing).
#   TWINBENCH_DB      persistent store: an SQLite file or a postgresql:// URL
#                     (default: $HOME/.cache/twinbench/nightly.db)
#   TWINBENCH_OUT     report folder (default: twinbench-report)
#   TWINBENCH_BRANCH / TWINBENCH_COMMIT   labels for detached CI checkouts
#   TWINBENCH_THREADS, TWINBENCH_DEMO_BUDGET, TWINBENCH_DEMO_MAX_PAIRS   as for ci/demo.sh
# Extra arguments go to `twinbench matrix`.
set -euo pipefail  # pipefail: the last command's exit status survives the tee
cd "$(dirname "$0")/.."
db="${TWINBENCH_DB:-$HOME/.cache/twinbench/nightly.db}"
out="${TWINBENCH_OUT:-twinbench-report}"
case "$db" in postgresql://* | postgres://*) ;; *) mkdir -p "$(dirname "$db")" ;; esac
bash ci/setup.sh
bash ci/build.sh
tb=build/harness/twinbench
export TWINBENCH_THREADS="${TWINBENCH_THREADS:-1}"
$tb calibrate --db "$db" >/dev/null
$tb matrix --reduced --adaptive --budget "${TWINBENCH_DEMO_BUDGET:-420}" --max-pairs "${TWINBENCH_DEMO_MAX_PAIRS:-12}" \
  --db "$db" "$@"
$tb report pair --db "$db" --out "$out" >/dev/null
$tb report nightly --db "$db" --out "$out"
$tb report pair --db "$db" --format markdown
echo "report: $out/index.html"
missing=()
[[ ${TWINBENCH_FAIL_ON_MISSING:-1} == 1 ]] && missing=(--fail-on-missing)
$tb report nightly --db "$db" --format markdown --fail-on-regression "${missing[@]}" | tee "$out/nightly.md"
