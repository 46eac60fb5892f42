#!/usr/bin/python3
"""The table ci/perf.sh prints from the JSON files it wrote into OUT:
calibrate-<env>-<round>.json, <impl>-<env>-<shape>-<dtype>-<round>.json
(impl: functional, module, eager).

Per implementation: medians over the rounds of tokens/s, step time, model TFLOP/s and
the share of that round's calibrated peak. Ratios are per round (the processes of one
round ran back to back), summarised as their geometric mean with a 95% t-interval on
the log ratios: the round, not the step, is the unit of replication.

    ci/perf/table.py OUT ROUNDS "8x256 4x128" "fp32" "default"
"""
import json
import math
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


def main():
    out, rounds = sys.argv[1], int(sys.argv[2])
    shapes, dtypes, envs = sys.argv[3].split(), sys.argv[4].split(), sys.argv[5].split()
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
                tb = {i: [load(f"{out}/{i}-{tag}-{r}.json") for r in range(rounds)] for i in ("functional", "module")}
                eager = [load(f"{out}/eager-{tag}-{r}.json") for r in range(rounds)]
                for runs in tb.values():
                    bad = [x for x in runs if x["status"] != "completed"]
                    if bad:
                        sys.exit(f"table.py: a run did not complete: {bad[0]}")
                per_token = tb["functional"][0]["tflops_per_s_per_device"] / tb["functional"][0]["tokens_per_s_per_device"]
                tps = {i: [x["tokens_per_s_per_device"] for x in runs] for i, runs in tb.items()}
                tps["eager"] = [g["tokens_per_s"] for g in eager]
                step = {i: [x["step_time_median_s"] for x in runs] for i, runs in tb.items()}
                step["eager"] = [g["step_time_median_s"] for g in eager]
                batch, seq = shape.split("x")
                print(f"\nsmall preset, batch {batch} x {seq}, {dt}, {e} environment, {rounds} rounds "
                      f"(median; ratios: geometric mean [95% interval] of the per-round ratios)")
                print(f"{'':<11} {'tok/s':>7} {'step s':>7} {'TFLOP/s':>8} {'% peak':>7}  {'vs eager':<20}")
                for i in ("eager", "functional", "module"):
                    share = [per_token * t / p[dt]["peak_tflops"] for t, p in zip(tps[i], peaks)]
                    vs = "1.00x" if i == "eager" else show(*ratio_interval([a / b for a, b in zip(tps[i], tps["eager"])]))
                    print(f"{i:<11} {med(tps[i]):>7.0f} {med(step[i]):>7.3f} {per_token * med(tps[i]):>8.4f} "
                          f"{100 * med(share):>6.1f}%  {vs:<20}")
                r, ci = ratio_interval([m / f for m, f in zip(step["module"], step["functional"])])
                ci_text = "" if ci is None else f" [{100 * (ci[0] - 1):+.1f}%, {100 * (ci[1] - 1):+.1f}%]"
                print(f"module vs functional step time: {100 * (r - 1):+.1f}%{ci_text}")


def load_all(path):
    with open(path) as f:
        return json.load(f)


if __name__ == "__main__":
    main()
