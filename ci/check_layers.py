#!/usr/bin/env python3
"""The layer rule of docs/architecture.md, checked on every #include "..." of
the source tree: a file includes only its own layer and the layers below it,
and nothing outside harness/cli/ (and reports/ itself) includes reports/.
Three more rules of the same table: reports/ never includes harness/store/
(reports receive loaded values; they never open a store); the statistics
kernel (harness/stats/) includes only itself (it never reads the metric
catalogue); and outside harness/store/ only the store's interface headers are
included (store.h, merge.h, push.h, export.h), never a backend's.

    ci/check_layers.py [ROOT]     check the tree at ROOT (default: this checkout)
    ci/check_layers.py --self-test  plant a violation in a scratch tree and
                                    prove the check fails on it (and passes without)
Exit 0 when the rule holds, 1 with one line per violation otherwise.
"""
import os
import re
import sys
import tempfile

# Folder prefix -> (layer rank, layer name); the longest matching prefix wins.
LAYERS = [
    ("models/", 0, "model"),
    ("variants/", 1, "model"),
    ("harness/base/", 2, "base"),
    ("harness/store/", 3, "records"),
    ("harness/stats/", 3, "records"),
    ("harness/metrics/", 3, "records"),
    ("harness/logs/", 3, "records"),
    ("harness/compare/", 4, "analysis"),
    ("harness/run/", 5, "work"),
    ("harness/ingest/", 5, "work"),
    ("reports/", 5, "work"),
    ("harness/cli/", 6, "app"),
]
SOURCE_DIRS = ("models", "variants", "harness", "reports")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
STORE_INTERFACE = ("harness/store/store.h", "harness/store/merge.h", "harness/store/push.h", "harness/store/export.h")


def layer_of(path):
    best = None
    for prefix, rank, name in LAYERS:
        if path.startswith(prefix) and (best is None or len(prefix) > len(best[0])):
            best = (prefix, rank, name)
    return best


def violations(root):
    found = []
    for top in SOURCE_DIRS:
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for f in sorted(files):
                if not f.endswith((".h", ".cpp")):
                    continue
                rel = os.path.relpath(os.path.join(dirpath, f), root).replace(os.sep, "/")
                here = layer_of(rel)
                if here is None:
                    found.append(f"{rel}: not in any layer folder (docs/architecture.md)")
                    continue
                with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as src:
                    for n, line in enumerate(src, 1):
                        m = INCLUDE.match(line)
                        if not m:
                            continue
                        inc = m.group(1)
                        there = layer_of(inc)
                        if there is None:
                            continue  # generated or third-party header
                        if there[1] > here[1]:
                            found.append(f"{rel}:{n}: {here[2]} layer includes {inc} of the higher {there[2]} layer")
                        elif inc.startswith("reports/") and not rel.startswith(("reports/", "harness/cli/")):
                            found.append(f"{rel}:{n}: only harness/cli/ may include reports/ ({inc})")
                        elif rel.startswith("reports/") and inc.startswith("harness/store/"):
                            found.append(f"{rel}:{n}: reports/ receives loaded values and never includes the store ({inc})")
                        elif rel.startswith("harness/stats/") and not inc.startswith("harness/stats/"):
                            found.append(f"{rel}:{n}: the statistics kernel includes only harness/stats/ ({inc})")
                        elif (inc.startswith("harness/store/") and not rel.startswith("harness/store/")
                              and inc not in STORE_INTERFACE):
                            found.append(f"{rel}:{n}: outside harness/store/ only the store interface is included ({inc})")
    return found


def self_test():
    with tempfile.TemporaryDirectory() as root:
        def write(rel, text):
            path = os.path.join(root, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(text)
        write("harness/store/store.h", '#include "harness/base/records.h"\n')
        write("harness/base/records.h", "")
        write("reports/pair_report.h", '#include "harness/compare/comparison.h"\n')
        write("harness/compare/comparison.h", '#include "harness/store/store.h"\n')
        if violations(root):
            print("self-test: a clean tree was reported as violating:", violations(root))
            return 1
        write("harness/store/bad.cpp", '#include "harness/compare/comparison.h"\n')  # records -> analysis
        write("harness/run/bad.cpp", '#include "reports/pair_report.h"\n')  # reports outside cli
        write("reports/bad.cpp", '#include "harness/store/store.h"\n')  # a report opening the store
        write("harness/stats/bad.cpp", '#include "harness/metrics/catalogue.h"\n')  # the kernel reading the catalogue
        write("harness/compare/bad.cpp", '#include "harness/store/sqlite.h"\n')  # a backend past the interface
        got = violations(root)
        if len(got) != 5:
            print("self-test: planted violations not all caught:", got)
            return 1
        print("self-test: the check catches a lower layer including a higher one, reports/ outside cli/, a report "
              "including the store, the statistics kernel including the catalogue and a backend past the interface:")
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
