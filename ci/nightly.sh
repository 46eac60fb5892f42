#!/usr/bin/env bash
# Nightly job: run the CPU matrix (adaptive, as ci/demo.sh) into a persistent
# database, render the nightly change points and the pair report, close the loop
# on every change point tonight's night brought in step time or loss (`twinbench
# triage`: bisect between the nightly commits on either side of it, and write an
# issue text beside the report when the bisect confirms it), print the markdown
# summaries, and exit non-zero when an issue text was written, on a new change
# point in the bad direction, or on missing data (a case and implementation
# whose completed runs stopped; TWINBENCH_FAIL_ON_MISSING=0 reports it without
# failing). The checkout must hold the nightly commits' history (fetch-depth 0).
# Every finding is an alert in the store (docs/alerts.md); `--notify KIND=TARGET`
# (repeatable: webhook=URL|env:VAR, smtp=smtp://..., github=OWNER/REPO) and
# `--notify-config FILE` send each new alert once per target, after triage has
# bisected it (its secrets from the environment; $TWINBENCH_NOTIFY_CONFIG and
# $TWINBENCH_REPORT_URL work too).
#   TWINBENCH_DB      persistent store: an SQLite file or a postgresql:// URL
#                     (default: $HOME/.cache/twinbench/nightly.db)
#   TWINBENCH_OUT     report folder (default: twinbench-report)
#   TWINBENCH_BRANCH / TWINBENCH_COMMIT   labels for detached CI checkouts
#   TWINBENCH_THREADS, TWINBENCH_DEMO_BUDGET, TWINBENCH_DEMO_MAX_PAIRS   as for ci/demo.sh
#   TWINBENCH_TRIAGE_BUDGET   seconds per bisect session of the triage (default 600)
# Other arguments go to `twinbench matrix`.
set -euo pipefail  # pipefail: the last command's exit status survives the tee
cd "$(dirname "$0")/.."
notify=()
matrix_args=()
while (($#)); do
  case "$1" in
    --notify | --notify-config)
      notify+=("$1" "${2:?$1 needs a value}")
      shift 2
      ;;
    *)
      matrix_args+=("$1")
      shift
      ;;
  esac
done
db="${TWINBENCH_DB:-$HOME/.cache/twinbench/nightly.db}"
out="${TWINBENCH_OUT:-twinbench-report}"
case "$db" in postgresql://* | postgres://*) ;; *) mkdir -p "$(dirname "$db")" ;; esac
bash ci/setup.sh
bash ci/build.sh
tb=build/harness/twinbench
export TWINBENCH_THREADS="${TWINBENCH_THREADS:-1}"
$tb calibrate --db "$db" >/dev/null
$tb matrix --reduced --adaptive --budget "${TWINBENCH_DEMO_BUDGET:-420}" --max-pairs "${TWINBENCH_DEMO_MAX_PAIRS:-12}" \
  --db "$db" "${matrix_args[@]}"
$tb report pair --db "$db" --out "$out" >/dev/null
$tb report nightly --db "$db" --out "$out"
$tb report pair --db "$db" --format markdown
echo "report: $out/index.html"
# Exit 1 when an issue text was written (its path is printed: `filed: DIR/issue-...md`).
triage=0
$tb triage --db "$db" --out "$out" --repo . --budget "${TWINBENCH_TRIAGE_BUDGET:-600}" "${notify[@]}" || triage=$?
missing=()
[[ ${TWINBENCH_FAIL_ON_MISSING:-1} == 1 ]] && missing=(--fail-on-missing)
report=0
# With targets: what triage could not send is tried again here.
$tb report nightly --db "$db" --format markdown --fail-on-regression "${missing[@]}" "${notify[@]}" |
  tee "$out/nightly.md" || report=$?
exit $(( triage != 0 ? triage : report ))
