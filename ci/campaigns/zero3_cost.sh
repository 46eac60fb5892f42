#!/usr/bin/env bash
# What sharding costs in step time (docs/sharding.md, "Step time"): an `ab`
# session of one build against itself, side A with replicated data parallel
# (dist.shard = none), side B sharded (dist.shard = zero3), on 08_ddp (2 Gloo
# ranks on this host, small preset, batch 2 x 128 per rank), for each
# implementation. `ab` interleaves the rounds in random order and prints B's
# median step time against A's as a change with its interval: the cost of the
# extra gathers and reduce-scatters. Not part of the test suite: run it on an
# otherwise idle machine with at least 2 cores.
#
#   ci/campaigns/zero3_cost.sh [ROUNDS=10] [ab options / overrides ...]
# Environment: TWINBENCH_THREADS (default 1: one thread per rank), REMAT (the
# sharded side's train.remat, default none: the gathers' cost alone; full adds
# the recompute), OUT (default zero3-cost: the store and the report), RESULTS (default
# docs/results/zero3_cost.md: the table, stamped with the command, commit, host and date).
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${1:-10}
shift || true
bin=$PWD/build/harness/twinbench
[[ -x $bin ]] || { echo "build first: bash ci/build.sh" >&2; exit 2; }
export TWINBENCH_THREADS=${TWINBENCH_THREADS:-1}
out=${OUT:-zero3-cost}
mkdir -p "$out"
# The two sides: the same binary, `run` and `plan` with the layout appended.
side() {
  cat >"$out/$1" <<SH
#!/bin/sh
case "\$1" in run|plan) exec "$bin" "\$@" dist.shard=$2 train.remat=$3 ;; *) exec "$bin" "\$@" ;; esac
SH
  chmod +x "$out/$1"
}
side replicated none none
side sharded zero3 "${REMAT:-none}"
printf 'implementation\treplicated (median s/step)\tzero3 (median s/step)\tzero3 / replicated − 1 [CI]\tverdict\n' \
  >"$out/sessions.tsv"
for variant in functional module; do
  "$bin" ab --a "$out/replicated" --b "$out/sharded" --label-a replicated --label-b zero3 \
    --case 08_ddp --variant "$variant" --rounds "$rounds" --db "$out/ab.db" --json "$@" >"$out/$variant.json"
  python3 - "$variant" "$out/$variant.json" >>"$out/sessions.tsv" <<'PY'
import json, sys
variant, path = sys.argv[1:3]
j = json.load(open(path))
m = next(x for x in j["metrics"] if x["metric"] == "step_time_median_s")
print("\t".join([variant, f"{m['a']:.4f}", f"{m['b']:.4f}", m["change"], m["verdict"]]))
PY
done
column -t -s $'\t' "$out/sessions.tsv"
# The table into the results file docs/sharding.md quotes (ci/campaign_results.py).
python3 ci/campaign_results.py write "${RESULTS:-docs/results/zero3_cost.md}" sessions --tsv "$out/sessions.tsv" \
  --command "REMAT=${REMAT:-none} TWINBENCH_THREADS=$TWINBENCH_THREADS ci/campaigns/zero3_cost.sh $rounds${*:+ $*}" \
  --note "08_ddp: 2 Gloo ranks on one host, one ab session per implementation, $rounds interleaved rounds; the sessions' JSON in $out."
