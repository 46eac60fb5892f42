#!/usr/bin/env bash
# Nightly job: run the CPU matrix into a persistent database, render the nightly
# trends and the pair report, print the markdown summaries, and exit non-zero on
# confirmed regressions (two consecutive nights beyond the threshold).
#   TWINBENCH_DB      persistent store: an SQLite file or a postgresql:// URL
#                     (default: $HOME/.cache/twinbench/nightly.db)
#   TWINBENCH_OUT     report folder (default: twinbench-report)
#   TWINBENCH_BRANCH / TWINBENCH_COMMIT   labels for detached CI checkouts
# Extra arguments go to `twinbench matrix`.
set -euo pipefail  # pipefail: the last command's exit status survives the tee
cd "$(dirname "$0")/.."
db="${TWINBENCH_DB:-$HOME/.cache/twinbench/nightly.db}"
out="${TWINBENCH_OUT:-twinbench-report}"
case "$db" in postgresql://* | postgres://*) ;; *) mkdir -p "$(dirname "$db")" ;; esac
bash ci/setup.sh
bash ci/build.sh
tb=build/harness/twinbench
$tb calibrate --db "$db" >/dev/null
$tb matrix --reduced --repeats 2 --db "$db" "$@"
$tb report pair --db "$db" --out "$out" >/dev/null
$tb report nightly --db "$db" --out "$out"
$tb report pair --db "$db" --format markdown
echo "report: $out/index.html"
$tb report nightly --db "$db" --format markdown --fail-on-regression | tee "$out/nightly.md"
