#!/usr/bin/python3
"""The table ci/campaigns/perf.sh prints from what it wrote into OUT:
calibrate-<env>-<round>.json, <impl>-<env>-<shape>-<dtype>-<round>.json (the
`twinbench run --json` of each implementation) and <env>.db (the store, for
each run's first-step time).

Per implementation: medians over the rounds of tokens/s, step time, model
TFLOP/s, the share of that round's calibrated peak and the first-step time
(torch.compile's and XLA's compilation). Ratios of tokens/s against `eager` and
against `compiled` (when they ran) are per round (the processes of one round
ran back to back), summarised as their geometric mean with a 95% t-interval on
the log ratios: the round, not the step, is the unit of replication.

    ci/campaigns/perf/table.py OUT ROUNDS "8x256 4x128" "fp32" "default" "functional module eager compiled"

With $RESULTS naming a results file (perf.sh: docs/results/perf.md), each table
is also written there as a markdown block named <env>-<shape>-<dtype>
(ci/campaign_results.py, stamped with $RESULTS_COMMAND), which
docs/performance.md quotes.
"""
import json
import math
import os
import sqlite3
import statistics
import sys

from scipy import stats


def load(path):
    with open(path) as f:
        data = json.load(f)
    return data[0] if isinstance(data, list) else data


def ratio_interval(ratios):
    """Geometric mean of per-round ratios and its 95% t-interval (None with fewer than 2)."""
    logs = [math.log(r) for r in ratios]
    mean = statistics.mean(logs)
    if len(logs) < 2:
        return math.exp(mean), None
    half = stats.t.ppf(0.975, len(logs) - 1) * statistics.stdev(logs) / math.sqrt(len(logs))
    return math.exp(mean), (math.exp(mean - half), math.exp(mean + half))


def show(ratio, interval):
    if interval is None:
        return f"{ratio:.2f}x"
    return f"{ratio:.2f}x [{interval[0]:.2f}, {interval[1]:.2f}]"


def first_step_seconds(db_path, run_ids):
    with sqlite3.connect(f"file:{db_path}?mode=ro", uri=True) as db:
        out = []
        for run_id in run_ids:
            row = db.execute("SELECT value FROM run_metrics WHERE run_id = ? AND name = 'first_step_s'",
                             (run_id,)).fetchone()
            out.append(row[0] if row else float("nan"))
        return out


def main():
    out, rounds = sys.argv[1], int(sys.argv[2])
    shapes, dtypes, envs, impls = sys.argv[3].split(), sys.argv[4].split(), sys.argv[5].split(), sys.argv[6].split()
    anchors = [a for a in ("eager", "compiled") if a in impls]
    med = statistics.median
    for e in envs:
        peaks = [{c["dtype"]: c for c in load_all(f"{out}/calibrate-{e}-{r}.json")} for r in range(rounds)]
        for dt in dtypes:
            values = [p[dt]["peak_tflops"] for p in peaks]
            print(f"calibrated {dt} peak ({e}, through {peaks[0][dt].get('backend', '?')}): median "
                  f"{med(values):.3f} TFLOP/s, range {min(values):.3f}-{max(values):.3f} over {rounds} rounds")
        for shape in shapes:
            for dt in dtypes:
                tag = f"{e}-{shape}-{dt}"
                runs = {i: [load(f"{out}/{i}-{tag}-{r}.json") for r in range(rounds)] for i in impls}
                for i, rs in runs.items():
                    bad = [x for x in rs if x["status"] != "completed"]
                    if bad:
                        sys.exit(f"table.py: a run of {i} did not complete: {bad[0]}")
                one = runs[impls[0]][0]
                per_token = one["tflops_per_s_per_device"] / one["tokens_per_s_per_device"]
                tps = {i: [x["tokens_per_s_per_device"] for x in rs] for i, rs in runs.items()}
                step = {i: [x["step_time_median_s"] for x in rs] for i, rs in runs.items()}
                first = {i: first_step_seconds(f"{out}/{e}.db", [x["run_id"] for x in rs]) for i, rs in runs.items()}
                batch, seq = shape.split("x")
                print(f"\n{one['case']} ({batch} x {seq}), {dt}, {e} environment, {rounds} rounds "
                      f"(median; ratios of tokens/s: geometric mean [95% interval] of the per-round ratios)")
                header = f"{'':<13} {'tok/s':>7} {'step s':>7} {'TFLOP/s':>8} {'% peak':>7} {'1st step s':>10}"
                print(header + "".join(f"  {'vs ' + a:<20}" for a in anchors))
                md = ["| implementation | tok/s | step s | TFLOP/s | % peak | first step s" +
                      "".join(f" | vs {a}" for a in anchors) + " |", "|---|---:|---:|---:|---:|---:|" + "---|" * len(anchors)]
                for i in impls:
                    share = [per_token * t / p[dt]["peak_tflops"] for t, p in zip(tps[i], peaks)]
                    line = (f"{i:<13} {med(tps[i]):>7.0f} {med(step[i]):>7.3f} {per_token * med(tps[i]):>8.4f} "
                            f"{100 * med(share):>6.1f}% {med(first[i]):>10.2f}")
                    cells = [i, f"{med(tps[i]):.0f}", f"{med(step[i]):.3f}", f"{per_token * med(tps[i]):.4f}",
                             f"{100 * med(share):.1f}%", f"{med(first[i]):.2f}"]
                    for a in anchors:
                        vs = "1.00x" if i == a else show(*ratio_interval([x / y for x, y in zip(tps[i], tps[a])]))
                        line += f"  {vs:<20}"
                        cells.append(vs)
                    print(line)
                    md.append("| " + " | ".join(cells) + " |")
                note = (f"{one['case']} ({batch} x {seq}), {dt}, {e} environment, {rounds} rounds: medians; ratios of "
                        f"tokens/s: geometric mean [95% interval] of the per-round ratios. Calibrated {dt} peak: "
                        f"median {med([p[dt]['peak_tflops'] for p in peaks]):.3f} TFLOP/s.")
                if "functional" in impls and "module" in impls:
                    r, ci = ratio_interval([m / f for m, f in zip(step["module"], step["functional"])])
                    ci_text = "" if ci is None else f" [{100 * (ci[0] - 1):+.1f}%, {100 * (ci[1] - 1):+.1f}%]"
                    print(f"module vs functional step time: {100 * (r - 1):+.1f}%{ci_text}")
                    note += f" module vs functional step time: {100 * (r - 1):+.1f}%{ci_text}."
                if os.environ.get("RESULTS"):
                    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
                    import campaign_results  # ci/campaign_results.py
                    campaign_results.write(os.environ["RESULTS"], f"{e}-{shape}-{dt}",
                                           os.environ.get("RESULTS_COMMAND", "ci/campaigns/perf.sh"), "\n".join(md),
                                           note)


def load_all(path):
    with open(path) as f:
        return json.load(f)


if __name__ == "__main__":
    main()
