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

    duet_variance.py STORE --side-key variant|branch --a NAME --b NAME [--tsv] [--model MODEL.tsv]

prints one row per (case, design) with the replicates, the sd of each
estimator across replicates (the figure a sequential test's intervals scale
with), the within-duet round sd, the between-duet sd and the seconds per
replicate (wall time of its runs, from their started/finished stamps).

Since issue #60 a duet's estimate is tm, the 20%-trimmed mean of its rounds'
ln(b/a), with Tukey & McLaughlin's within variance (harness/stats/duets.h);
per case: the sd of tm across duets, the mean within standard error, the
between-duet sd (what is left: sqrt(max(0, var(tm) - mean within var))), the
winsorized sd of one round, and a duet's costs: a steady round (the sides'
median steady steps added) and the rest (the duet's wall time less its steady
rounds). --model writes them as twinbench_verdict_sim matrix-model reads them:
CASE, change, between sd, round sd, duet overhead s, round s, planned rounds.
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


def trimmed(d, g=0.2):
    """The 20%-trimmed mean, its Tukey-McLaughlin variance and the winsorized sd (harness/stats/duets.cpp)."""
    d = sorted(d)
    r = len(d)
    k = int(math.floor(g * r))
    tm = statistics.fmean(d[k:r - k])
    w = d[:]
    for j in range(k):
        w[j], w[r - 1 - j] = d[k], d[r - 1 - k]
    sw = statistics.stdev(w)
    return tm, sw * sw / ((1 - 2 * k / r) ** 2 * r), sw


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
    ap.add_argument("--model", help="also write the lockstep cases as twinbench_verdict_sim matrix-model reads them")
    ap.add_argument("--planned", default="", help="CASE=ROUNDS,...: the steady rounds each case's config plans (default 6)")
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
                tm, within, sw = trimmed(d)
                c["tm"].append(tm)
                c["tm_within"].append(within)
                c["tm_round_sd"].append(sw)
                round_s = statistics.median(a["steps"].values()) + statistics.median(b["steps"].values())
                c["round_s"].append(round_s)
                c["overhead_s"].append(seconds_of([a, b]) - len(d) * round_s)
    header = ["case", "design", "replicates", "steady rounds", "sd med", "sd med 90% range", "sd gm", "sd mr",
              "round sd", "between sd", "mean ln ratio (med)", "s per replicate", "sd tm", "tm within se",
              "tm between sd", "tm round sd", "round s", "duet overhead s"]
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
        if design == "lockstep" and c["tm"]:
            w = statistics.fmean(c["tm_within"])
            between = math.sqrt(max(0.0, sd(c["tm"]) ** 2 - w)) if len(c["tm"]) >= 2 else float("nan")
            c["model"] = [math.expm1(statistics.fmean(c["tm"])), between, statistics.fmean(c["tm_round_sd"]),
                          statistics.fmean(c["overhead_s"]), statistics.fmean(c["round_s"])]
            row += [f"{100 * sd(c['tm']):.2f}%", f"{100 * math.sqrt(w):.2f}%", f"{100 * between:.2f}%",
                    f"{100 * statistics.fmean(c['tm_round_sd']):.2f}%", f"{statistics.fmean(c['round_s']):.2f}",
                    f"{statistics.fmean(c['overhead_s']):.1f}"]
        else:
            row += ["-"] * 6
        rows.append(row)
    sep = "\t" if o.tsv else "  "
    print(sep.join(header))
    for row in rows:
        print(sep.join(row))
    if o.model:
        planned = dict(kv.split("=") for kv in o.planned.split(",") if kv)
        known = [c["model"][1] for (case, design), c in cells.items() if "model" in c and math.isfinite(c["model"][1])]
        # A case of one duet shows no between-duet sd of its own: the others' root mean square.
        fallback = math.sqrt(statistics.fmean([b * b for b in known])) if known else 0.01
        with open(o.model, "w") as f:
            for (case, design), c in sorted(cells.items()):
                if "model" not in c:
                    continue
                change, between, round_sd, overhead, round_s = c["model"]
                between = between if math.isfinite(between) else fallback
                f.write(f"{case}\t{change:.5f}\t{between:.5f}\t{round_sd:.5f}\t{overhead:.2f}\t{round_s:.3f}\t"
                        f"{planned.get(case, 6)}\n")
    if o.json:
        with open(o.json, "w") as f:
            json.dump({f"{k[0]}|{k[1]}": v for k, v in cells.items()}, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
