#!/usr/bin/python3
"""The table ci/perf.sh prints from the JSON files it wrote into OUT:
calibrate-<env>.json, twinbench-<env>-<dtype>-<round>.json, eager-<env>-<dtype>-<round>.json.
Values are medians over the rounds; ratios are taken within a round (interleaved runs),
then the median of those is shown.

    ci/perf/table.py OUT ROUNDS "fp32 bf16" "default tuned"
"""
import json
import statistics
import sys


def load(path):
    with open(path) as f:
        return json.load(f)


def main():
    out, rounds, dtypes, envs = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(), sys.argv[4].split()
    med = statistics.median
    peak = {e: {c["dtype"]: c["peak_tflops"] for c in load(f"{out}/calibrate-{e}.json")} for e in envs}
    for e in envs:
        print(f"calibrated peak ({e}): " + ", ".join(f"{d} {p:.3f} TFLOP/s" for d, p in peak[e].items()))
    base = envs[0]
    print("% peak: of the calibrated peak of the same dtype and env; vs eager: eager of the same dtype and env")
    print(f"{'env':<8} {'impl':<11} {'dtype':<5} {'tokens/s':>9} {'step s':>7} {'TFLOP/s':>8} {'% peak':>7} "
          f"{'vs eager':>9} {'vs eager ' + base:>16}")
    for dt in dtypes:
        for e in envs:
            eager = [load(f"{out}/eager-{e}-{dt}-{r}.json") for r in range(rounds)]
            eager_base = [load(f"{out}/eager-{base}-{dt}-{r}.json") for r in range(rounds)]
            rows = {}
            for r in range(rounds):
                for run in load(f"{out}/twinbench-{e}-{dt}-{r}.json"):
                    rows.setdefault(run["variant"], []).append(run)
            per_token = None  # model TFLOP per token, to put eager on the same scale
            for name, runs in rows.items():
                per_token = runs[0]["tflops_per_s_per_device"] / runs[0]["tokens_per_s_per_device"]
                tf = med([x["tflops_per_s_per_device"] for x in runs])
                vs = med([x["tokens_per_s_per_device"] / g["tokens_per_s"] for x, g in zip(runs, eager)])
                vs_base = med([x["tokens_per_s_per_device"] / g["tokens_per_s"] for x, g in zip(runs, eager_base)])
                print(f"{e:<8} {name:<11} {dt:<5} {med([x['tokens_per_s_per_device'] for x in runs]):>9.0f} "
                      f"{med([x['step_time_mean_s'] for x in runs]):>7.3f} {tf:>8.4f} {100 * tf / peak[e][dt]:>6.1f}% "
                      f"{vs:>8.2f}x {vs_base:>15.2f}x")
            etps = med([g["tokens_per_s"] for g in eager])
            etf = etps * per_token if per_token else float("nan")
            vs_base = med([g["tokens_per_s"] / b["tokens_per_s"] for g, b in zip(eager, eager_base)])
            print(f"{e:<8} {'eager':<11} {dt:<5} {etps:>9.0f} {med([g['step_time_mean_s'] for g in eager]):>7.3f} "
                  f"{etf:>8.4f} {100 * etf / peak[e][dt]:>6.1f}% {1:>8.2f}x {vs_base:>15.2f}x")
            if "functional" in rows and "module" in rows:
                gap = med([m["step_time_mean_s"] / f["step_time_mean_s"] - 1
                           for f, m in zip(rows["functional"], rows["module"])])
                print(f"{'':<8} module vs functional step time {100 * gap:+.1f}% (median over rounds)")


if __name__ == "__main__":
    main()
