#!/usr/bin/env bash
# ci/campaigns/fleet_bench_record.sh OUT [RESULTS]
#
# The tables of a finished fleet bench (ci/campaigns/fleet_bench.sh, which calls
# this at its end) into the results file the docs quote (ci/campaign_results.py;
# RESULTS, default docs/results/fleet_bench.md): block runs-RUNS, every read-only
# command's time and memory on both stores (docs/fleet.md), and serve-STORE-RUNS,
# the server under 16 clients over each store (docs/serve.md). Each block's note
# names the commit the figures were measured at (OUT/results.json).
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: fleet_bench_record.sh OUT [RESULTS]}
results=${2:-docs/results/fleet_bench.md}
[[ -f $out/results.json && -f $out/results.md ]] || { echo "fleet_bench_record.sh: $out holds no finished bench" >&2; exit 1; }
read -r runs steps days commit < <(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(d["runs"], d["steps_per_run"], d["days"], d["commit"][:12])' "$out/results.json")
command="DAYS=$days bash ci/campaigns/fleet_bench.sh $runs $steps"
sed -n '/^| command /,/^$/p' "$out/results.md" | sed '/^$/d' >"$out/reports.table.md"
python3 ci/campaign_results.py write "$results" "runs-$runs" --command "$command" --table "$out/reports.table.md" \
  --note "$(sed -n '1p;3p;5p' "$out/results.md" | sed 's/ *$/./' | paste -sd ' ' -)"
for store in sqlite postgresql; do
  serve=$out/serve-$store/serve.md
  [[ -f $serve ]] || continue
  sed -n '/^| page /,/^$/p' "$serve" | sed '/^$/d' >"$out/serve-$store.table.md"
  python3 ci/campaign_results.py write "$results" "serve-$store-$runs" --command "$command" \
    --table "$out/serve-$store.table.md" \
    --note "Measured at $commit: \`twinbench serve\` over the $store store of $runs runs, $(sed -n '1p' "$serve" |
            sed 's/^.*; //'). $(grep '^Server memory' "$serve")"
done
