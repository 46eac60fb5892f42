#!/usr/bin/env python3
"""The nightly change-point campaign (issue #39, docs/verdicts.md §14): series of
nightly values with planted steps and quiet ones, judged by twinbench's detector
(harness/stats/changepoint.h, through the twinbench_changepoints tool) and by
Apache Otava (otava.analysis.compute_change_points, its default significance and a
stricter one) on exactly the same series. A count, not a timing: it may run on a
busy machine.

Series: `--nights` nights (100) of level 1 with Gaussian relative noise of 1% and
3% per night (3%: the run-to-run noise of a shared CPU host measured in issue #39;
a night's value is the median of its runs); a step of +-3%, 5% or 10% (half of the
series up, half down) from a night drawn uniformly in [5, nights - 5], or none;
and quiet series whose 3% noise has heavy tails (Student t, 3 degrees of freedom).
`--series` per cell, seeded (Python's random.Random, `--seed`: the same series on
every Python 3).

Scores: a change point within 5 nights of the planted night is found (the closest
one, once); every other change point is a false alarm. Precision = found / all
points (planted cells); recall = series whose step was found; false alarms per
100 series-months (a series-month is 30 nights); night error = mean |night found -
night planted| over the found ones.

Two ways of running, both scored:
  retrospective  each whole series analysed once;
  nightly        replayed as a nightly job sees it: nights 1..20 at once, then one
                 night at a time (twinbench: update_change_points, which keeps its
                 points; Otava: compute_change_points on the nights so far, each
                 night). An alarm is a point at a night more than 5 nights from
                 every earlier alarm; delay = the night it was raised - the
                 planted night.

    ci/campaigns/nightly_campaign.sh            (builds the tool, the venv, runs this)
    nightly_campaign.py --detector build/tests/twinbench_changepoints [--series 300]
        [--alphas 0.01,0.001] [--otava-pvalues 0.001,0.00001] [--no-otava] [--no-nightly]
        [--otava-retrospective-only] [--json out.json] [--check]
--check (the small version ctest runs) asserts the twinbench figures a correct
detector must reach and exits 1 otherwise.
"""
import argparse
import json
import math
import os
import random
import subprocess
import sys
import time

NOISES = (0.01, 0.03)
STEPS = (0.0, 0.03, 0.05, 0.10)
# Plus quiet series with heavy tails: Student t with 3 degrees of freedom scaled to
# a 3% standard deviation (Otava's t-test assumes normal nights).
HEAVY = (0.03, "t3")
MATCH_NIGHTS = 5
FIRST_NIGHTLY = 20
EDGE = 5


def t3(rng):
    """Student t with 3 degrees of freedom, scaled to standard deviation 1."""
    chi2 = sum(rng.gauss(0, 1) ** 2 for _ in range(3))
    return rng.gauss(0, 1) / math.sqrt(chi2 / 3) / math.sqrt(3)


def make_cells(nights, series, seed):
    """Every cell's series: {"noise", "tails", "step", "series": [{"id", "values", "at"}]}."""
    cells = []
    grid = [(noise, "normal", step) for noise in NOISES for step in STEPS] + [(HEAVY[0], HEAVY[1], 0.0)]
    for noise, tails, step in grid:
        rng = random.Random(f"{seed}/{noise}/{step}" + ("" if tails == "normal" else f"/{tails}"))
        draw = (lambda: rng.gauss(0, 1)) if tails == "normal" else (lambda: t3(rng))
        rows = []
        for i in range(series):
            values = [1 + noise * draw() for _ in range(nights)]
            at = None
            if step > 0:
                at = rng.randint(EDGE, nights - EDGE)
                sign = 1 if i % 2 == 0 else -1
                values[at:] = [v * (1 + sign * step) for v in values[at:]]
            rows.append({"id": f"n{noise}-{tails}-s{step}-{i}", "values": values, "at": at})
        cells.append({"noise": noise, "tails": tails, "step": step, "series": rows})
    return cells


# ---------------------------------------------------------------- the detectors

def run_twinbench(detector, cells, alpha, nightly, extra_args=()):
    """{series id: [(index, raised_at)]} from one call of the tool over every series."""
    lines = "".join(json.dumps({"id": s["id"], "values": s["values"]}) + "\n" for c in cells for s in c["series"])
    args = [detector, "--alpha", repr(alpha), *extra_args]
    if nightly:
        args += ["--nightly", str(FIRST_NIGHTLY)]
    out = subprocess.run(args, input=lines, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"nightly_campaign.py: {' '.join(args)} failed ({out.returncode}): {out.stderr.strip()}")
    found = {}
    for line in out.stdout.splitlines():
        r = json.loads(line)
        found[r["id"]] = [(p["index"], p.get("raised_at", r["nights"])) for p in r["change_points"]]
    return found


def otava_points(values, pvalue):
    from otava.analysis import compute_change_points  # the venv's apache-otava (ci/requirements-nodeps.txt)
    points, _ = compute_change_points(values, max_pvalue=pvalue)  # window_len 50, min_magnitude 0: its defaults
    return [int(p.index) for p in points]


def run_otava(cells, pvalue, nightly):
    found = {}
    for c in cells:
        for s in c["series"]:
            v = s["values"]
            if not nightly:
                found[s["id"]] = [(i, len(v)) for i in otava_points(v, pvalue)]
                continue
            alarms = []
            for n in range(FIRST_NIGHTLY, len(v) + 1):
                for i in otava_points(v[:n], pvalue):
                    if all(abs(i - j) > MATCH_NIGHTS for j, _ in alarms):
                        alarms.append((i, n))
            found[s["id"]] = alarms
    return found


# ---------------------------------------------------------------- scores

def score(cell, found, nights):
    """Precision, recall, false alarms per 100 series-months, night error, delay."""
    points = hits = false = 0
    errors, delays = [], []
    for s in cell["series"]:
        pts = found[s["id"]]
        points += len(pts)
        hit = None
        if s["at"] is not None:
            near = [p for p in pts if abs(p[0] - s["at"]) <= MATCH_NIGHTS]
            if near:
                hit = min(near, key=lambda p: (abs(p[0] - s["at"]), p[1]))
        if hit:
            hits += 1
            errors.append(abs(hit[0] - s["at"]))
            delays.append(hit[1] - s["at"])
        false += len(pts) - (1 if hit else 0)
    n = len(cell["series"])
    months = n * nights / 30
    return {
        "series": n,
        "points": points,
        "precision": hits / points if points and cell["step"] > 0 else None,
        "recall": hits / n if cell["step"] > 0 else None,
        "false_alarms_per_100_series_months": 100 * false / months,
        "series_with_false_alarm": sum(1 for s in cell["series"] if len(found[s["id"]]) > (
            1 if s["at"] is not None and any(abs(p[0] - s["at"]) <= MATCH_NIGHTS for p in found[s["id"]]) else 0)),
        "night_error": sum(errors) / len(errors) if errors else None,
        "delay": sum(delays) / len(delays) if delays else None,
    }


def key(cell):
    return f"{cell['noise']}/{cell['tails']}/{cell['step']}"


def pct(x):
    return "—" if x is None else f"{100 * x:.1f}%"


def num(x):
    return "—" if x is None else f"{x:.2f}"


def table(title, results, cells, nightly):
    """One row per cell, one column per method: precision · recall · false alarms · night error (delay)."""
    methods = list(results)
    last = "delay" if nightly else "night error"
    lines = [f"**{title}** (each method: precision · recall · false alarms per 100 series-months · {last})", "",
             "| noise | step | " + " | ".join(methods) + " |", "|---|---|" + "---|" * len(methods)]
    for c in cells:
        noise = f"{100 * c['noise']:.0f}%" + ("" if c["tails"] == "normal" else f" ({c['tails']})")
        row = [noise, f"±{100 * c['step']:.0f}%" if c["step"] > 0 else "none"]
        for m in methods:
            r = results[m][key(c)]
            fa = num(r["false_alarms_per_100_series_months"])
            if c["step"] == 0:
                row.append(f"{fa} ({r['series_with_false_alarm']} of {r['series']} series)")
            else:
                row.append(" · ".join([pct(r["precision"]), pct(r["recall"]), fa,
                                       num(r["delay"] if nightly else r["night_error"])]))
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def check(results, cells, alpha, series, nightly):
    """What a correct detector must show at this size (the ctest's small campaign)."""
    problems = []
    for c in cells:
        r = results[key(c)]
        where = f"step {c['step']} at noise {c['noise']} ({c['tails']})"
        if c["step"] == 0 and not nightly:
            # Some alarm in at most alpha of quiet series, three binomial sd of margin.
            ceiling = alpha * series + 3 * math.sqrt(series * alpha * (1 - alpha)) + 1
            if r["series_with_false_alarm"] > ceiling:
                problems.append(f"quiet at noise {c['noise']}: {r['series_with_false_alarm']} series with an alarm > {ceiling:.1f}")
        clear = c["step"] >= 0.10 or (c["step"] >= 0.03 and c["noise"] == 0.01)
        if clear and r["recall"] < 0.9:
            problems.append(f"{where}: recall {r['recall']:.2f} < 0.9")
        if clear and not nightly and r["night_error"] is not None and r["night_error"] > 0.5:
            problems.append(f"{where}: night error {r['night_error']:.2f} > 0.5")
        if c["step"] >= 0.10 and nightly and r["delay"] is not None and r["delay"] > 8:
            problems.append(f"{where}: raised {r['delay']:.1f} nights after the step on average (> 8)")
        if clear and not nightly and r["precision"] is not None and r["precision"] < 0.9:
            problems.append(f"{where}: precision {r['precision']:.2f} < 0.9")
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--detector", required=True, help="the twinbench_changepoints binary")
    ap.add_argument("--detector-args", default="", help="more flags for it, e.g. '--min-change 0.02'")
    ap.add_argument("--series", type=int, default=300, help="series per cell")
    ap.add_argument("--nights", type=int, default=100)
    ap.add_argument("--seed", type=int, default=39)
    ap.add_argument("--alphas", default="0.01,0.001", help="twinbench's family-wise alpha per series")
    ap.add_argument("--otava-pvalues", default="0.001,0.00001", help="Otava's max_pvalue (0.001 is its default)")
    ap.add_argument("--no-otava", action="store_true")
    ap.add_argument("--no-nightly", action="store_true", help="retrospective analysis only")
    ap.add_argument("--otava-retrospective-only", action="store_true",
                    help="replay nightly for twinbench only (Otava's replay reruns it on every night: minutes)")
    ap.add_argument("--json", help="write every figure here")
    ap.add_argument("--results", help="write each table as a block of this results file (ci/campaign_results.py: "
                                      "docs/results/nightly_campaign.md, which docs/verdicts.md §14 quotes)")
    ap.add_argument("--command", default="", help="the command to stamp the results with (default: this one's)")
    ap.add_argument("--check", action="store_true", help="assert twinbench's figures (ctest's small campaign)")
    a = ap.parse_args()

    cells = make_cells(a.nights, a.series, a.seed)
    alphas = [float(x) for x in a.alphas.split(",")]
    pvalues = [] if a.no_otava else [float(x) for x in a.otava_pvalues.split(",")]
    modes = ["retrospective"] + ([] if a.no_nightly else ["nightly"])
    results = {mode: {} for mode in modes}
    seconds = {}
    for mode in modes:
        nightly = mode == "nightly"
        for alpha in alphas:
            name = f"twinbench α={alpha:g}"
            t = time.time()
            found = run_twinbench(a.detector, cells, alpha, nightly, a.detector_args.split())
            seconds[f"{mode} {name}"] = time.time() - t
            results[mode][name] = {key(c): score(c, found, a.nights) for c in cells}
        for p in pvalues if not (nightly and a.otava_retrospective_only) else []:
            name = f"Otava p={p:g}" + (" (default)" if p == 0.001 else "")
            t = time.time()
            found = run_otava(cells, p, nightly)
            seconds[f"{mode} {name}"] = time.time() - t
            results[mode][name] = {key(c): score(c, found, a.nights) for c in cells}

    print(f"{a.series} series per cell, {a.nights} nights, seed {a.seed}; a point within {MATCH_NIGHTS} nights of "
          f"the planted night finds it.\n")
    for mode in modes:
        title = ("Each series analysed once" if mode == "retrospective" else
                 f"Run nightly: nights 1..{FIRST_NIGHTLY} at once, then one night at a time")
        print(table(title, results[mode], cells, mode == "nightly"))
        print()
    print("CPU seconds per method (this machine, not a benchmark): " +
          ", ".join(f"{k} {v:.1f}" for k, v in seconds.items()), file=sys.stderr)

    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)
    if a.results:
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
        import campaign_results  # ci/campaign_results.py
        command = a.command or "python3 ci/campaigns/nightly_campaign.py " + " ".join(sys.argv[1:])
        for mode in modes:
            title = ("Each series analysed once" if mode == "retrospective" else
                     f"Run nightly: nights 1..{FIRST_NIGHTLY} at once, then one night at a time")
            lines = table(title, results[mode], cells, mode == "nightly").splitlines()
            note = f"{lines[0]}; {a.series} series per cell, {a.nights} nights, seed {a.seed}."
            campaign_results.write(a.results, mode, command, "\n".join(lines[2:]), note)
    if a.check:
        problems = []
        for alpha in alphas:
            for mode in modes:
                problems += [f"{mode} α={alpha:g}: {p}" for p in
                             check(results[mode][f"twinbench α={alpha:g}"], cells, alpha, a.series, mode == "nightly")]
        if problems:
            print("nightly_campaign.py --check failed:\n  " + "\n  ".join(problems), file=sys.stderr)
            return 1
        print("nightly_campaign.py --check: passed", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
