#!/usr/bin/env python3
"""Variance components of paired step times, from a twinbench store (issue #55).

Reads every completed run of a store and pairs them into replicates: the runs
of one group, case and repeat index, one per side (a side is named by the
run's variant, or by its branch label for `ab` sessions, where both sides run
one variant). A replicate is a lockstep duet when both of its runs recorded
`"pairing": "lockstep"` in their provenance, else a run-level pair.

Per replicate it computes the B/A estimate several ways, all as ln(B/A):
  med  ln(median of B's steady steps / median of A's)  (what the verdicts judge today)
  gm   mean over rounds of ln(b_i / a_i)   (lockstep only: the ratio of geometric means)
  mr   median over rounds of ln(b_i / a_i) (lockstep only)
and, for duets, the spread of ln(b_i / a_i) over a duet's rounds. A round is a
step index both sides ran as a steady step (not warm-up, evaluation,
checkpoint or stall). Kalibera & Jones's two levels then follow: var(duet
estimate) = var_between + var_round / rounds, so var_between = var(gm over
duets) - mean(var_round) / rounds.

    duet_variance.py STORE --side-key variant|branch --a NAME --b NAME [--tsv]

prints one row per (case, design) with the replicates, the sd of each
estimator across replicates (the figure a sequential test's intervals scale
with), the within-duet round sd, the between-duet sd and the seconds per
replicate (wall time of its runs, from their started/finished stamps).
"""
import argparse
import collections
import json
import math
import sqlite3
import statistics
import sys


def sd(xs):
    return statistics.stdev(xs) if len(xs) >= 2 else float("nan")


def chi2_interval(s, n, level=0.9):
    """A (1-level)-two-sided interval for a standard deviation from n values (normal theory)."""
    if n < 3 or not math.isfinite(s):
        return (float("nan"), float("nan"))
    df = n - 1
    # Wilson-Hilferty is enough for a printed range here; scipy is not a dependency of the campaigns.
    def q(p):
        z = statistics.NormalDist().inv_cdf(p)
        return df * (1 - 2 / (9 * df) + z * math.sqrt(2 / (9 * df))) ** 3
    a = (1 - level) / 2
    return (s * math.sqrt(df / q(1 - a)), s * math.sqrt(df / q(a)))


def load(db, side_key):
    con = sqlite3.connect(db)
    runs = con.execute(
        "SELECT run_id, group_id, case_name, variant, git_branch, repeat_index, provenance_json, started_at, finished_at "
        "FROM runs WHERE status = 'completed'").fetchall()
    steps = collections.defaultdict(dict)
    for run_id, step, t in con.execute(
            "SELECT run_id, step, step_time_s FROM steps WHERE is_warmup = 0 AND is_eval = 0 AND is_checkpoint = 0 "
            "AND is_stall = 0 AND step_time_s > 0"):
        steps[run_id][step] = t
    reps = collections.defaultdict(dict)
    for run_id, group, case, variant, branch, k, prov, started, finished in runs:
        p = json.loads(prov or "{}")
        if p.get("run_role") == "profile":
            continue
        side = variant if side_key == "variant" else branch
        reps[(group, case, k)][side] = {"steps": steps[run_id], "lockstep": p.get("pairing") == "lockstep",
                                        "started": started, "finished": finished}
    return reps


def seconds_of(rep):
    import datetime
    def parse(s):
        return datetime.datetime.fromisoformat(s.replace("Z", "+00:00")) if s else None
    starts = [parse(r["started"]) for r in rep]
    ends = [parse(r["finished"]) for r in rep]
    if None in starts or None in ends:
        return float("nan")
    return (max(ends) - min(starts)).total_seconds()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("store")
    ap.add_argument("--side-key", choices=["variant", "branch"], default="variant")
    ap.add_argument("--a", required=True)
    ap.add_argument("--b", required=True)
    ap.add_argument("--tsv", action="store_true")
    ap.add_argument("--json", help="also write the per-replicate values here")
    o = ap.parse_args()
    cells = collections.defaultdict(lambda: collections.defaultdict(list))
    for (group, case, k), sides in sorted(load(o.store, o.side_key).items()):
        if o.a not in sides or o.b not in sides:
            continue
        a, b = sides[o.a], sides[o.b]
        design = "lockstep" if a["lockstep"] and b["lockstep"] else "runs"
        if not a["steps"] or not b["steps"]:
            continue
        c = cells[(case, design)]
        c["med"].append(math.log(statistics.median(b["steps"].values()) / statistics.median(a["steps"].values())))
        c["seconds"].append(seconds_of([a, b]))
        if design == "lockstep":
            rounds = sorted(set(a["steps"]) & set(b["steps"]))
            d = [math.log(b["steps"][i] / a["steps"][i]) for i in rounds]
            if len(d) >= 2:
                c["gm"].append(statistics.fmean(d))
                c["mr"].append(statistics.median(d))
                c["round_var"].append(statistics.variance(d))
                c["rounds"].append(len(d))
    header = ["case", "design", "replicates", "steady rounds", "sd med", "sd med 90% range", "sd gm", "sd mr",
              "round sd", "between sd", "mean ln ratio (med)", "s per replicate"]
    rows = []
    for (case, design), c in sorted(cells.items()):
        n = len(c["med"])
        s_med = sd(c["med"])
        lo, hi = chi2_interval(s_med, n)
        row = [case, design, str(n)]
        if design == "lockstep" and c["gm"]:
            r = statistics.fmean(c["rounds"])
            round_var = statistics.fmean(c["round_var"])
            between = sd(c["gm"]) ** 2 - round_var / r if len(c["gm"]) >= 2 else float("nan")
            row += [f"{r:.1f}", f"{100 * s_med:.2f}%", f"{100 * lo:.1f}-{100 * hi:.1f}%", f"{100 * sd(c['gm']):.2f}%",
                    f"{100 * sd(c['mr']):.2f}%", f"{100 * math.sqrt(round_var):.2f}%",
                    f"{100 * math.sqrt(max(0.0, between)):.2f}%"]
        else:
            row += ["-", f"{100 * s_med:.2f}%", f"{100 * lo:.1f}-{100 * hi:.1f}%", "-", "-", "-", "-"]
        row += [f"{100 * statistics.fmean(c['med']):+.2f}%", f"{statistics.fmean(c['seconds']):.1f}"]
        rows.append(row)
    sep = "\t" if o.tsv else "  "
    print(sep.join(header))
    for row in rows:
        print(sep.join(row))
    if o.json:
        with open(o.json, "w") as f:
            json.dump({f"{k[0]}|{k[1]}": v for k, v in cells.items()}, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
