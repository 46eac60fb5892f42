#!/usr/bin/env bash
# The why of a verdict on planted causes (issue #41, docs/verdicts.md §15):
#   time    10 `ab` sessions of this build against itself with B's op NAME
#           slowed by P% of a step (TWINBENCH_TEST_SLOW_OP=op:NAME:P, 5-20%,
#           ten different ops over forward, backward, clipping and the
#           optimizer), then A/A sessions (the build against itself, nothing
#           planted); every session makes its profiled rounds (--why-always);
#   memory  5 sessions with B allocating SIZE at the first call of op NAME of a
#           training step (TWINBENCH_TEST_EXTRA_ALLOC=op:NAME:SIZE).
# One table per part, printed and written as a block of docs/results/why_campaign.md
# (ci/campaign_results.py: with the command, commit, host and date; docs/verdicts.md
# §15 quotes them): time — the planted op and size, the rank of the planted op in
# the why, its share of the change (the top entry of that op; blank where the
# step's change holds zero), whether its interval excludes zero, how many ops
# were significant, the headline; aa — per A/A session how many ops were called
# significant (should be 0 in at least 95%) and the headline; memory — the
# planted op and size, the rank of its entry, its share, the bytes the why
# attributes, the headline. Each part writes its own block, so running one part
# leaves the others' blocks as they were.
# The time and aa parts measure wall-clock times: run them on an otherwise idle
# machine (the memory part counts bytes and runs anywhere). Not part of the test
# suite; tests/integration/why_test.cpp is its small version on every CI run.
#
#   ci/campaigns/why_campaign.sh [time|aa|memory|all] [ab options / overrides ...]
# (aa: the A/A sessions alone, which `time` runs after its slowdowns)
# Environment: ROUNDS (timed rounds per session, default 6), WHY_RUNS (profiled
# rounds, default 5), AA (A/A sessions, default 5), WORKLOAD (default
# "--case 01_base --reduced"), TWINBENCH_THREADS (default 1), OUT (default
# why-campaign: the store, the sessions' JSON and the tables), RESULTS (default
# docs/results/why_campaign.md; a smoke run gives another file).
set -euo pipefail
cd "$(dirname "$0")/../.."
part=${1:-all}
shift || true
case "$part" in time|aa|memory|all) ;; *) echo "why_campaign.sh: time, aa, memory or all, not '$part'" >&2; exit 2 ;; esac
bin=$PWD/build/harness/twinbench
[[ -x $bin ]] || { echo "build first: bash ci/build.sh" >&2; exit 2; }
export TWINBENCH_THREADS=${TWINBENCH_THREADS:-1}
rounds=${ROUNDS:-6}
why_runs=${WHY_RUNS:-5}
aa=${AA:-5}
read -r -a workload <<<"${WORKLOAD:---case 01_base --reduced}"
out=${OUT:-why-campaign}
results=${RESULTS:-docs/results/why_campaign.md}
mkdir -p "$out"
# The command as a user reruns it: the settings that change the figures, then the arguments.
command="ROUNDS=$rounds WHY_RUNS=$why_runs AA=$aa TWINBENCH_THREADS=$TWINBENCH_THREADS bash ci/campaigns/why_campaign.sh $part${*:+ $*}"
[[ -n ${WORKLOAD:-} ]] && command="WORKLOAD='$WORKLOAD' $command"
# One table per part: $out/<part>.tsv, its header first (the columns docs/verdicts.md §15 shows).
start_table() {  # PART
  case $1 in
    time) printf 'planted op\tplanted (of a step)\trank\tshare\tsignificant\tsignificant ops\theadline\n' ;;
    aa) printf 'session (nothing planted)\tsignificant ops\theadline\n' ;;
    memory) printf 'planted op\tplanted\trank\tshare\tbytes attributed\theadline\n' ;;
  esac >"$out/$1.tsv"
}

# B: this binary with one planted cause in its environment.
planted() {  # NAME VAR VALUE
  printf '#!/bin/sh\nTWINBENCH_ALLOW_TEST_HOOKS=1 %s=%s exec %s "$@"\n' "$2" "$3" "$bin" >"$out/$1"
  chmod +x "$out/$1"
}

# One row of the table from a session's JSON: KIND OP PLANTED FILE.
row() {
  python3 - "$@" <<'PY'
import json, sys
kind, op, planted, path = sys.argv[1:5]
with open(path) as f:
    j = json.load(f)
why = j.get("why") or {}
def pct(x):
    return "" if x is None else f"{100 * x:.0f}%"
if kind == "memory":
    m = why.get("memory") or {}
    entries = m.get("entries", [])
    rank = next((i + 1 for i, e in enumerate(entries) if e["ops"].split(" > ")[-1] == op), "-")
    e = entries[rank - 1] if rank != "-" else {}
    print("\t".join([op, planted, str(rank), pct(e.get("share")), f"{e['diff']:,}" if "diff" in e else "",
                     m.get("headline", "no memory why")]))
else:
    t = why.get("time") or {}
    ops = t.get("ops", [])
    sig = sum(1 for o in ops if o.get("significant"))
    if kind == "aa":
        print("\t".join([planted, str(sig), t.get("headline", "no time why")]))
        sys.exit(0)
    rank = next((i + 1 for i, o in enumerate(ops) if o["name"] == op), "-")
    o = ops[rank - 1] if rank != "-" else {}
    print("\t".join([op, planted, str(rank), pct(o.get("share")) or "—",
                     ("yes" if o.get("significant") else "no") if o else "", str(sig),
                     t.get("headline", "no time why")]))
PY
}

session() {  # KIND OP PLANTED B [ab options...]
  local kind=$1 op=$2 plant=$3 b=$4
  shift 4
  local json="$out/$kind-${op//[:\/]/_}-${plant//[ \/%]/_}.json"
  "$bin" ab --a "$bin" --b "$b" --why-always --db "$out/why.db" --json "${workload[@]}" "$@" >"$json"
  row "$kind" "$op" "$plant" "$json" | tee -a "$out/$kind.tsv"
}

# The part's table: printed, and written as its block of the results file.
finish_table() {  # PART
  echo
  column -t -s $'\t' "$out/$1.tsv"
  python3 ci/campaign_results.py write "$results" "$1" --command "$command" --tsv "$out/$1.tsv"
}

if [[ $part == time || $part == all ]]; then
  start_table time
  # Ten ops of 01_base (functional, small preset) over every phase, 5-20% of a step each.
  for planted_op in aten::silu:5 aten::_log_softmax:6 aten::_softmax:8 aten::pow:10 aten::silu_backward:12 \
                    aten::_log_softmax_backward_data:14 onednn::attention:15 aten::norm:16 aten::sqrt:18 \
                    aten::addcdiv_:20; do
    name=${planted_op%:*}
    p=${planted_op##*:}
    planted "slow.sh" TWINBENCH_TEST_SLOW_OP "op:$name:$p"
    session time "$name" "$p%" "$out/slow.sh" --rounds "$rounds" --why-runs "$why_runs" "$@"
  done
  finish_table time
fi
if [[ $part == time || $part == aa || $part == all ]]; then
  start_table aa
  for k in $(seq 1 "$aa"); do
    session aa - "A/A $k" "$bin" --rounds "$rounds" --why-runs "$why_runs" "$@"
  done
  finish_table aa
fi
if [[ $part == memory || $part == all ]]; then
  start_table memory
  # Peaks are deterministic on the CPU: two timed rounds and one profiled round a side.
  for planted_op in aten::silu:1MiB aten::_softmax:2MiB onednn::linear:4MiB aten::norm:8MiB aten::addcdiv_:16MiB; do
    name=${planted_op%:*}
    size=${planted_op##*:}
    planted "alloc.sh" TWINBENCH_TEST_EXTRA_ALLOC "op:$name:$size"
    session memory "$name" "$size" "$out/alloc.sh" --rounds 2 --why-runs 1 "$@"
  done
  finish_table memory
fi
echo "tables: $out/*.tsv; results: $results"
