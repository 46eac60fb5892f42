#!/usr/bin/env python3
"""A schema migration that deadlocks with a reader is run again, not failed (harness/store/schema.cpp).

    migration_deadlock.py --bin TWINBENCH     (the admin URL of the test cluster from $TWINBENCH_TEST_PG_FILE)

A database at schema version 1 (its SQL taken from the source); a reader holds
`steps` in an open transaction; twinbench opens the store and migrates to the
newest version, altering `runs` and then `steps`, so it waits for the reader;
the reader then asks for `runs`, and PostgreSQL, whose check (1 s) finds the
cycle first in the migration's session, rolls the migration back (SQLSTATE
40P01). CI once failed on exactly that, a test's poll being the reader. The
migration must be run again and the run stored: exit 0, the schema at its
newest version, the reader's two counts answered.
"""
import argparse
import os
import re
import subprocess
import sys
import time

SOURCE = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def psql(url, *args, **kw):
    return subprocess.run(["psql", "-qtA", url, *args], capture_output=True, text=True, **kw)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    a = ap.parse_args()
    admin = open(os.environ["TWINBENCH_TEST_PG_FILE"]).read().strip()
    db = f"migration_deadlock_{os.getpid()}"
    url = admin.replace("/postgres?", f"/{db}?")
    schema = open(os.path.join(SOURCE, "harness", "store", "schema.cpp")).read()
    v1 = re.search(r'constexpr std::string_view kPgV1 = R"sql\((.*?)\)sql";', schema, re.S).group(1)
    newest = max(int(v) for v in re.findall(r"\{(\d+), kDescriptions\[\d+\]", schema))
    psql(admin, "-c", f"CREATE DATABASE {db}", check=True)
    try:
        psql(url, "-v", "ON_ERROR_STOP=1", "-c", v1, check=True)
        psql(url, "-c", "INSERT INTO schema_version (version, applied_at, description) "
                        "VALUES (1, '2026-01-01T00:00:00Z', 'version 1')", check=True)
        # The reader: its own deadlock check late (30 s), so that the migration's finds the cycle.
        reader = subprocess.Popen(["psql", "-qtA", "-v", "ON_ERROR_STOP=1", url], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        reader.stdin.write("SET deadlock_timeout = 30000;\nBEGIN;\nSELECT count(*) FROM steps;\n")
        reader.stdin.flush()
        time.sleep(0.5)
        run = subprocess.Popen([a.bin, "run", "--preset", "tiny", "--variant", "functional", "train.steps=1",
                                "--no-progress", "--db", url], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True)
        held = False
        for _ in range(3000):  # until the migration holds runs (it waits for steps next)
            q = psql(url, "-c", "SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation "
                                "WHERE c.relname = 'runs' AND l.mode = 'AccessExclusiveLock' AND l.granted")
            if q.stdout.strip() not in ("", "0"):
                held = True
                break
            if run.poll() is not None:
                break
        reader.stdin.write("SELECT count(*) FROM runs;\n")  # waits for runs: the cycle
        reader.stdin.flush()
        time.sleep(3)  # the migration's check (1 s) has rolled it back
        said = reader.communicate("COMMIT;\n", timeout=60)[0]
        out = run.communicate(timeout=300)[0]
        version = psql(url, "-c", "SELECT max(version) FROM schema_version").stdout.strip()
    finally:
        psql(admin, "-c", f"DROP DATABASE IF EXISTS {db} WITH (FORCE)")
    problems = []
    if not held:
        problems.append("the migration never held runs (the deadlock was not set up)")
    if run.returncode != 0:
        problems.append(f"twinbench exited {run.returncode}: {out.strip()[-600:]}")
    if version != str(newest):
        problems.append(f"schema version {version!r}, not {newest}")
    if said.split() != ["0", "0"]:
        problems.append(f"the reader was answered {said.strip()!r}, not two counts of 0")
    for p in problems:
        print("migration_deadlock.py: " + p, file=sys.stderr)
    if not problems:
        print(f"migration_deadlock.py: the migration met the reader's deadlock, ran again and reached version {newest}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
