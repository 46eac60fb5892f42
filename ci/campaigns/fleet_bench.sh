#!/usr/bin/env bash
# ci/campaigns/fleet_bench.sh [RUNS] [STEPS]      (defaults: 100000 runs x 50 steps)
#
# The store's scale benchmark (docs/fleet.md, "Scale"): a SQLite store of RUNS
# runs of STEPS steps each (one real run copied, ci/campaigns/fleet_bench_fill.py), pushed
# into PostgreSQL with `twinbench db push` (throughput), then the nightly, pair
# and index reports rendered from each store (time and size). A benchmark, not
# a test: run it on an idle machine (`/work/cpu-slot --exclusive` here) and put
# its table in docs/fleet.md. The server is a private one (ci/pg_cluster.sh,
# stopped at the end) unless TWINBENCH_BENCH_PG names one (an empty database).
# Results: $OUT (default fleet-bench/): results.md and results.json.
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=${1:-100000}
steps=${2:-50}
out=${OUT:-fleet-bench}
tb=build/harness/twinbench
[[ -x $tb ]] || { echo "fleet_bench.sh: build first (bash ci/build.sh)" >&2; exit 1; }
rm -rf "$out"
mkdir -p "$out"
out=$(cd "$out" && pwd)

pg=${TWINBENCH_BENCH_PG:-}
if [[ -z $pg ]]; then
  bash ci/pg_cluster.sh start "$out/pg" 2>>"$out/pg.log"
  trap 'bash ci/pg_cluster.sh stop "$out/pg" 2>>"$out/pg.log"' EXIT
  psql -q "$(cat "$out/pg/url")" -c "CREATE DATABASE fleet_bench" >/dev/null
  pg=$(sed 's|/postgres?|/fleet_bench?|' "$out/pg/url")
fi

sqlite=$out/fleet.db
echo "fleet_bench.sh: filling $sqlite with $runs runs x $steps steps" >&2
$tb run --preset tiny --variant functional "train.steps=$steps" --no-progress --group template --db "$sqlite" >/dev/null
python3 ci/campaigns/fleet_bench_fill.py --db "$sqlite" --runs "$((runs - 1))"
sqlite3 "$sqlite" "PRAGMA wal_checkpoint(TRUNCATE)" >/dev/null

seconds() { python3 -c 'import time; print(f"{time.time():.3f}")'; }
results=()
# measure NAME OUTFILE_OR_DIR CMD...: wall time, peak RSS (KiB) and the size of what it wrote.
measure() {
  local name=$1 what=$2
  shift 2
  local t0 t1 rss
  t0=$(seconds)
  /usr/bin/time -f "%M" -o "$out/time.txt" "$@" >"$out/$name.stdout" 2>"$out/$name.stderr"
  t1=$(seconds)
  rss=$(tail -1 "$out/time.txt")
  local size=0
  [[ -e $what ]] && size=$(du -sb "$what" | cut -f1)
  results+=("$name $(python3 -c "print(f'{$t1 - $t0:.2f}')") $rss $size")
  echo "fleet_bench.sh: $name: $(python3 -c "print(f'{$t1 - $t0:.2f}')") s, ${rss} KiB peak RSS, ${size} B written" >&2
}

measure push /dev/null $tb db push "$sqlite" --into "$pg"
for store in sqlite postgresql; do
  db=$sqlite
  [[ $store == postgresql ]] && db=$pg
  measure "$store-nightly" "$out/$store-nightly/nightly.html" $tb report nightly --db "$db" --out "$out/$store-nightly"
  measure "$store-pair" "$out/$store-pair" $tb report pair --db "$db" --out "$out/$store-pair"
  measure "$store-index" "$out/$store-index/index.html" $tb report index --db "$db" --out "$out/$store-index"
done
sqlite_bytes=$(du -sb "$sqlite" | cut -f1)
pg_bytes=$(psql -qtA "$pg" -c "SELECT pg_database_size(current_database())")

python3 - "$out" "$runs" "$steps" "$sqlite_bytes" "$pg_bytes" "${results[@]}" <<'PY'
import json, sys
out, runs, steps, sqlite_bytes, pg_bytes = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
rows = {}
for r in sys.argv[6:]:
    name, sec, rss, size = r.split()
    rows[name] = {"seconds": float(sec), "peak_rss_kib": int(rss), "bytes": int(size)}
push = rows.pop("push")
push["runs_per_s"] = runs / push["seconds"]
push["steps_per_s"] = runs * steps / push["seconds"]
doc = {"runs": runs, "steps_per_run": steps, "sqlite_bytes": sqlite_bytes, "postgresql_bytes": pg_bytes,
       "push": push, "reports": rows}
json.dump(doc, open(f"{out}/results.json", "w"), indent=2)
lines = [f"{runs} runs x {steps} steps; store size: SQLite {sqlite_bytes / 2**20:.0f} MiB, "
         f"PostgreSQL {pg_bytes / 2**20:.0f} MiB",
         "",
         f"db push: {push['seconds']:.1f} s ({push['runs_per_s']:.0f} runs/s, {push['steps_per_s']:.0f} steps/s)",
         "",
         "| report | store | time (s) | peak RSS (MiB) | output (KiB) |",
         "|---|---|---:|---:|---:|"]
for name, r in rows.items():
    store, report = name.split("-", 1)
    lines.append(f"| {report} | {store} | {r['seconds']:.2f} | {r['peak_rss_kib'] / 1024:.0f} | {r['bytes'] / 1024:.0f} |")
open(f"{out}/results.md", "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
