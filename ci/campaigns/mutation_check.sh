#!/usr/bin/env bash
# The checks that can fail (issue #49), proven by failing them: for each check a
# small, named edit of the code, doc or environment it guards (a mutation), the
# targets that edit touches rebuilt, and exactly the test that guards it run.
# A mutation is *caught* when that test fails on the assertion named in its row,
# *failed otherwise* when the test failed elsewhere (a build error, a crash),
# *MISSED* when the test passed: a check that cannot fail. Every guarding test
# first runs once on the unmutated tree (it must pass); every edit is undone
# with `git checkout` (also on an error or Ctrl-C: trap EXIT), its targets
# rebuilt unmutated, and the script ends by checking that the mutated files
# equal the commit. The table (check | what it asserts now | mutation | test |
# result | failure line) is printed and written as block `mutations` of
# docs/results/mutations.md (RESULTS: another file; ci/campaign_results.py),
# which docs/architecture.md, "Checks that can fail", quotes.
#
#   ci/campaigns/mutation_check.sh           the campaign (~25 minutes on 2 loaded cores)
#   ci/campaigns/mutation_check.sh --dry-run each edit applied, shown as a diff and undone:
#                                            no build, no test, no results file
# Environment: BUILD (default build: Debian's line, configured by ci/build.sh),
# JOBS (default 2: the build's parallel jobs), RESULTS, OUT (default a fresh
# /tmp/twinbench-mutations-*: each test's log). The PostgreSQL rows start a
# private cluster (ci/pg_cluster.sh), as ctest's fixture pg_cluster would.
# Needs a tree without uncommitted changes to the files it mutates.
set -uo pipefail
cd "$(dirname "$0")/../.."
dry=0
[[ ${1:-} == --dry-run ]] && dry=1
build=${BUILD:-build}
jobs=${JOBS:-2}
results=${RESULTS:-docs/results/mutations.md}
out=${OUT:-$(mktemp -d /tmp/twinbench-mutations-XXXXXX)}
mkdir -p "$out"
[[ -x $build/harness/twinbench ]] || { echo "build first: bash ci/build.sh" >&2; exit 2; }
# ccache as ci/build.sh sets it: an undone edit rebuilds from the cache.
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
export CCACHE_SLOPPINESS="pch_defines,time_macros,include_file_mtime,include_file_ctime"
bin=$PWD/$build/harness/twinbench
micro=$PWD/$build/twinbench-micro
tests=$PWD/$build/tests
started=$(date +%s)

# ---- the edits, always undone -------------------------------------------------
mutated=()      # every file an edit touched
restore_targets=()
restore() {
  [[ ${#mutated[@]} -gt 0 ]] && git checkout -- "${mutated[@]}"
}
stop_cluster() { bash ci/pg_cluster.sh stop "$out/pg" >/dev/null 2>&1 || true; }
trap 'restore; stop_cluster' EXIT
trap 'exit 130' INT TERM

# mutate FILE OLD NEW: OLD (a Python regular expression, re.S) replaced once by NEW
# (re.sub's template); fails unless OLD occurs exactly once, so an edit that no
# longer applies says so instead of testing the unmutated code.
mutate() {
  local file=$1
  git diff --quiet -- "$file" || { echo "mutation_check: $file has uncommitted changes" >&2; return 1; }
  mutated+=("$file")
  python3 - "$@" <<'PY'
import re, sys
path, old, new = sys.argv[1:4]
text = open(path, encoding="utf-8").read()
hits = len(re.findall(old, text, flags=re.S))
if hits != 1:
    sys.exit(f"mutation_check: /{old}/ occurs {hits} times in {path}, not once")
open(path, "w", encoding="utf-8").write(re.sub(old, new, text, count=1, flags=re.S))
PY
}

rebuild() {  # targets...
  [[ $# -eq 0 ]] && return 0
  local args=()
  for t in "$@"; do args+=(--target "$t"); done
  cmake --build "$build" -j "$jobs" "${args[@]}" >>"$out/build.log" 2>&1
}

# The failure line of a log: the first gtest failure (or walk line) matching EXPECT, with
# its place and the assertion's own lines; else the first failure of any kind.
failure_line() {  # log expect
  python3 - "$1" "$2" <<'PY'
import os, re, sys
log, expect = sys.argv[1:3]
lines = open(log, encoding="utf-8", errors="replace").read().splitlines()
blocks, i = [], 0
while i < len(lines):  # gtest: "file:line: Failure" and the lines up to the trace or the next test line
    m = re.match(r"^(\S+):(\d+): Failure$", lines[i])
    if m:
        body = []
        i += 1
        while i < len(lines) and not re.match(r"^(Google Test trace:|\[ |\S+:\d+: Failure$)", lines[i]):
            if lines[i].strip():
                body.append(lines[i].strip())
            i += 1
        blocks.append(f"{os.path.basename(m.group(1))}:{m.group(2)}: " + " — ".join(body[:3]))
        continue
    i += 1
hit = next((b for b in blocks if re.search(expect, b)), None)
if hit is None:
    hit = next((l.strip() for l in lines if re.search(expect, l)), None)
print("expected" if hit else "other", end="\t")
if hit is None:
    hit = blocks[0] if blocks else next((l.strip() for l in lines if re.search(r"FAIL|Error|error", l)), "(no failure line)")
hit = re.sub(r"\s+", " ", hit)
print((hit[:177] + "...") if len(hit) > 180 else hit)
PY
}

# ---- the rows ----------------------------------------------------------------
table=$out/table.md
printf '| check | what it asserts now | mutation | test | result | failure line (short) |\n|---|---|---|---|---|---|\n' >"$table"
cell() { printf '%s' "$1" | sed 's/|/\\|/g'; }
declare -A baseline_ok=()

# run_test NAME LOG [VAR=value...]: the test named NAME (a key of TEST below) into LOG,
# in the environment of a hand run (no CI, no cluster) plus its own (ENV) and the given
# variables; its exit status.
declare -A TEST=() ENV=()
run_test() {
  local name=$1 log=$2
  shift 2
  (eval "env -u CI -u TWINBENCH_TEST_PG_FILE ${ENV[$name]:-} $* ${TEST[$name]}") >"$log" 2>&1
}

# baseline NAME: the guarding test passes on the unmutated tree (once per test).
baseline() {
  local name=$1
  [[ -n ${baseline_ok[$name]:-} ]] && return 0
  local t0=$SECONDS
  if run_test "$name" "$out/baseline-${name//[^A-Za-z0-9_.-]/_}.log"; then
    baseline_ok[$name]=1
    echo "baseline: $name passes ($((SECONDS - t0)) s)"
  else
    baseline_ok[$name]=0
    echo "baseline: $name FAILS unmutated ($((SECONDS - t0)) s): see $out/baseline-${name//[^A-Za-z0-9_.-]/_}.log"
  fi
}

# row CHECK ASSERTS MUTATION TEST EXPECT TARGETS EDIT...: EDIT is `mutate FILE OLD NEW` or
# `env VAR=value...` (the environment the test runs in is the mutation); TARGETS are
# space-separated build targets ('' for none).
row() {
  local check=$1 asserts=$2 what=$3 name=$4 expect=$5 targets=$6
  shift 6
  local log="$out/mutation-$(( $(grep -c '' "$table") - 1 )).log" result line t0=$SECONDS
  echo "== $check: $what"
  ((dry)) || baseline "$name"
  local env_vars=""
  if ((dry)); then
    if [[ $1 == mutate ]]; then
      mutate "${@:2}" && git --no-pager diff -U0 -- "$2" | grep '^[-+][^-+]'
      git checkout -- "$2"
    else
      echo "environment: ${*:2}"
    fi
    return 0
  fi
  if [[ $1 == mutate ]]; then
    if ! mutate "${@:2}" 2>"$log"; then
      result="not applied"; line=$(tail -1 "$log")
    fi
  else
    env_vars="${*:2}"
  fi
  if [[ -z ${result:-} ]] && ! rebuild $targets; then
    result="failed otherwise"; line="the mutated build failed (see $out/build.log)"
  fi
  if [[ -z ${result:-} ]]; then
    if run_test "$name" "$log" $env_vars; then
      result="MISSED"; line="the test passed"
    else
      local found
      found=$(failure_line "$log" "$expect")
      line=${found#*$'\t'}
      if [[ ${found%%$'\t'*} == expected ]]; then result="caught"; else result="failed otherwise"; fi
    fi
  fi
  [[ ${baseline_ok[$name]} == 1 ]] || result="$result (the unmutated test fails too)"
  if [[ $1 == mutate ]]; then
    git checkout -- "$2"
    rebuild $targets || echo "mutation_check: the unmutated rebuild of $targets failed" >&2
  fi
  echo "$result: $check — $what ($((SECONDS - t0)) s; log $log)"
  printf '| %s | %s | %s | %s | %s | %s |\n' "$(cell "$check")" "$(cell "$asserts")" "$(cell "$what")" \
    "$(cell "\`$name\`")" "$result" "$(cell "$line")" >>"$table"
}

# The binaries the tests run, built from the unmutated tree first; the PostgreSQL test
# cluster of the store rows (ctest's fixture pg_cluster does the same).
((dry)) || rebuild twinbench twinbench-micro twinbench_store_scale_tests twinbench_why_tests twinbench_run_tests \
  twinbench_zero3_tests twinbench_server_fault_tests || { echo "mutation_check: the build failed ($out/build.log)" >&2; exit 2; }
((dry)) || bash ci/pg_cluster.sh start "$out/pg" >"$out/pg.log" 2>&1 || { echo "mutation_check: no PostgreSQL cluster" >&2; cat "$out/pg.log" >&2; exit 2; }

scale=$tests/twinbench_store_scale_tests
TEST[StoreScale.EveryReportReadsWhatItShowsNotTheStore/sqlite]="$scale --gtest_filter='Stores/StoreScale.EveryReportReadsWhatItShowsNotTheStore/sqlite'"
ENV[StoreScale.HotQueriesUseTheIndexes/*]="TWINBENCH_TEST_PG_FILE=$out/pg/url"
TEST[StoreScale.HotQueriesUseTheIndexes/*]="$scale --gtest_filter='Stores/StoreScale.HotQueriesUseTheIndexes/*'"
TEST[WhyAb.PlantedSlowOpRankedFirstAndPlantedAllocationNamedWithItsBytes]="$tests/twinbench_why_tests --gtest_filter='WhyAb.*'"
TEST[campaign_results_quoted]="ctest --test-dir $build -R '^campaign_results_quoted\$' --output-on-failure"
TEST[Sharding.TheImplementationsAgreeUnderZero3]="$tests/twinbench_run_tests --gtest_filter='Sharding.TheImplementationsAgreeUnderZero3'"
TEST[Zero3.MemoryPerRankFallsAsOneOverRanksAndMatchesThePlan]="$tests/twinbench_zero3_tests --gtest_filter='Zero3.MemoryPerRankFallsAsOneOverRanksAndMatchesThePlan'"
# The README walk from a given command on (--from N: the README's commands N.. in order).
walk_index() {
  python3 -c "import sys; sys.path.insert(0, 'tests/integration'); import readme_walk as w; print(w.readme_commands('README.md').index(sys.argv[1]))" "$1"
}
imports=$(walk_index "twinbench import maxtext_linen.log --case 04_int8 --variant linen")
fleet=$(walk_index "twinbench matrix --reduced --shard 2/3 --group nightly-42 --db postgresql://runner@db/twinbench")
walk="python3 tests/integration/readme_walk.py --bin $bin --micro $micro"
TEST["readme_walk --from $imports"]="$walk --from $imports"
TEST["readme_walk --from $fleet"]="$walk --from $fleet"
TEST[FaultServer.ConnectionRefusedIsOneLineExit5]="$tests/twinbench_server_fault_tests --gtest_filter='FaultServer.ConnectionRefusedIsOneLineExit5'"

store_targets="twinbench twinbench_store_scale_tests"

row "statements per command, bounded below" \
  "each report command sends at least 2 statements (and as many to a store of 10x the runs)" \
  "the statement log records nothing (backend.cpp: log_statement returns when the log is set)" \
  "StoreScale.EveryReportReadsWhatItShowsNotTheStore/sqlite" "a\\.size\\(\\)\\) >= \\(2u\\)" "$store_targets" \
  mutate harness/store/backend.cpp 'if \(!file \|\| !\*file\) return;' 'if (file) return;'

row "rows read, bounded below" \
  "the queries a command sends read something (SQLite's VM steps > 0)" \
  "the explain log's VM steps recorded as 0 (sqlite.cpp: 0 * sqlite3_stmt_status(..VM_STEP..))" \
  "StoreScale.EveryReportReadsWhatItShowsNotTheStore/sqlite" "no query read anything" "$store_targets" \
  mutate harness/store/sqlite.cpp 'sqlite3_stmt_status\(raw, SQLITE_STMTSTATUS_VM_STEP, 0\)' '0 * \g<0>'

row "rows read, bounded above (sqlite3_stmt_status)" \
  "a command reads at most a fifth more rows from a store of 10x the runs (SQLite's full-scan steps)" \
  "the runs of a group read with a condition no index serves (reads.cpp: group_id || '' IN (...))" \
  "StoreScale.EveryReportReadsWhatItShowsNotTheStore/sqlite" "rows read grew with the store" "$store_targets" \
  mutate harness/store/reads.cpp 'FROM runs WHERE group_id IN' "FROM runs WHERE group_id || '' IN"

row "the plan check (both backends; PostgreSQL: EXPLAIN ANALYZE)" \
  "no scan of runs/steps/metrics, with or without an index, reads more than 64 rows; no query more than 2000" \
  "\`runs\` without its LIMIT (reads.cpp: paged = filter.offset > 0): it walks runs_by_start through the store" \
  "StoreScale.HotQueriesUseTheIndexes/*" "a scan through the store|reads the store" "$store_targets" \
  mutate harness/store/reads.cpp 'const bool paged = filter\.limit \|\| filter\.offset > 0;' 'const bool paged = filter.offset > 0;'

row "why's end-to-end significance" \
  "the planted op (aten::silu, +100%) ranks first, tested and significant, its interval above 0" \
  "the why's family counts 10^12 tests (explain_analysis.cpp: family_of_tests(family, w.tests * 1000000000000))" \
  "WhyAb.PlantedSlowOpRankedFirstAndPlantedAllocationNamedWithItsBytes" '"significant"|low_s' "twinbench" \
  mutate harness/compare/explain_analysis.cpp 'family_of_tests\(family, w\.tests\)' 'family_of_tests(family, w.tests * 1000000000000)'

row "campaign figures quoted as written" \
  "every quote in the docs equals its block in docs/results/ (command, commit, host, date, table)" \
  "one figure of a quote changed (docs/verdicts.md, the quote of verdict_sim.md#boundary: a 1 put before its first row's third cell)" \
  "campaign_results_quoted" "differs from the file" "" \
  mutate docs/verdicts.md '(<!-- quote: docs/results/verdict_sim\.md#boundary -->\n(?:[^\n]*\n)*?\|[-:|]+\n\|[^|\n]*\|[^|\n]*\| *)(\d)' '\g<1>1\g<2>'

row "sharded parity over the whole curve" \
  "functional vs module under zero3: step 0 bit-identical, every step of 10 within 1e-5 relative, parameters within 1e-5" \
  "module's loss times 1.0001 from step 1 on (module_variant.cpp: * (ctx.step > 0 ? 1.0001 : 1.0)); step 0 untouched" \
  "Sharding.TheImplementationsAgreeUnderZero3" "step [1-9]" "twinbench_run_tests" \
  mutate variants/module_variant.cpp 'const StepContext& /\*ctx: the module keeps its own stream\*/\) override \{\n    return model_->loss\(batch\.inputs, batch\.targets\);' \
  'const StepContext& ctx) override {\n    return model_->loss(batch.inputs, batch.targets) * (ctx.step > 0 ? 1.0001 : 1.0);'

row "sharded memory equals the plan" \
  "each rank's resident memory within 1 MiB of the plan's weights + gradients + optimizer, at 1, 2 and 4 ranks" \
  "the plan's weights 2 MiB larger (models/cost.cpp: saturated_bytes(4 * held) + (2 << 20))" \
  "Zero3.MemoryPerRankFallsAsOneOverRanksAndMatchesThePlan" "planned_state" "twinbench twinbench_zero3_tests" \
  mutate models/cost.cpp 'm\.weights = saturated_bytes\(4 \* held\);' 'm.weights = saturated_bytes(4 * held) + (2 << 20);'

row "README walk: exact exit codes" \
  "each README command ends with its exact exit code and prints its key lines" \
  "\`twinbench import\` exits 1 after importing (cmd_import.cpp: exit_code = 1), its output unchanged" \
  "readme_walk --from $imports" "exit 1 \\(expected 0\\)" "twinbench" \
  mutate harness/cli/cmd_import.cpp 'exit_code = kExitOk;' 'exit_code = 1;'

row "README walk under CI" \
  "without a PostgreSQL cluster its fleet examples are skipped by hand, failed under CI" \
  "environment: CI=1 and no cluster (\$TWINBENCH_TEST_PG_FILE unset)" \
  "readme_walk --from $fleet" "no PostgreSQL test cluster under CI" "" \
  env CI=1

row "PostgreSQL suites under CI" \
  "without the cluster a PostgreSQL test is skipped by hand, failed under CI" \
  "environment: CI=1 and no cluster (\$TWINBENCH_TEST_PG_FILE unset)" \
  "FaultServer.ConnectionRefusedIsOneLineExit5" "no PostgreSQL test cluster under CI" "" \
  env CI=1

# ---- the end: nothing left mutated ------------------------------------------
restore
if [[ ${#mutated[@]} -gt 0 ]] && ! git diff --quiet -- "${mutated[@]}"; then
  echo "mutation_check: a mutated file differs from the commit:" >&2
  git diff --stat -- "${mutated[@]}" >&2
  exit 1
fi
((dry)) && exit 0
seconds=$(( $(date +%s) - started ))
cat "$table"
missed=$(grep -c '| MISSED' "$table" || true)
python3 ci/campaign_results.py write "$results" mutations --table "$table" \
  --command "ci/campaigns/mutation_check.sh" \
  --note "Each row: the edit made, the targets it touches rebuilt (Debian's LibTorch line), exactly the guarding test run (its baseline passed unmutated first), the edit undone; caught = the test failed on the assertion named. $(($(grep -c '' "$table") - 2)) mutations, ${missed} missed, ${seconds} s; logs in $out."
echo "mutation_check: $(($(grep -c '' "$table") - 2)) mutations, $missed missed, $seconds s; logs in $out"
