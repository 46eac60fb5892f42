#!/usr/bin/env bash
# An A/A over the logs of one record: the logs of DIR (sorted by name) are
# split alternately into two labels, aa-1 and aa-2, imported with `twinbench
# import`, and compared with `twinbench compare`: what the verdicts say when
# nothing changed. Analysis of logged times only: it runs nothing and times
# nothing on this machine.
#
#   ci/campaigns/import_aa.sh DIR [DB]
#
# DIR: a directory of one record's logs (e.g. modded-nanogpt's
# records/track_1_short/2026-07-17_FP8DownProjection/baseline); DB: the store
# to write (default: a fresh one in a temporary directory). TWINBENCH: the
# binary (default build/harness/twinbench). Prints each run's steady median
# step time and the comparison (markdown, then the step-time rows), and writes
# the step-time rows as block aa-<DIR's name> of docs/results/import_aa.md
# (RESULTS: another file), which docs/cli.md quotes.
set -euo pipefail

dir=$(cd "${1:?usage: ci/campaigns/import_aa.sh DIR [DB]}" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
db=$(realpath -m "${2:-$tmp/aa.db}")
cd "$(dirname "$0")/../.."
bin=${TWINBENCH:-build/harness/twinbench}

mapfile -t logs < <(find "$dir" -maxdepth 1 -type f \( -name '*.txt' -o -name '*.log' -o -name '*.txt.gz' -o -name '*.log.gz' \) | LC_ALL=C sort)
((${#logs[@]} >= 4)) || { echo "import_aa.sh: $dir holds ${#logs[@]} logs; an A/A needs at least 4" >&2; exit 2; }
one=() two=()
for i in "${!logs[@]}"; do
  if ((i % 2 == 0)); then one+=("${logs[$i]}"); else two+=("${logs[$i]}"); fi
done
echo "A/A over $dir: ${#one[@]} logs as aa-1, ${#two[@]} as aa-2 (alternately, by name)"
"$bin" import "${one[@]}" --branch aa-1 --case record --variant modded --db "$db" --json >"$tmp/one.json"
"$bin" import "${two[@]}" --branch aa-2 --case record --variant modded --db "$db" --json >"$tmp/two.json"
python3 - "$tmp/one.json" "$tmp/two.json" <<'EOF'
import json, sys
for label, path in (("aa-1", sys.argv[1]), ("aa-2", sys.argv[2])):
    for run in json.load(open(path)):
        m = run["metrics"]
        avg = m.get("nanogpt_step_avg_s")
        print(f"{label}  {run['file'].rsplit('/', 1)[-1]}  status {run['status']}  steps {run['steps']}  "
              f"median {m['step_time_median_s']:.4f} s  mean {m['step_time_mean_s']:.6f} s  "
              f"step_avg {'-' if avg is None else format(avg, '.5f')} s  train_time {m['wall_s']:.3f} s")
EOF
"$bin" compare --baseline aa-1 --candidate aa-2 --format markdown --db "$db"
"$bin" compare --baseline aa-1 --candidate aa-2 --format json --db "$db" > "$tmp/compare.json"
python3 - "$tmp/compare.json" "$tmp/aa.tsv" "${#one[@]}" "${#two[@]}" <<'EOF'
import json, sys
path, tsv, one, two = sys.argv[1:5]
rows = ["metric\tverdict\tchange [CI]\truns"]
for c in json.load(open(path))["comparisons"]:
    for m in c["metrics"]:
        if m["metric"] in ("step_time_median_s", "step_time_mean_s", "nanogpt_step_avg_s"):
            print("%s: %s: %s" % (m["metric"], m["verdict"], m["explanation"]))
            rows.append(f"{m['metric']}\t{m['verdict']}\t{m['change'] or '-'}\t{one} vs {two}")
open(tsv, "w").write("\n".join(rows) + "\n")
EOF
# The A/A's table into the results file docs/cli.md quotes, as block aa-<the logs' folder>
# (ci/campaign_results.py; RESULTS: another file).
python3 ci/campaign_results.py write "${RESULTS:-docs/results/import_aa.md}" "aa-$(basename "$dir")" \
  --command "ci/campaigns/import_aa.sh $(basename "$(dirname "$dir")")/$(basename "$dir")" --tsv "$tmp/aa.tsv" \
  --note "The logs of $(basename "$dir") split alternately by name into aa-1 and aa-2, imported and compared."
