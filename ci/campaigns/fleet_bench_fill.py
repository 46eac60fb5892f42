#!/usr/bin/env python3
"""Fill a twinbench SQLite store with N runs for the scale benchmark (ci/campaigns/fleet_bench.sh).

    ci/campaigns/fleet_bench_fill.py --db STORE.db --runs N [--days D] [--feature-groups K]

STORE.db must hold one finished run made by twinbench (its `template` group):
every new run is a copy of it — the same config, provenance, metric names and
number of steps — with a new uuid, a case, an implementation, a group (one
group per night of 8 cases x 2 implementations), a start time spread over the
last D days and its step times and losses jittered, so that the store looks
like a fleet's history without training N models. The groups are on branch
`main`, the newest K (default 1) on `feat`, so that `report branch` and
`compare --baseline main --candidate feat --baseline-at tip` have two sides.
The store's schema is whatever the template's twinbench made (the columns are
read from it): a version 4 store filled from a version 4 template times the
migration. Written with Python's sqlite3 module, 1000 runs per transaction, with a 1 GiB page cache.
Generated data: never use it for anything but timing the store and the reports.
"""
import argparse
import datetime
import random
import sqlite3
import sys
import uuid

CASES = ["01_base", "02_bf16", "03_dropout", "04_int8", "05_fp8", "06_1b", "07_8b", "08_ddp"]
VARIANTS = ["functional", "module"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", required=True)
    ap.add_argument("--runs", type=int, required=True)
    ap.add_argument("--days", type=int, default=60)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--feature-groups", type=int, default=1)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    db = sqlite3.connect(a.db, isolation_level=None)
    db.execute("PRAGMA foreign_keys = ON")
    # 1 GiB of page cache: at a million runs the steps index (random run ids) outgrows the default 2 MiB,
    # and each insert would go to the OS for its pages.
    db.execute("PRAGMA cache_size = -1048576")
    cols = [r[1] for r in db.execute("PRAGMA table_info(runs)")]
    template = db.execute("SELECT * FROM runs WHERE group_id = 'template' AND status = 'completed' LIMIT 1").fetchone()
    if template is None:
        sys.exit(f"{a.db}: no completed run in group 'template' to copy")
    run = dict(zip(cols, template))
    steps = db.execute("SELECT step, loss, step_time_s, tokens, is_warmup, is_eval, is_checkpoint, eval_loss, is_stall"
                       " FROM steps WHERE run_id = ? ORDER BY step", (run["run_id"],)).fetchall()
    step_cols = "run_id, step, loss, step_time_s, tokens, is_warmup, is_eval, is_checkpoint, eval_loss, is_stall"
    metrics = db.execute("SELECT name, value FROM run_metrics WHERE run_id = ?", (run["run_id"],)).fetchall()
    per_group = len(CASES) * len(VARIANTS)
    groups = max(1, (a.runs + per_group - 1) // per_group)
    now = datetime.datetime.utcnow().replace(microsecond=0)
    start = now - datetime.timedelta(days=a.days)
    span = (now - start).total_seconds()
    insert_run = f"INSERT INTO runs ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})"
    written = 0
    db.execute("BEGIN")
    # The template itself becomes the oldest run, so that the newest group is a night's matrix.
    old = (start - datetime.timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    db.execute("UPDATE runs SET started_at = ?, finished_at = ? WHERE run_id = ?", (old, old, run["run_id"]))
    for g in range(groups):
        group_id = str(uuid.uuid4())
        group_start = start + datetime.timedelta(seconds=span * g / groups)
        commit = f"{rng.getrandbits(160):040x}"
        branch = "feat" if g >= groups - a.feature_groups else "main"
        for i in range(per_group):
            if written == a.runs:
                break
            case, variant = CASES[i // len(VARIANTS)], VARIANTS[i % len(VARIANTS)]
            started = group_start + datetime.timedelta(seconds=30 * i)
            row = dict(run)
            row.update(run_id=str(uuid.uuid4()), group_id=group_id, case_name=case, variant=variant,
                       started_at=started.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
                       finished_at=(started + datetime.timedelta(seconds=25)).strftime("%Y-%m-%dT%H:%M:%S.000Z"),
                       git_commit=commit, git_branch=branch)
            if "source" in row:
                row["source"] = ""
            db.execute(insert_run, [row[c] for c in cols])
            speed = rng.uniform(0.95, 1.05)
            db.executemany(
                f"INSERT INTO steps ({step_cols}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(row["run_id"], s[0], None if s[1] is None else s[1] * rng.uniform(0.999, 1.001),
                  None if s[2] is None else s[2] * speed * rng.uniform(0.98, 1.02), *s[3:]) for s in steps])
            db.executemany("INSERT INTO run_metrics (run_id, name, value) VALUES (?, ?, ?)",
                           [(row["run_id"], n, None if v is None else v * speed) for n, v in metrics])
            written += 1
            if written % 1000 == 0:
                db.execute("COMMIT")
                db.execute("BEGIN")
                print(f"fleet_bench_fill: {written} runs", file=sys.stderr, end="\r")
    db.execute("COMMIT")
    print(f"fleet_bench_fill: {written} runs of {len(steps)} steps in {groups} groups over {a.days} days",
          file=sys.stderr)


if __name__ == "__main__":
    main()
