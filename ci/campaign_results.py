#!/usr/bin/env python3
"""Campaign results files, and the check that the docs quote them as they are.

A measurement campaign (ci/campaigns/*) writes each table it prints into a
committed results file under docs/results/, as a named block that carries how
it was made: the command, the commit (with -dirty when the tree was), the host
and the date. The docs quote a block between two markers, and the check (ctest
`campaign_results_quoted`) fails when a quote differs from its block, names a
block that does not exist, or a block is quoted nowhere, or lacks its
provenance: a figure in the docs is the one a committed script wrote.

In a results file (written by `write`, never by hand):

    <!-- table: NAME -->
    command: `...` · commit: `...` · host: ... · date: ...

    | markdown | table |
    |---|---|
    <!-- /table -->

In a doc (README.md or docs/**/*.md), the quote of that block, verbatim:

    <!-- quote: docs/results/FILE.md#NAME -->
    command: `...` · commit: ...
    ...
    <!-- /quote -->

Usage:
    campaign_results.py write FILE NAME --command CMD [--table TABLE.md | --tsv TABLE.tsv] [--note TEXT]
        replace (or add) block NAME of FILE with the table (markdown, or a TSV whose first
        row is the header), stamped with CMD, the git commit of the source tree, this
        host and the UTC date; the other blocks of FILE stay
    campaign_results.py check [--root DIR]     the docs against the results files
    campaign_results.py self-test              the check fails on each kind of mismatch

A new campaign (or helper `stats`' own) needs nothing here: write its table with
`write`, quote the block in the docs with the markers above, and the check covers it.
"""
import argparse
import datetime
import os
import re
import socket
import subprocess
import sys
import tempfile

SOURCE = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
BLOCK = re.compile(r"<!-- table: ([\w.-]+) -->\n(.*?)<!-- /table -->", re.S)
QUOTE = re.compile(r"<!-- quote: ([\w./-]+\.md)#([\w.-]+) -->\n(.*?)<!-- /quote -->", re.S)
STAMP = re.compile(r"^command: `[^`]+` · commit: `[^`]+` · host: [^·]+ · date: \d{4}-\d{2}-\d{2}")
HEADER = ("<!-- Written by ci/campaign_results.py from the campaign named in each block: regenerate, never "
          "edit by hand. The docs quote these blocks verbatim (ctest campaign_results_quoted). -->\n")


def git(*args):
    p = subprocess.run(["git", "-C", SOURCE, *args], capture_output=True, text=True)
    return p.stdout.strip() if p.returncode == 0 else ""


def commit_label():
    commit = git("rev-parse", "--short=9", "HEAD") or "unknown"
    dirty = git("status", "--porcelain", "--untracked-files=no")
    return commit + ("-dirty" if dirty else "")


def host_label():
    cpu = ""
    try:
        for line in open("/proc/cpuinfo", encoding="utf-8"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    cores = os.cpu_count() or 0
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    return f"{socket.gethostname()} ({cpu or 'cpu'}, {cores} cores, load {load:.1f} at the end)"


def tsv_to_markdown(text):
    rows = [line.split("\t") for line in text.splitlines() if line.strip()]
    if not rows:
        raise SystemExit("campaign_results.py: the TSV table is empty")
    out = ["| " + " | ".join(rows[0]) + " |", "|" + "---|" * len(rows[0])]
    out += ["| " + " | ".join(cell.replace("|", "/") for cell in r) + " |" for r in rows[1:]]
    return "\n".join(out)


def blocks_of(text):
    return {m.group(1): m.group(2) for m in BLOCK.finditer(text)}


def write(path, name, command, table, note=""):
    if not re.fullmatch(r"[\w.-]+", name):
        raise SystemExit(f"campaign_results.py: block name {name!r}: letters, digits, '.', '-', '_' only")
    table = table.strip("\n")
    if not table.lstrip().startswith("|"):
        raise SystemExit("campaign_results.py: the table is not a markdown table")
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    stamp = f"command: `{command}` · commit: `{commit_label()}` · host: {host_label()} · date: {date}"
    body = stamp + "\n\n" + (note.strip() + "\n\n" if note.strip() else "") + table + "\n"
    block = f"<!-- table: {name} -->\n{body}<!-- /table -->"
    text = open(path, encoding="utf-8").read() if os.path.exists(path) else HEADER
    if re.search(rf"<!-- table: {re.escape(name)} -->\n", text):
        text = re.sub(rf"<!-- table: {re.escape(name)} -->\n.*?<!-- /table -->", lambda _: block, text, count=1,
                      flags=re.S)
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"campaign_results.py: {path}#{name} written ({table.count(chr(10)) - 1} rows)", file=sys.stderr)


def docs_of(root):
    out = [os.path.join(root, "README.md")]
    for base, _, files in os.walk(os.path.join(root, "docs")):
        if os.path.relpath(base, root).startswith(os.path.join("docs", "results")):
            continue
        out += [os.path.join(base, f) for f in sorted(files) if f.endswith(".md")]
    return [p for p in out if os.path.exists(p)]


def check(root):
    """Problems, one line each; empty when the docs quote every block as it is."""
    problems = []
    results_dir = os.path.join(root, "docs", "results")
    results = {}
    if os.path.isdir(results_dir):
        for f in sorted(os.listdir(results_dir)):
            if f.endswith(".md") and f != "README.md":
                rel = os.path.join("docs", "results", f)
                results[rel] = blocks_of(open(os.path.join(results_dir, f), encoding="utf-8").read())
                if not results[rel]:
                    problems.append(f"{rel}: no <!-- table: NAME --> block")
    quoted = set()
    for doc in docs_of(root):
        rel_doc = os.path.relpath(doc, root)
        text = open(doc, encoding="utf-8").read()
        opened = text.count("<!-- quote: ")
        found = list(QUOTE.finditer(text))
        if opened != len(found):
            problems.append(f"{rel_doc}: {opened} quote markers, {len(found)} well-formed quotes "
                            "(<!-- quote: docs/results/FILE.md#NAME --> ... <!-- /quote -->)")
        for m in found:
            target, name, body = m.group(1), m.group(2), m.group(3)
            line = text[:m.start()].count("\n") + 1
            where = f"{rel_doc}:{line}"
            if target not in results:
                problems.append(f"{where}: quotes {target}, which does not exist")
                continue
            if name not in results[target]:
                problems.append(f"{where}: quotes {target}#{name}, which has no such block "
                                f"(it has: {', '.join(results[target]) or 'none'})")
                continue
            quoted.add((target, name))
            if body.strip() != results[target][name].strip():
                a, b = body.strip().splitlines(), results[target][name].strip().splitlines()
                first = next((i for i in range(min(len(a), len(b))) if a[i] != b[i]), min(len(a), len(b)))
                problems.append(f"{where}: the quote of {target}#{name} differs from the file at its line "
                                f"{first + 1}:\n    doc:  {a[first] if first < len(a) else '(ends)'}\n"
                                f"    file: {b[first] if first < len(b) else '(ends)'}")
    for target, blocks in results.items():
        for name, body in blocks.items():
            if not STAMP.match(body.strip()):
                problems.append(f"{target}#{name}: no provenance line (command, commit, host, date) first")
            if (target, name) not in quoted:
                problems.append(f"{target}#{name}: quoted in no doc (quote it, or remove the block)")
    return problems, len(quoted)


def self_test():
    """Each kind of mismatch is a problem; a faithful quote is none."""
    stamp = "command: `x.sh` · commit: `abc` · host: h (cpu, 2 cores, load 0.1 at the end) · date: 2026-01-01 00:00 UTC"
    table = "| a | b |\n|---|---|\n| 1 | 2 |"
    block = f"<!-- table: t -->\n{stamp}\n\n{table}\n<!-- /table -->\n"
    quote = f"<!-- quote: docs/results/r.md#t -->\n{stamp}\n\n{table}\n<!-- /quote -->\n"
    cases = {
        "faithful": (block, quote, 0),
        "a changed figure": (block, quote.replace("| 1 |", "| 7 |"), 1),
        "a missing block": (block, quote.replace("#t", "#u"), 2),  # no such block, and t quoted nowhere
        "an unquoted block": (block + block.replace("table: t", "table: v"), quote, 1),
        "no provenance": (block.replace(stamp + "\n\n", ""), quote.replace(stamp + "\n\n", ""), 1),
        "a broken marker": (block, quote.replace("<!-- /quote -->", ""), 2),
    }
    failures = []
    for what, (results, doc, expected) in cases.items():
        with tempfile.TemporaryDirectory() as root:
            os.makedirs(os.path.join(root, "docs", "results"))
            open(os.path.join(root, "docs", "results", "r.md"), "w").write(results)
            open(os.path.join(root, "docs", "x.md"), "w").write("text\n" + doc)
            problems, _ = check(root)
            if len(problems) != expected:
                failures.append(f"{what}: {len(problems)} problems, expected {expected}: {problems}")
    # write() stamps and replaces a block in place.
    with tempfile.TemporaryDirectory() as root:
        path = os.path.join(root, "r.md")
        write(path, "t", "x.sh 1", table)
        write(path, "u", "x.sh 2", tsv_to_markdown("a\tb\n3\t4\n"))
        write(path, "t", "x.sh 3", table.replace("1", "5"))
        blocks = blocks_of(open(path).read())
        if list(blocks) != ["t", "u"] or "| 5 |" not in blocks["t"] or "x.sh 3" not in blocks["t"]:
            failures.append(f"write: {blocks}")
        if not all(STAMP.match(b.strip()) for b in blocks.values()):
            failures.append(f"write: a block without its stamp: {blocks}")
    for f in failures:
        print("campaign_results.py self-test: " + f, file=sys.stderr)
    print(f"campaign_results.py self-test: {len(cases) + 1 - len(failures)} of {len(cases) + 1} passed", file=sys.stderr)
    return 1 if failures else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="what", required=True)
    w = sub.add_parser("write")
    w.add_argument("file")
    w.add_argument("name")
    w.add_argument("--command", required=True, help="the command that made the table, as a user reruns it")
    source = w.add_mutually_exclusive_group(required=True)
    source.add_argument("--table", help="a file holding a markdown table ('-': stdin)")
    source.add_argument("--tsv", help="a TSV file whose first row is the header ('-': stdin)")
    w.add_argument("--note", default="", help="a sentence printed between the stamp and the table")
    c = sub.add_parser("check")
    c.add_argument("--root", default=SOURCE)
    sub.add_parser("self-test")
    a = ap.parse_args()
    if a.what == "write":
        read = lambda p: sys.stdin.read() if p == "-" else open(p, encoding="utf-8").read()
        table = read(a.table) if a.table else tsv_to_markdown(read(a.tsv))
        write(a.file, a.name, a.command, table, a.note)
        return 0
    if a.what == "check":
        problems, quotes = check(a.root)
        for p in problems:
            print("campaign_results.py: " + p)
        print(f"campaign_results.py: {quotes} quoted blocks, {len(problems)} problems")
        # A check that found nothing to check has checked nothing.
        return 1 if problems or quotes == 0 else 0
    return self_test()


if __name__ == "__main__":
    sys.exit(main())
