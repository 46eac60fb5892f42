#!/usr/bin/env python3
"""The README is a test (issue 43): every command example of README.md, in the
README's order, run against the built binaries in a scratch directory, each
held to one exact exit code (for `compare --fail-on-regression`, the one its own
output implies) and to lines of its output that another outcome would not print
(the tables of each case it ran and nothing else in their place, the runs it
stored, exact counts where the example fixes them).

    tests/integration/readme_walk.py --bin build/harness/twinbench --micro build/twinbench-micro

Every command of the README's example blocks (indented or fenced; a block whose
first line is a command holds commands of any shape: VAR=value prefixes, `cd X &&
...`, a `$ ` prompt, lines continued with a backslash; --self-test proves the
recogniser on each) must have an entry in WALK below, and every entry must still
be in the README: a new example, or one that changed, fails the walk until this
table says how to check it. An entry says how the walk runs the command:

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
the ctest fixture pg_cluster); without it those two are reported as skipped, and
under CI (CI set) as failed.
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


def regressions_exit_code(output):
    """The exit code `compare --fail-on-regression` owes its own output: 1 when its heading counts
    a regression, else 0 (which verdict tiny runs on a shared host get is chance; the code is not)."""
    m = re.search(r"^## twinbench: `[^`]+` vs `[^`]+` — (\d+) regressions?$", output, re.M)
    return 1 if m and int(m.group(1)) > 0 else 0 if m else -1  # no heading: no code is right


def case_tables(*cases, repeats=None):
    """A console table's heading line for each case, and nothing else in its place."""
    title = "" if repeats is None else rf" \(median of {repeats} repeats\)"
    return [rf"^== {c}{title} ==$" for c in cases]

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

    "twinbench list --keys": {"expect": [r"requires\.memory_gb", r"^  small +d=512 L=4 H=8 KV=8 hd=64 mlp=1536 V=8192 +params "
                                                                    r"22,024,704$"]},
    "twinbench plan --case 06_1b": {"expect": r"1,104,218,112|1104218112"},
    "twinbench plan --preset 1b train.batch=1 train.seq_len=2048 --json": {
        "expect": [r'"case": "preset:1b"', r'"params": 1104218112,', r'"tflops_per_step_per_device": 13\.587']},
    "twinbench run --case 01_base,02_bf16 --reduced": {
        "small": SMALL, "expect": case_tables("01_base", "02_bf16") + [r"^4 runs stored in twinbench\.db \(group "]},
    "twinbench matrix --cases '0[1-3]*' --reduced --repeats 3 --branch my-feature": {
        "small": SMALL,
        "expect": case_tables("01_base", "02_bf16", "03_dropout", repeats=3) + [r"^18 runs stored in twinbench\.db"]},
    "twinbench run --case 08_ddp": {
        "small": SMALL, "expect": case_tables("08_ddp") + [r"^Parameters +22024704 +22024704 .*no change$",
                                                           r"^2 runs stored in twinbench\.db"]},
    "twinbench run --case 08_ddp dist.shard=zero3 train.remat=full": {
        "small": SMALL, "expect": case_tables("08_ddp") + [r"^2 runs stored in twinbench\.db"]},
    "twinbench plan --case 07_8b --devices 8 --device-memory 80GiB": {"expect": r"fits a GPU with 80\.0 GiB: yes"},
    "twinbench run --case 01_base --nproc 2": {
        "small": SMALL + " --oversubscribe", "expect": case_tables("01_base") + [r"^2 runs stored in twinbench\.db"]},
    # The header and exactly ten runs, newest first.
    "twinbench runs --limit 10": {"expect": r"^RUN +GROUP +CASE .*\n(?:[0-9a-f-]{36}  .*\n){10}(?![0-9a-f-]{36}  )"},
    'sqlite3 twinbench.db "SELECT case_name, variant, status FROM runs"': {"expect": r"01_base\|functional\|completed"},
    "twinbench weights export --preset tiny --variant module --out w.safetensors": {
        "expect": r"^wrote 21 tensors \(131,392 parameters\) to w\.safetensors$"},
    "twinbench weights inspect w.safetensors": {"expect": r"config model\.preset = tiny"},
    "twinbench data make-shard --text README.md --out text.bin": {"expect": r"^wrote [1-9]\d* byte tokens to text\.bin$"},
    "twinbench eval --preset tiny --variant functional --weights w.safetensors --tokens text.bin --json": {
        "expect": r'^\{"loss":[0-9.]+,"variant":"functional","batch":\d+,"seq_len":\d+,"tokens":\d+\}$'},
    "twinbench profile --preset small train.batch=8 train.seq_len=256 train.steps=8": {
        "small": "train.batch=2 train.seq_len=64 train.steps=4",
        "expect": [r"^GEMM \(projections, logits\) +[0-9.]+ +[0-9.]+% +[0-9.]+ +[0-9.]+%$",
                   r"^top 12 ops of functional by self time$"]},
    "twinbench-micro --benchmark_filter=/tiny --benchmark_repetitions=5 --benchmark_out=micro.json": {
        "small": "--benchmark_min_time=0.01",
        "expect": r"^forward/functional/tiny/real_time_mean +[0-9.]+ (ns|us|ms) +[0-9.]+ (ns|us|ms) +5 "},
    "twinbench db import-micro micro.json": {
        "expect": r"^micro\.json: [1-9]\d* runs added, 0 already present, [1-9]\d* steps \(group micro-[0-9a-f]+\)$"},

    "twinbench run --case 01_base --reduced --variants functional,module,eager,compiled,linen,nnx": {
        "instead": "twinbench run --case 01_base --reduced --variants functional,module,eager,linen,nnx " + SMALL,
        "why": "torch.compile's first compile takes a minute here; the frameworks suite runs compiled against the "
               "others",
        "expect": [r"eager vs functional", r"nnx vs functional"]},
    "twinbench report nway --reference functional": {"expect": r"nway\.html"},
    "twinbench matrix --cases '0[14]*' --reduced --variants linen,nnx --repeats 2": {
        "instead": "twinbench matrix --cases '01*' --reduced --variants linen,nnx --repeats 2 " + SMALL,
        "why": "one case: each JAX run starts an interpreter (about 10 s), and 04_int8's table is the same code",
        "expect": case_tables("01_base", repeats=2) + [r"^4 runs stored in twinbench\.db"]},
    "twinbench report pair --a linen --b nnx": {"expect": r"index\.html"},

    "git checkout main     && bash ci/build.sh && twinbench matrix --reduced --repeats 3": {
        "instead": "twinbench matrix --reduced --cases '0[12]*' --repeats 2 --branch main " + SMALL,
        "why": "one checkout here: the branch label a checkout of main would record, on this build; two of "
               "the eight cases, two repeats, to keep the walk within minutes",
        "expect": case_tables("01_base", "02_bf16", repeats=2) + [
            r"^8 runs stored in twinbench\.db"]},
    "git checkout my-topic && bash ci/build.sh && twinbench matrix --reduced --repeats 3": {
        "instead": "twinbench matrix --reduced --cases '0[12]*' --repeats 2 --branch my-topic " + SMALL,
        "why": "as above, for the topic branch",
        "expect": case_tables("01_base", "02_bf16", repeats=2) + [
            r"^8 runs stored in twinbench\.db"]},
    "twinbench report pair": {"expect": r"index\.html"},
    "twinbench report branch --baseline main --candidate my-topic": {"expect": r"branch-my-topic-vs-main\.html"},
    "twinbench compare --baseline main --candidate my-topic --fail-on-regression": {
        "code": regressions_exit_code, "expect": r"^## twinbench: `my-topic` vs `main` — \d+ regressions?$"},
    "twinbench ab --a ../main/build --b build --case 01_base --reduced": {
        "instead": "twinbench ab --a {bin} --b {bin} --case 01_base --reduced --max-rounds 3 " + SMALL.replace(" --no-progress", ""),
        "why": "one build here: an A/A of it",
        "expect": r"^verdict: "},
    "twinbench bisect --good v1 --bad main --case 01_base": {
        "instead": "cd bisect-repo && {bin} bisect --good v1 --bad main --case 01_base --build 'sh build.sh' "
                   "--alpha 0.01 --seed 5 --db ../twinbench.db model.preset=tiny " + SMALL.replace(" --no-progress", ""),
        "why": "a test repository (ci/bisect_repo.sh: the good end and 2 commits, the last makes steps 11x slower) whose "
               "build wraps this binary; the tiny model, as the bisect tests use (01_base's own took 150 s of CI's walk)",
        "expect": r"First bad commit: [0-9a-f]{9} \"commit 2"},
    "twinbench report nightly --days 30": {"expect": r"nightly\.html"},
    "twinbench serve": {"serve": "--listen 127.0.0.1:0", "expect": r"<title>twinbench · index</title>"},

    # The second of three parts of the eight cases (whole cases, sorted: docs/fleet.md), stored on the server.
    "twinbench matrix --reduced --shard 2/3 --group nightly-42 --db postgresql://runner@db/twinbench": {
        "pg": True, "small": SMALL,
        "expect": case_tables("02_bf16", "05_fp8", "08_ddp") + [
            r"^shard 2/3 \(--shard\): 3 of 8 cases: 02_bf16, 05_fp8, 08_ddp$",
            r"^6 runs stored in postgresql://\S+ \(group nightly-42\)$"]},
    "twinbench db push twinbench.db --into postgresql://runner@db/twinbench": {
        "pg": True, "expect": r"^pushed twinbench\.db into postgresql://\S+: [1-9]\d* runs added \([1-9]\d* steps\), "
                              r"0 already there, 0 still running \(not pushed\), 0 calibrations; 0 alerts added \(0 events, "
                              r"0 notifications\), 0 already there; in [0-9.]+ s$"},

    "twinbench import maxtext_linen.log --case 04_int8 --variant linen": {"expect": r"imported as run import-"},
    "twinbench import maxtext_nnx.log --case 04_int8 --variant nnx": {"expect": r"imported as run import-"},
    "twinbench report pair --a linen --b nnx --format markdown": {
        "expect": r"\| MaxView Avg s/step \| 3\.5694 \| 3\.4714 \|"},
}


# Words that start a command whatever PATH holds: shell builtins and the project's binaries.
COMMAND_WORDS = {"cd", "export", "source", ".", "env", "time", "sudo", "twinbench", "twinbench-micro"}
ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=(\$\([^)]*\)|'[^']*'|\"[^\"]*\"|\S*)\s+")


def is_command(text):
    """Whether a line of an example block is a command (else a line of output): its first word,
    after VAR=value assignments and a `$ ` prompt, is a builtin or one of the project's binaries,
    a path into the checkout or its build folders, or a program on PATH."""
    text = text.strip()
    if text.startswith("$ "):
        text = text[2:]
    while (m := ASSIGNMENT.match(text)):
        text = text[m.end():]
    words = text.split()
    if not words:
        return False
    word = words[0]
    if word in COMMAND_WORDS or word.startswith(("./", "../", "/", "build/", "build-cuda/", ".venv/")):
        return True
    if "/" in word:
        return os.path.exists(os.path.join(SOURCE, word))
    return shutil.which(word) is not None


def example_blocks(text):
    """The README's example blocks in order, each a list of lines: indented (4 spaces) blocks
    and fenced (```) ones."""
    blocks, current, fenced = [], [], False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            if current:
                blocks.append(current)
            current, fenced = [], not fenced
            continue
        if fenced:
            current.append(line)
        elif line.startswith("    ") and line.strip():
            current.append(line[4:])
        elif current and not line.strip() and not fenced:
            blocks.append(current)
            current = []
        elif current:
            blocks.append(current)
            current = []
    if current:
        blocks.append(current)
    return blocks


def readme_commands(readme=None, text=None):
    """The commands of the README's example blocks, in order: a block whose first line is a
    command holds commands (any shape: VAR=value prefixes, `cd X && ...`, a `$ ` prompt,
    lines continued with a backslash), every other block is an example's output. Comments
    removed, the build folders' binaries named as a user on PATH would."""
    text = text if text is not None else open(readme, encoding="utf-8").read()
    out = []
    for block in example_blocks(text):
        if not is_command(block[0]):
            continue  # an example's output
        joined = []
        for line in block:
            if joined and joined[-1].endswith("\\"):
                joined[-1] = joined[-1][:-1].rstrip() + " " + line.strip()
            else:
                joined.append(line.strip())
        for line in joined:
            line = line[2:] if line.startswith("$ ") else line
            line = re.sub(r"\s+#.*$", "", line)  # the comment
            line = line.replace("build/harness/twinbench", "twinbench").replace("build/twinbench-micro",
                                                                               "twinbench-micro")
            if line:
                out.append(line)
    return out


def self_test():
    """The recogniser knows every shape of command a README example may take."""
    sample = """Text.

    build/harness/twinbench list --keys        # a comment
    FOO=1 BAR=$(pwd) build/harness/twinbench run \\
        --case 01_base
    cd sub && build/harness/twinbench runs
    sqlite3 twinbench.db "SELECT 1"

    == 01_base (median of 3 repeats) ==
    Metric                functional           module
    Tok/s                      844.9            817.1

```sh
$ python3 ci/check_layers.py
git status
```

    | Metric | linen | nnx |
"""
    expected = ["twinbench list --keys", "FOO=1 BAR=$(pwd) twinbench run --case 01_base", "cd sub && twinbench runs",
                'sqlite3 twinbench.db "SELECT 1"', "python3 ci/check_layers.py", "git status"]
    got = readme_commands(text=sample)
    if got != expected:
        print(f"readme_walk self-test: recognised {got}\n  expected {expected}")
        return 1
    print(f"readme_walk self-test: {len(expected)} commands of {len(expected)} shapes recognised, no output line")
    return 0


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
    ap.add_argument("--bin")
    ap.add_argument("--micro")
    ap.add_argument("--readme", default=os.path.join(SOURCE, "README.md"))
    ap.add_argument("--keep", action="store_true", help="keep the scratch directory")
    ap.add_argument("--self-test", action="store_true", help="check the command recogniser on every shape, and exit")
    ap.add_argument("--from", dest="first", type=int, default=0,
                    help="start at the README's command number N (0-based; debugging: later ones may need earlier ones)")
    a = ap.parse_args()
    if a.self_test:
        return self_test()
    if not a.bin or not a.micro:
        ap.error("--bin and --micro are required")
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
    subprocess.run(["bash", os.path.join(SOURCE, "ci", "bisect_repo.sh"), repo, "3", "2", "1000"], check=True,
                   capture_output=True)
    subprocess.run(["git", "-C", repo, "tag", "v1", "HEAD~2"], check=True)
    pg = pg_database(f"readme_walk_{os.getpid()}")

    failures, started = 0, time.time()
    for command in commands[a.first:]:
        entry = WALK[command]
        if "skip" in entry:
            print(f"SKIP  {command}\n      ({entry['skip']})")
            continue
        if entry.get("pg") and not pg:
            if os.environ.get("CI"):  # CI runs every example: a missing cluster is a failure there
                failures += 1
                print(f"FAIL  {command}\n      (no PostgreSQL test cluster under CI: $TWINBENCH_TEST_PG_FILE unset; "
                      "run the walk through ctest, fixture pg_cluster)")
            else:
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
        output = p.stdout + "\n" + p.stderr
        with open(os.path.join(scratch, f"walk-{commands.index(command):02d}.out"), "w") as f:  # kept on failure
            f.write(f"$ {shell}\nexit {p.returncode}\n--- stdout\n{p.stdout}\n--- stderr\n{p.stderr}")
        code = entry.get("code", 0)
        if callable(code):
            code = code(output)  # the exit code the output itself says the command must end with
        patterns = entry["expect"] if isinstance(entry["expect"], list) else [entry["expect"]]
        found = [re.search(pattern, output, re.M) for pattern in patterns]
        missing = [pattern for pattern, f in zip(patterns, found) if not f]
        ok = p.returncode == code and not missing
        failures += not ok
        print(f"{'ok   ' if ok else 'FAIL '} {command}\n      exit {p.returncode} (expected {code}), {seconds:.1f} s"
              + (f"; instead: {entry['why']}" if "instead" in entry else "")
              + (f"; matched: {found[0].group(0)[:100]!r}" + (f" and {len(found) - 1} more" if len(found) > 1 else "")
                 if not missing else f"; expected /{missing[0]}/"))
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
