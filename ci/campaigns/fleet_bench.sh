#!/usr/bin/env bash
# ci/campaigns/fleet_bench.sh [RUNS] [STEPS]      (defaults: 100000 runs x 50 steps)
#
# The store's scale benchmark (docs/fleet.md, "Scale"): a SQLite store of RUNS
# runs of STEPS steps each (one real run copied, ci/campaigns/fleet_bench_fill.py)
# spread over the days a fleet writing 100,000 runs a year takes to store them
# ($DAYS overrides; at least 60), pushed into PostgreSQL with `twinbench db push`
# (throughput), then every read-only command — report nightly (30 days), pair,
# index, nway, branch, compare, runs — from each store: wall time, peak RSS
# (/usr/bin/time -v) and that RSS above the binary's own start-up footprint
# (`twinbench --version`), and the size of what each wrote. With
# TWINBENCH_V4_BIN (a twinbench of schema version 4, e.g. built from 6766045:
# tests/data/store/README.md), it also times the v4 -> v5 migration of a store
# of $MIGRATE_RUNS runs (default 100000) on both backends.
#
# A benchmark, not a test: run it on an idle machine (`/work/cpu-slot
# --exclusive` here); its table goes to docs/results/fleet_bench.md (block
# runs-RUNS; RESULTS: another file), which docs/fleet.md quotes. CHECK=1 (for small
# sizes) also diffs what every command printed from the two stores (timestamps
# and store names aside): the same answers, and fails when they differ. The
# server is a private one (ci/pg_cluster.sh, stopped at the end) unless
# TWINBENCH_BENCH_PG names one (an empty database; with the migration, also
# TWINBENCH_BENCH_PG_V4, another). Results: $OUT (default fleet-bench/):
# results.md and results.json. Disk: about 8 KiB per run in SQLite and 17 KiB
# on the server at 50 steps (1,000,000 runs: about 25 GiB), plus the
# migration's copies.
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=${1:-100000}
steps=${2:-50}
days=${DAYS:-$(( runs * 365 / 100000 > 60 ? runs * 365 / 100000 : 60 ))}
out=${OUT:-fleet-bench}
check=${CHECK:-0}
serve=${SERVE:-1}
serve_seconds=${SERVE_SECONDS:-30}
v4bin=${TWINBENCH_V4_BIN:-}
migrate_runs=${MIGRATE_RUNS:-100000}
tb=$PWD/build/harness/twinbench
[[ -x $tb ]] || { echo "fleet_bench.sh: build first (bash ci/build.sh)" >&2; exit 1; }
[[ -z $v4bin || -x $v4bin ]] || { echo "fleet_bench.sh: TWINBENCH_V4_BIN=$v4bin is not an executable" >&2; exit 1; }
rm -rf "$out"
mkdir -p "$out"
out=$(cd "$out" && pwd)
export TWINBENCH_THREADS=1

pg=${TWINBENCH_BENCH_PG:-}
pg_v4=${TWINBENCH_BENCH_PG_V4:-}
if [[ -z $pg ]]; then
  bash ci/pg_cluster.sh start "$out/pg" 2>>"$out/pg.log"
  trap 'bash ci/pg_cluster.sh stop "$out/pg" 2>>"$out/pg.log"' EXIT
  admin=$(cat "$out/pg/url")
  psql -q "$admin" -c "CREATE DATABASE fleet_bench" >/dev/null
  pg=$(sed 's|/postgres?|/fleet_bench?|' <<<"$admin")
  if [[ -n $v4bin ]]; then
    psql -q "$admin" -c "CREATE DATABASE fleet_bench_v4" >/dev/null
    pg_v4=$(sed 's|/postgres?|/fleet_bench_v4?|' <<<"$admin")
  fi
fi

# fill BIN STORE RUNS: a template run made by BIN (its schema), copied RUNS - 1 times.
fill() {
  local bin=$1 store=$2 n=$3
  echo "fleet_bench.sh: filling $store with $n runs x $steps steps over $days days" >&2
  "$bin" run --preset tiny --variant functional "train.steps=$steps" --no-progress --group template --db "$store" \
    >/dev/null
  python3 ci/campaigns/fleet_bench_fill.py --db "$store" --runs "$((n - 1))" --days "$days"
  sqlite3 "$store" "PRAGMA wal_checkpoint(TRUNCATE)" >/dev/null
}

results=()
# measure NAME OUTFILE_OR_DIR CMD...: wall time, peak RSS (KiB) and the size of what it wrote.
measure() {
  local name=$1 what=$2
  shift 2
  local t0 t1 rss size=0
  t0=$(date +%s.%N)
  if ! /usr/bin/time -v -o "$out/time.txt" "$@" >"$out/$name.stdout" 2>"$out/$name.stderr"; then
    echo "fleet_bench.sh: $name failed:" >&2
    cat "$out/$name.stderr" >&2
    exit 1
  fi
  t1=$(date +%s.%N)
  rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$out/time.txt")
  [[ -e $what ]] && size=$(du -sb "$what" | cut -f1)
  local secs
  secs=$(python3 -c "print(f'{$t1 - $t0:.3f}')")
  results+=("$name $secs $rss $size")
  echo "fleet_bench.sh: $name: $secs s, ${rss} KiB peak RSS, ${size} B written" >&2
}

sqlite=$out/fleet.db
fill_t0=$(date +%s.%N)
fill "$tb" "$sqlite" "$runs"
fill_seconds=$(python3 -c "print(f'{$(date +%s.%N) - $fill_t0:.1f}')")
echo "fleet_bench.sh: filled in $fill_seconds s" >&2
measure startup /dev/null "$tb" --version
measure push /dev/null "$tb" db push "$sqlite" --into "$pg"
# What autovacuum does soon after a bulk load: planner statistics, and the
# visibility map that lets count(*) (the index's "N stored runs") read an
# index instead of the table. Timed apart from the push.
measure vacuum /dev/null psql -q "$pg" -c "VACUUM ANALYZE"

tip=(--baseline main --candidate feat --baseline-at tip)
for store in sqlite postgresql; do
  db=$sqlite
  [[ $store == postgresql ]] && db=$pg
  measure "$store-nightly" "$out/$store-nightly" "$tb" report nightly --days 30 --db "$db" --out "$out/$store-nightly"
  measure "$store-pair" "$out/$store-pair" "$tb" report pair --db "$db" --out "$out/$store-pair"
  measure "$store-index" "$out/$store-index/index.html" "$tb" report index --db "$db" --out "$out/$store-index"
  measure "$store-nway" /dev/null "$tb" report nway --db "$db" --format json
  measure "$store-branch" "$out/$store-branch" "$tb" report branch "${tip[@]}" --db "$db" --out "$out/$store-branch"
  measure "$store-compare" /dev/null "$tb" compare "${tip[@]}" --db "$db" --format json
  measure "$store-runs" /dev/null "$tb" runs --json --db "$db"
  measure "$store-nightly365" /dev/null "$tb" report nightly --days 365 --format json --db "$db"
  if [[ $check == 1 ]]; then
    for cmd in "report nightly --days 30 --format json" "report pair --format json" "report nway --format json" \
               "report branch ${tip[*]} --format json" "compare ${tip[*]} --format json" "runs --json --limit 0"; do
      name=$(tr ' ' '_' <<<"$cmd" | tr -d -- '-')
      # shellcheck disable=SC2086
      "$tb" $cmd --db "$db" 2>/dev/null | sed -E 's/[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z/<time>/g' \
        | sed "s|$db|<store>|g" >"$out/check-$store-$name.out"
    done
  fi
done

if [[ -n $v4bin ]]; then
  # A version 4 store of MIGRATE_RUNS runs, made and pushed by the previous
  # release; this twinbench migrates each when it first opens it.
  v4=$out/fleet-v4.db
  fill "$v4bin" "$v4" "$migrate_runs"
  echo "fleet_bench.sh: pushing the v4 store with the v4 twinbench" >&2
  "$v4bin" db push "$v4" --into "$pg_v4" 2>"$out/v4-push.stderr"
  measure migrate-sqlite /dev/null "$tb" runs --limit 1 --db "$v4"
  measure migrate-postgresql /dev/null "$tb" runs --limit 1 --db "$pg_v4"
  for db in "$v4" "$pg_v4"; do
    version=$(if [[ $db == "$v4" ]]; then sqlite3 "$db" "SELECT max(version) FROM schema_version"; else
      psql -qtA "$db" -c "SELECT max(version) FROM schema_version"; fi)
    [[ $version == 5 ]] || { echo "fleet_bench.sh: $db is at schema version $version after opening, not 5" >&2; exit 1; }
  done
fi

sqlite_bytes=$(du -sb "$sqlite" | cut -f1)
pg_bytes=$(psql -qtA "$pg" -c "SELECT pg_database_size(current_database())")
pushed_runs=$(psql -qtA "$pg" -c "SELECT count(*) FROM runs")
pushed_steps=$(psql -qtA "$pg" -c "SELECT count(*) FROM steps")
stored_steps=$(sqlite3 "$sqlite" "SELECT count(*) FROM steps")
[[ $pushed_runs == "$runs" && $pushed_steps == "$stored_steps" ]] || {
  echo "fleet_bench.sh: the server holds $pushed_runs runs and $pushed_steps steps, the file $runs and $stored_steps" >&2
  exit 1
}
if [[ $check == 1 ]]; then
  status=0
  for a in "$out"/check-sqlite-*.out; do
    b=${a/check-sqlite-/check-postgresql-}
    [[ -s $a ]] || { echo "fleet_bench.sh: CHECK: $(basename "$a") is empty" >&2; status=1; }
    if cmp -s "$a" "$b"; then echo "fleet_bench.sh: CHECK: same answer: ${a#*check-sqlite-}" >&2
    else echo "fleet_bench.sh: CHECK: the stores differ: ${a#*check-sqlite-}" >&2; status=1; fi
  done
  [[ $status == 0 ]] || exit 1
fi

# The server over each store, after the commands and the counts above (its writer adds runs).
if [[ $serve == 1 ]]; then
  for store in sqlite postgresql; do
    db=$sqlite
    [[ $store == postgresql ]] && db=$pg
    bash ci/campaigns/serve_bench.sh "$db" "$out/serve-$store" "$serve_seconds"
  done
fi

python3 - "$out" "$runs" "$steps" "$days" "$sqlite_bytes" "$pg_bytes" "$fill_seconds" "$(git rev-parse HEAD)" \
  "$(hostname)" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$runs $steps" "${results[@]}" <<'PY'
import json, os, sys
out, runs, steps, days, sqlite_bytes, pg_bytes = (sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]),
                                                 int(sys.argv[5]), int(sys.argv[6]))
fill_seconds, commit, host, date, args = float(sys.argv[7]), sys.argv[8], sys.argv[9], sys.argv[10], sys.argv[11]
rows = {}
for r in sys.argv[12:]:
    name, sec, rss, size = r.split()
    rows[name] = {"seconds": float(sec), "peak_rss_kib": int(rss), "bytes": int(size)}
startup = rows.pop("startup")
push = rows.pop("push")
vacuum = rows.pop("vacuum")
push["runs_per_s"] = runs / push["seconds"]
push["steps_per_s"] = runs * steps / push["seconds"]
migrations = {k: rows.pop(k) for k in list(rows) if k.startswith("migrate-")}
for r in rows.values():
    r["rss_above_startup_kib"] = r["peak_rss_kib"] - startup["peak_rss_kib"]
serve = {s: json.load(open(f"{out}/serve-{s}/serve.json")) for s in ("sqlite", "postgresql")
         if os.path.exists(f"{out}/serve-{s}/serve.json")}
doc = {"command": f"ci/campaigns/fleet_bench.sh {args}", "commit": commit, "host": host, "date": date,
       "runs": runs, "steps_per_run": steps, "days": days, "fill_seconds": fill_seconds, "sqlite_bytes": sqlite_bytes,
       "postgresql_bytes": pg_bytes, "startup": startup, "push": push, "vacuum_analyze": vacuum, "reports": rows,
       "migration": migrations, "serve": serve}
json.dump(doc, open(f"{out}/results.json", "w"), indent=2)
lines = [f"`{doc['command']}` at {commit[:12]} on {host}, {date}",
         "",
         f"{runs} runs x {steps} steps over {days} days, filled in {fill_seconds:.0f} s; store size: SQLite "
         f"{sqlite_bytes / 2**20:.0f} MiB, "
         f"PostgreSQL {pg_bytes / 2**20:.0f} MiB; `twinbench --version`: {startup['peak_rss_kib'] / 1024:.0f} MiB",
         "",
         f"db push: {push['seconds']:.1f} s ({push['runs_per_s']:.0f} runs/s, {push['steps_per_s']:.0f} steps/s); "
         f"then VACUUM ANALYZE on the server: {vacuum['seconds']:.1f} s",
         "",
         "| command | store | time (s) | peak RSS (MiB) | above start-up (MiB) | output (KiB) |",
         "|---|---|---:|---:|---:|---:|"]
for name, r in rows.items():
    store, report = name.split("-", 1)
    lines.append(f"| {report} | {store} | {r['seconds']:.2f} | {r['peak_rss_kib'] / 1024:.0f} | "
                 f"{r['rss_above_startup_kib'] / 1024:.0f} | {r['bytes'] / 1024:.0f} |")
if migrations:
    lines += ["", "| v4 -> v5 migration | time (s) | peak RSS (MiB) |", "|---|---:|---:|"]
    for name, r in migrations.items():
        lines.append(f"| {name.split('-', 1)[1]} | {r['seconds']:.2f} | {r['peak_rss_kib'] / 1024:.0f} |")
for name in serve:
    lines += ["", f"`twinbench serve` over the {name} store:", ""]
    lines += open(f"{out}/serve-{name}/serve.md").read().splitlines()[2:]
open(f"{out}/results.md", "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
# The tables into the results file the docs quote (ci/campaign_results.py): blocks runs-RUNS and
# serve-STORE-RUNS (CHECK runs of a few thousand runs are correctness checks: not written).
if [[ $check == 0 ]]; then
  bash ci/campaigns/fleet_bench_record.sh "$out" "${RESULTS:-docs/results/fleet_bench.md}"
fi
