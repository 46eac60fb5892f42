#!/usr/bin/env python3
"""The README is a test (issue 43): every command example of README.md, in the
README's order, run against the built binaries in a scratch directory, each
held to its exit code and one key line of its output.

    tests/integration/readme_walk.py --bin build/harness/twinbench --micro build/twinbench-micro

Every command line of the README's indented blocks must have an entry in WALK
below, and every entry must still be in the README: a new example, or one that
changed, fails the walk until this table says how to check it. An entry says
how the walk runs the command:

  small   appended to the command: small settings for a command that trains
          (a tiny model, few steps), so that the walk takes minutes; the
          README's own options are kept as written;
  instead a stand-in for a command that needs what a test has not (a second
          checkout, a GPU, a database server at another host), with the reason;
  skip    why the walk does not run it at all (the two top-level commands,
          which CI runs themselves, and the GPU ones);
  serve   a server: started with these options appended, its index fetched
          from the URL it prints (what `expect` matches), then stopped, which
          must end it with exit 0.

It prints each command with its exit code, its time and the line it matched.
Needs the PostgreSQL test cluster for the fleet examples ($TWINBENCH_TEST_PG_FILE,
the ctest fixture pg_cluster); without it those two are reported as skipped.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

SOURCE = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
SMALL = "train.steps=4 train.batch=2 train.seq_len=32 measure.warmup_steps=1 --no-progress"

# README command (its comment removed) -> how the walk checks it.
WALK = {
    "bash ci/demo.sh": {"skip": "the main job: CI and ci/demo.sh itself run it"},
    "bash ci/test.sh": {"skip": "the test command: this walk is part of it"},
    "TWINBENCH_TORCH_PYTHON=$(which python) bash ci/build.sh cuda": {"skip": "a GPU host's build"},
    "build-cuda/harness/twinbench plan --case 06_1b --device-memory 80GiB": {
        "instead": "twinbench plan --case 06_1b --device-memory 80GiB",
        "why": "the CUDA line's binary may not be built here; plan allocates nothing either way",
        "expect": r"fits"},
    "build-cuda/harness/twinbench run --case 01_base,02_bf16 --device cuda": {"skip": "needs a GPU"},

    "twinbench list --keys": {"expect": r"requires\.memory_gb"},
    "twinbench plan --case 06_1b": {"expect": r"1,104,218,112|1104218112"},
    "twinbench plan --preset 1b train.batch=1 train.seq_len=2048 --json": {"expect": r'"case": "preset:1b"'},
    "twinbench run --case 01_base,02_bf16 --reduced": {"small": SMALL, "expect": r"== 02_bf16"},
    "twinbench matrix --cases '0[1-3]*' --reduced --repeats 3 --branch my-feature": {
        "small": SMALL, "expect": r"== 03_dropout \(median of 3 repeats\)"},
    "twinbench run --case 08_ddp": {"small": SMALL, "expect": r"== 08_ddp"},
    "twinbench run --case 08_ddp dist.shard=zero3 train.remat=full": {"small": SMALL, "expect": r"== 08_ddp"},
    "twinbench plan --case 07_8b --devices 8 --device-memory 80GiB": {"expect": r"fits a GPU with 80\.0 GiB: yes"},
    "twinbench run --case 01_base --nproc 2": {"small": SMALL + " --oversubscribe", "expect": r"== 01_base"},
    "twinbench runs --limit 10": {"expect": r"^RUN +GROUP +CASE"},
    'sqlite3 twinbench.db "SELECT case_name, variant, status FROM runs"': {"expect": r"01_base\|functional\|completed"},
    "twinbench weights export --preset tiny --variant module --out w.safetensors": {"expect": r"wrote \d+ tensors"},
    "twinbench weights inspect w.safetensors": {"expect": r"config model\.preset = tiny"},
    "twinbench data make-shard --text README.md --out text.bin": {"expect": r"text\.bin"},
    "twinbench eval --preset tiny --variant functional --weights w.safetensors --tokens text.bin --json": {
        "expect": r'"loss":'},
    "twinbench profile --preset small train.batch=8 train.seq_len=256 train.steps=8": {"expect": r"aten::"},
    "twinbench-micro --benchmark_filter=/tiny --benchmark_repetitions=5 --benchmark_out=micro.json": {
        "small": "--benchmark_min_time=0.01", "expect": r"tiny"},
    "twinbench db import-micro micro.json": {"expect": r"micro"},

    "twinbench run --case 01_base --reduced --variants functional,module,eager,compiled,linen,nnx": {
        "small": SMALL, "expect": r"nnx vs functional"},
    "twinbench report nway --reference functional": {"expect": r"nway\.html"},
    "twinbench matrix --cases '0[14]*' --reduced --variants linen,nnx --repeats 2": {
        "small": SMALL, "expect": r"== 04_int8 \(median of 2 repeats\)"},
    "twinbench report pair --a linen --b nnx": {"expect": r"index\.html"},

    "git checkout main     && bash ci/build.sh && twinbench matrix --reduced --repeats 3": {
        "instead": "twinbench matrix --reduced --cases '0[1-4]*' --repeats 2 --branch main " + SMALL,
        "why": "one checkout here: the branch label a checkout of main would record, on this build; four of "
               "the eight cases, two repeats, to keep the walk within minutes",
        "expect": r"== 04_int8"},
    "git checkout my-topic && bash ci/build.sh && twinbench matrix --reduced --repeats 3": {
        "instead": "twinbench matrix --reduced --cases '0[1-4]*' --repeats 2 --branch my-topic " + SMALL,
        "why": "as above, for the topic branch",
        "expect": r"== 04_int8"},
    "twinbench report pair": {"expect": r"index\.html"},
    "twinbench report branch --baseline main --candidate my-topic": {"expect": r"branch-my-topic-vs-main\.html"},
    "twinbench compare --baseline main --candidate my-topic --fail-on-regression": {
        "code": (0, 1), "expect": r"^## twinbench: `my-topic` vs `main`"},
    "twinbench ab --a ../main/build --b build --case 01_base --reduced": {
        "instead": "twinbench ab --a {bin} --b {bin} --case 01_base --reduced --max-rounds 3 " + SMALL.replace(" --no-progress", ""),
        "why": "one build here: an A/A of it",
        "expect": r"^verdict: "},
    "twinbench bisect --good v1 --bad main --case 01_base": {
        "instead": "cd bisect-repo && {bin} bisect --good v1 --bad main --case 01_base --build 'sh build.sh' "
                   "--alpha 0.01 --seed 5 --db ../twinbench.db " + SMALL.replace(" --no-progress", ""),
        "why": "a test repository (ci/bisect_repo.sh: 4 commits, commit 2 makes steps 11x slower) whose "
               "build wraps this binary",
        "expect": r"First bad commit: [0-9a-f]{9} \"commit 2"},
    "twinbench report nightly --days 30": {"expect": r"nightly\.html"},
    "twinbench serve": {"serve": "--listen 127.0.0.1:0", "expect": r"<title>twinbench · index</title>"},

    "twinbench matrix --reduced --shard 2/3 --group nightly-42 --db postgresql://runner@db/twinbench": {
        "pg": True, "small": SMALL, "expect": r"== "},
    "twinbench db push twinbench.db --into postgresql://runner@db/twinbench": {"pg": True, "expect": r"pushed|runs"},

    "twinbench import maxtext_linen.log --case 04_int8 --variant linen": {"expect": r"imported as run import-"},
    "twinbench import maxtext_nnx.log --case 04_int8 --variant nnx": {"expect": r"imported as run import-"},
    "twinbench report pair --a linen --b nnx --format markdown": {
        "expect": r"\| MaxView Avg s/step \| 3\.5694 \| 3\.4714 \|"},
}


def readme_commands(readme):
    """The command lines of the README's indented blocks, in order, comments removed."""
    out = []
    for line in open(readme, encoding="utf-8"):
        if not line.startswith("    ") or line.startswith("     "):
            continue
        text = line.strip()
        if not re.match(r"^(build|build-cuda|bash|git|sqlite3|TWINBENCH_TORCH_PYTHON)\b", text):
            continue  # an example's output, not a command
        text = re.sub(r"\s+#.*$", "", text)  # the comment
        text = text.replace("build/harness/twinbench", "twinbench").replace("build/twinbench-micro", "twinbench-micro")
        out.append(text)
    return out


def pg_database(name):
    """A fresh database on the test cluster, or None without one."""
    state = os.environ.get("TWINBENCH_TEST_PG_FILE")
    if not state or not os.path.exists(state):
        return None
    admin = open(state).read().strip()
    subprocess.run(["psql", admin, "-q", "-c", f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"], check=True,
                   capture_output=True)
    subprocess.run(["psql", admin, "-q", "-c", f"CREATE DATABASE {name}"], check=True, capture_output=True)
    path = admin.index("/", admin.index("://") + 3)
    query = admin.find("?", path)
    return admin[:path + 1] + name + (admin[query:] if query >= 0 else "")


def serve_once(shell, cwd, env):
    """Starts a server, fetches its index from the URL it prints, stops it (SIGTERM): its
    exit code, and its output followed by the index's HTML as stdout."""
    proc = subprocess.Popen("exec " + shell, shell=True, cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    first = proc.stdout.readline()
    page = ""
    url = re.search(r"http://\S+/", first)
    if url:
        with urllib.request.urlopen(url.group(0), timeout=120) as r:
            page = r.read().decode()
    proc.terminate()
    out, err = proc.communicate(timeout=60)
    return subprocess.CompletedProcess(shell, proc.returncode, first + out + page, err)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--micro", required=True)
    ap.add_argument("--readme", default=os.path.join(SOURCE, "README.md"))
    ap.add_argument("--keep", action="store_true", help="keep the scratch directory")
    a = ap.parse_args()
    commands = readme_commands(a.readme)
    unknown = [c for c in commands if c not in WALK]
    stale = [c for c in WALK if c not in commands]
    if unknown or stale:
        for c in unknown:
            print(f"readme_walk: a README command the walk does not know (add it to WALK): {c}")
        for c in stale:
            print(f"readme_walk: WALK has a command the README no longer shows (remove it): {c}")
        return 1

    scratch = tempfile.mkdtemp(prefix="twinbench-readme-")
    # TWINBENCH_WHY_RUNS=0: no profiled pairs after a decisive verdict (docs/verdicts.md §15); whether a
    # reduced run decides on a loaded CI host is chance, and its why would add a minute at random.
    env = dict(os.environ, TWINBENCH_CASES=os.path.join(SOURCE, "cases"), TWINBENCH_UNDER_TEST=a.bin,
               TWINBENCH_WHY_RUNS="0")
    env.pop("TWINBENCH_DB", None)
    shutil.copy(os.path.join(SOURCE, "README.md"), scratch)
    for log in ("maxtext_linen.log", "maxtext_nnx.log"):
        shutil.copy(os.path.join(SOURCE, "tests", "data", "ingest", log), scratch)
    repo = os.path.join(scratch, "bisect-repo")
    subprocess.run(["bash", os.path.join(SOURCE, "ci", "bisect_repo.sh"), repo, "4", "2", "1000"], check=True,
                   capture_output=True)
    subprocess.run(["git", "-C", repo, "tag", "v1", "HEAD~3"], check=True)
    pg = pg_database(f"readme_walk_{os.getpid()}")

    failures, started = 0, time.time()
    for command in commands:
        entry = WALK[command]
        if "skip" in entry:
            print(f"SKIP  {command}\n      ({entry['skip']})")
            continue
        if entry.get("pg") and not pg:
            print(f"SKIP  {command}\n      (no PostgreSQL test cluster: $TWINBENCH_TEST_PG_FILE)")
            continue
        shell = entry.get("instead", command + (" " + entry["small"] if "small" in entry else ""))
        if pg:
            shell = shell.replace("postgresql://runner@db/twinbench", f"'{pg}'")
        shell = shell.replace("{bin}", a.bin)
        shell = re.sub(r"(^|&& )twinbench-micro\b", lambda m: m.group(1) + a.micro, shell)
        shell = re.sub(r"(^|&& )twinbench\b", lambda m: m.group(1) + a.bin, shell)
        t0 = time.time()
        if "serve" in entry:
            p = serve_once(shell + " " + entry["serve"], scratch, env)
        else:
            p = subprocess.run(shell, shell=True, cwd=scratch, env=env, capture_output=True, text=True)
        seconds = time.time() - t0
        codes = entry.get("code", 0)
        codes = codes if isinstance(codes, tuple) else (codes,)
        found = re.search(entry["expect"], p.stdout + "\n" + p.stderr, re.M)
        ok = p.returncode in codes and found
        failures += not ok
        print(f"{'ok   ' if ok else 'FAIL '} {command}\n      exit {p.returncode}, {seconds:.1f} s"
              + (f"; instead: {entry['why']}" if "instead" in entry else "")
              + (f"; matched: {found.group(0)[:100]!r}" if found else f"; expected /{entry['expect']}/"))
        if not ok:
            print("      --- stdout (tail) ---\n" + "\n".join(p.stdout.splitlines()[-15:]))
            print("      --- stderr (tail) ---\n" + "\n".join(p.stderr.splitlines()[-15:]))
    print(f"readme_walk: {len(commands)} commands, {failures} failed, {time.time() - started:.0f} s")
    if not a.keep and failures == 0:
        shutil.rmtree(scratch, ignore_errors=True)
    else:
        print(f"readme_walk: scratch kept in {scratch}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
