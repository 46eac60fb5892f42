#!/usr/bin/env python3
"""The layer rule of docs/architecture.md, checked on every #include "..." of
the source tree.

  1. Down only: a file includes its own folder and folders of lower layers.
  2. No sideways edges: two folders of the same layer are peers and include
     nothing of each other, except where this table orders them (the
     statistics kernel below the log formats below the metric catalogue below
     the store; `ab` below `bisect` below `serve` below the commands; `delivery`,
     a peer of `ab`, below the commands).
  3. Reports receive analyses: reports/ includes only reports/, the analysis
     value headers of harness/compare/ (ANALYSIS_VALUES), the metric catalogue
     (the one vocabulary every renderer reads) and the statistics kernel's
     quantiles (a chart's median is the verdicts' median), and never reaches the
     store, directly or through what it includes; nothing outside harness/cli/
     includes reports/.
  4. The statistics kernel (harness/stats/) includes only itself.
  5. Outside harness/store/ only the store's interface headers are included
     (store.h, run_record.h, alert_record.h, merge.h, push.h, export.h), never a backend's,
     directly or transitively.
  6. Rooms within a folder: harness/run/ is split by concern into sub-folders
     ordered bottom up (ROOMS); a file includes its own room and the rooms
     below it, never one above, and every file of the folder is in a room.
  7. Verdicts are assembled in harness/compare/: outside it and the kernel
     (harness/stats/), no file calls the statistics kernel's decision functions
     (KERNEL_DECISIONS: estimates, decisions, looks, families, change points),
     nor brings them in with a using-declaration.
Rules 3 and 5 follow includes transitively: a header that is allowed must not
carry in what the including file may not include itself.

    ci/check_layers.py [ROOT]     check the tree at ROOT (default: this checkout)
    ci/check_layers.py --self-test  plant violations in a scratch tree and
                                    prove the check fails on each (and passes without)
Exit 0 when the rule holds, 1 with one line per violation otherwise.
"""
import os
import re
import sys
import tempfile

# Folder prefix -> (rank, layer name). The longest matching prefix wins. A file
# may include a folder of lower rank, or its own folder; equal ranks are peers.
LAYERS = [
    ("models/", 0, "model"),
    ("variants/", 1, "model"),
    ("harness/base/", 2, "base"),
    ("harness/stats/", 3.0, "records"),
    ("harness/logs/", 3.1, "records"),
    ("harness/metrics/", 3.2, "records"),
    ("harness/store/", 3.3, "records"),
    ("harness/compare/", 4, "analysis"),
    ("harness/run/", 5, "work"),
    ("harness/ingest/", 5, "work"),
    ("reports/", 5, "work"),
    ("harness/cli/ab/", 6.0, "app"),
    ("harness/cli/delivery/", 6.0, "app"),
    ("harness/cli/bisect/", 6.1, "app"),
    ("harness/cli/micro/", 6.1, "app"),
    ("harness/cli/serve/", 6.15, "app"),
    ("harness/cli/", 6.2, "app"),
]
SOURCE_DIRS = ("models", "variants", "harness", "reports")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
STORE_INTERFACE = ("harness/store/store.h", "harness/store/run_record.h", "harness/store/alert_record.h",
                   "harness/store/merge.h", "harness/store/push.h", "harness/store/export.h")
# What an analysis hands a report: values, no means to load or compute more.
ANALYSIS_VALUES = tuple("harness/compare/" + h for h in (
    "pair_analysis.h", "branch_analysis.h", "nway_analysis.h", "nightly_analysis.h", "index_analysis.h",
    "session_analysis.h", "run_tables.h", "bisect.h", "comparison.h", "comparison_json.h", "verdict.h",
    "run_view.h", "family.h", "missing_data.h", "baseline.h", "triage.h", "explain_analysis.h",
    "profile_record.h", "run_analysis.h", "run_list.h", "alert_list.h", "alert_analysis.h"))
# Beside them: the metric catalogue (the one vocabulary every renderer reads: labels,
# formats) and the statistics kernel's quantiles (so that a chart's median is the
# verdicts' median; a box plot decides nothing).
# ... and the one percent-encoder of URLs (the server's links are rendered).
REPORT_MAY_INCLUDE = ANALYSIS_VALUES + ("harness/metrics/catalogue.h", "harness/stats/summary.h",
                                        "harness/base/url_coding.h")
# Headers no report may reach, however indirectly: the store itself and its backends.
REPORT_NEVER_REACHES = ("harness/store/store.h",)
# The rooms of a folder, bottom up (rule 6): the test hooks; the optimizers; plans and
# calibration; op and run profiles; the training core; data parallel; the executors
# and what runs them.
ROOMS = {
    "harness/run/": ("hooks/", "optim/", "plan/", "profile/", "train/", "dist/", "exec/"),
}
# The statistics kernel's functions that estimate or decide: only harness/compare/ (which
# assembles every verdict) and the kernel itself call them. Formatting (format_change),
# summaries (median, quantile) and the look plan (default_plan) are not decisions.
KERNEL_DECISIONS = (
    "estimate_paired", "estimate_paired_bootstrap", "estimate_unpaired", "decide", "decide_note",
    "inconclusive_note", "runs_needed", "runs_to_decide", "decides_with", "futile", "should_stop", "per_test_confidence",
    "look_alpha", "obrien_fleming_spent", "difference_paired", "difference_unpaired", "excludes_zero",
    "detect_change_points", "update_change_points", "best_split", "max_statistic_p_value", "mann_whitney_u",
    "min_achievable_p", "loss_parity")
DECISION_CALL = re.compile(r"\bstats::(" + "|".join(KERNEL_DECISIONS) + r")\s*\(")
DECISION_USING = re.compile(r"^\s*using\s+(namespace\s+(twinbench::)?stats\b|(twinbench::)?stats::(" +
                            "|".join(KERNEL_DECISIONS) + r")\b)")
DECIDES = ("harness/stats/", "harness/compare/")


def layer_of(path):
    best = None
    for prefix, rank, name in LAYERS:
        if path.startswith(prefix) and (best is None or len(prefix) > len(best[0])):
            best = (prefix, rank, name)
    return best


def room_of(path):
    """(folder, room index, room) of a file in a roomed folder; (folder, None, None) directly in it; None elsewhere."""
    for folder, rooms in ROOMS.items():
        if path.startswith(folder):
            rest = path[len(folder):]
            for i, room in enumerate(rooms):
                if rest.startswith(room):
                    return folder, i, room
            return folder, None, None
    return None


def room_violations(rel, n, inc):
    here, there = room_of(rel), room_of(inc)
    if here is None or there is None or here[0] != there[0] or here[1] is None or there[1] is None:
        return []
    if there[1] > here[1]:
        order = " < ".join(ROOMS[here[0]])
        return [f"{rel}:{n}: {here[0]}{here[2]} includes {inc} of {there[0]}{there[2]}, a room above it "
                f"(rooms of {here[0]}, bottom up: {order})"]
    return []


def sources(root):
    for top in SOURCE_DIRS:
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for f in sorted(files):
                if f.endswith((".h", ".cpp")):
                    yield os.path.relpath(os.path.join(dirpath, f), root).replace(os.sep, "/")


def includes_of(root, rel):
    """[(line, included path)] of a file's quoted includes; [] for a file not in the tree."""
    path = os.path.join(root, rel)
    if not os.path.isfile(path):
        return []
    out = []
    with open(path, encoding="utf-8", errors="replace") as src:
        for n, line in enumerate(src, 1):
            m = INCLUDE.match(line)
            if m:
                out.append((n, m.group(1)))
    return out


def code_lines(root, rel):
    """[(line, text)] of a file with // comments and string literals blanked out."""
    with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as src:
        for n, line in enumerate(src, 1):
            line = re.sub(r'"(\\.|[^"\\])*"', '""', line)
            yield n, line.split("//", 1)[0]


def kernel_decisions(root, rel):
    """Violations of rule 7 in one file: calls of the kernel's decision functions outside compare/ and stats/."""
    if rel.startswith(DECIDES):
        return []
    found = []
    for n, code in code_lines(root, rel):
        m = DECISION_CALL.search(code) or DECISION_USING.search(code)
        if m:
            found.append(f"{rel}:{n}: calls the statistics kernel's decision functions ({m.group(0).strip()}); "
                         "verdicts are assembled in harness/compare/ (docs/architecture.md)")
    return found


def closure(root, rel, cache):
    """Every header `rel` includes, directly or through other headers of the tree, with the chain to it."""
    if rel in cache:
        return cache[rel]
    cache[rel] = {}  # cycles end here
    found = {}
    for _, inc in includes_of(root, rel):
        if layer_of(inc) is None:
            continue
        found.setdefault(inc, [inc])
        for deeper, chain in closure(root, inc, cache).items():
            found.setdefault(deeper, [inc] + chain)
    cache[rel] = found
    return found


def violations(root):
    found = []
    cache = {}
    for rel in sources(root):
        here = layer_of(rel)
        if here is None:
            found.append(f"{rel}: not in any layer folder (docs/architecture.md)")
            continue
        room = room_of(rel)
        if room is not None and room[1] is None:
            found.append(f"{rel}: directly in {room[0]}, not in one of its rooms ({', '.join(ROOMS[room[0]])})")
        for n, inc in includes_of(root, rel):
            found.extend(room_violations(rel, n, inc))
            there = layer_of(inc)
            if there is None:
                continue  # generated or third-party header
            if rel.startswith("harness/stats/") and not inc.startswith("harness/stats/"):
                found.append(f"{rel}:{n}: the statistics kernel includes only harness/stats/ ({inc})")
            elif there[1] > here[1]:
                where = "higher " + there[2] if there[2] != here[2] else f"{there[0]}, above {here[0]} in the {here[2]}"
                found.append(f"{rel}:{n}: {here[2]} layer includes {inc} of the {where} layer")
            elif there[1] == here[1] and there[0] != here[0] and not (
                    rel.startswith("reports/") or inc.startswith("reports/")):
                found.append(f"{rel}:{n}: sideways: {here[0]} and {there[0]} are peers of the {here[2]} layer "
                             f"({inc}); move what both need below them")
            elif inc.startswith("reports/") and not rel.startswith(("reports/", "harness/cli/")):
                found.append(f"{rel}:{n}: only harness/cli/ may include reports/ ({inc})")
            elif rel.startswith("reports/") and not inc.startswith("reports/") and inc not in REPORT_MAY_INCLUDE:
                found.append(f"{rel}:{n}: reports/ receives analyses: it includes only their value headers, not {inc}")
            elif (inc.startswith("harness/store/") and not rel.startswith("harness/store/")
                  and inc not in STORE_INTERFACE):
                found.append(f"{rel}:{n}: outside harness/store/ only the store interface is included ({inc})")
        found.extend(kernel_decisions(root, rel))
        # The rules that a header may break on behalf of the file including it.
        for inc, chain in sorted(closure(root, rel, cache).items()):
            if len(chain) < 2:
                continue  # direct includes were checked above
            via = " -> ".join(chain)
            if rel.startswith("reports/") and inc in REPORT_NEVER_REACHES:
                found.append(f"{rel}: reports/ reaches the store through {via}")
            elif (inc.startswith("harness/store/") and not rel.startswith("harness/store/")
                  and inc not in STORE_INTERFACE and not any(c.startswith("harness/store/") for c in chain[:-1])):
                found.append(f"{rel}: reaches a store backend through {via}")
    return found


def self_test():
    with tempfile.TemporaryDirectory() as root:
        def write(rel, text):
            path = os.path.join(root, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(text)
        write("harness/store/store.h", '#include "harness/store/run_record.h"\n')
        write("harness/store/run_record.h", '#include "harness/base/records.h"\n')
        write("harness/base/records.h", "")
        write("harness/metrics/catalogue.h", '#include "harness/stats/trend.h"\n')
        write("harness/stats/trend.h", "")
        write("harness/compare/runs.h", '#include "harness/store/store.h"\n')
        write("harness/compare/run_view.h", '#include "harness/store/run_record.h"\n')
        write("harness/compare/pair_analysis.h", '#include "harness/compare/run_view.h"\n')
        write("reports/pair_report.h", '#include "harness/compare/pair_analysis.h"\n')
        write("harness/ingest/import_log.h", '#include "harness/store/store.h"\n')
        write("harness/run/exec/external.cpp", '#include "harness/base/records.h"\n')
        # The kernel's decisions where they belong, and only named in a comment elsewhere: fine.
        write("harness/compare/sequential.cpp", 'auto e = stats::estimate_paired(p, c);\nauto o = stats::decide(e, t, false);\n')
        write("harness/run/exec/adaptive.cpp", '// compare::SequentialTest calls stats::decide(e, t, false)\n'
                                               'auto s = stats::format_change(e);\nauto m = stats::median(v);\n')
        if violations(root):
            print("self-test: a clean tree was reported as violating:", violations(root))
            return 1
        planted = {
            "harness/store/bad.cpp": '#include "harness/compare/runs.h"\n',  # records -> analysis
            "harness/run/bad.cpp": '#include "reports/pair_report.h"\n',  # reports outside cli
            "reports/bad.cpp": '#include "harness/store/store.h"\n',  # a report opening the store
            "harness/stats/bad.cpp": '#include "harness/metrics/catalogue.h"\n',  # the kernel reading the catalogue
            "harness/compare/bad.cpp": '#include "harness/store/sqlite.h"\n',  # a backend past the interface
            "harness/run/sideways.cpp": '#include "harness/ingest/import_log.h"\n',  # a peer of the work layer
            "reports/computes.cpp": '#include "harness/compare/runs.h"\n',  # a report loading runs
            "harness/run/train/up.cpp": '#include "harness/run/exec/external.cpp"\n',  # a room including one above
            "harness/run/decides.cpp": 'const auto e = stats::estimate_paired(pairs, 0.99);\n',  # a verdict outside compare/
            "harness/cli/ab/decides.cpp": 'if (stats::decide (e, 0.03, false) == o) {}\n',
            "reports/decides.cpp": 'using twinbench::stats::runs_to_decide;\n',  # brought in to call unqualified
        }
        for rel, text in planted.items():
            write(rel, text)
        # A report through an allowed header that (in this planted tree) carries the store in.
        write("harness/compare/nightly_analysis.h", '#include "harness/compare/runs.h"\n')
        write("reports/nightly_report.h", '#include "harness/compare/nightly_analysis.h"\n')
        # A backend reached through another folder's header.
        write("harness/compare/leaky.h", '#include "harness/store/sqlite.h"\n')
        write("harness/run/transitive.cpp", '#include "harness/compare/leaky.h"\n')
        got = violations(root)
        expected = [("harness/store/bad.cpp", "higher"), ("harness/run/bad.cpp", "only harness/cli/"),
                    ("reports/bad.cpp", "only their value headers"), ("harness/stats/bad.cpp", "kernel"),
                    ("harness/compare/bad.cpp", "store interface"), ("harness/run/sideways.cpp", "sideways"),
                    ("reports/computes.cpp", "only their value headers"),
                    ("reports/nightly_report.h", "reaches the store through"),
                    ("harness/run/transitive.cpp", "reaches a store backend"),
                    ("harness/run/train/up.cpp", "a room above it"), ("harness/run/bad.cpp", "not in one of its rooms"),
                    ("harness/run/decides.cpp", "decision functions"), ("harness/cli/ab/decides.cpp", "decision functions"),
                    ("reports/decides.cpp", "decision functions")]
        missing = [(f, what) for f, what in expected if not any(v.startswith(f) and what in v for v in got)]
        if missing:
            print("self-test: planted violations not caught:", missing, "\ngot:", got)
            return 1
        wrongly = [v for v in got if v.startswith(("harness/compare/sequential.cpp", "harness/run/exec/adaptive.cpp"))]
        if wrongly:
            print("self-test: allowed calls reported as violations:", wrongly)
            return 1
        print("self-test: the check catches a lower layer including a higher one, reports/ outside cli/, a report "
              "including the store or a loading header, the statistics kernel including the catalogue, a backend "
              "past the interface, a sideways edge between peers, the store or a backend reached transitively, a room "
              "including a room above it, a file outside the rooms and the kernel's decision functions called (or "
              "brought in) outside harness/compare/:")
        for v in got:
            print("  " + v)
    return 0


def main(argv):
    if argv[1:2] == ["--self-test"]:
        return self_test()
    root = argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    found = violations(root)
    for v in found:
        print(v)
    if found:
        print(f"{len(found)} layer violation(s): see docs/architecture.md")
        return 1
    print("layer rule holds")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
