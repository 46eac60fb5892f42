#!/usr/bin/env python3
"""Why twinbench's looks spend alpha by the union bound (docs/verdicts.md §5).

O'Brien-Fleming's boundaries as trials use them (Lan-DeMets spending, the
boundaries solved by recursive numerical integration so that the looks'
correlation is counted, Jennison & Turnbull ch. 19) hold the rate exactly for a
normal statistic with known variance. twinbench's looks are Student t statistics
over 2 to 24 pairs; converting each normal boundary to t at the same nominal
level is the usual shortcut. This script measures, on normal pair differences,
the A/A crossing rate of that shortcut beside the union-bound version the
product uses (each look at the alpha the spending function releases there,
stats::look_alpha), for the plans default_plan(N) makes. Seeded; counts, not
timings.

    ci/campaigns/boundary_check.py [SIMS=200000]     needs numpy and scipy (.venv/bin/python)
Environment: RESULTS (default docs/results/verdict_sim.md; block `boundary`).
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
from scipy.optimize import brentq
from scipy.stats import norm
from scipy.stats import t as student_t


def default_plan(max_pairs):
    looks, base = [], 1
    while 3 * base <= max_pairs:
        looks.append(3 * base)
        if 4 * base <= max_pairs:
            looks.append(4 * base)
        base *= 2
    if not looks or looks[-1] != max_pairs:
        looks.append(max_pairs)
    return looks


def spent(alpha, t):
    return 0.0 if t <= 0 else alpha if t >= 1 else 2 * norm.cdf(-norm.ppf(1 - alpha / 2) / np.sqrt(t))


def exact_levels(alpha, fractions, grid=401):
    """Two-sided nominal levels of the normal-theory boundaries (recursive integration)."""
    levels, prev_t, prev_spent, x, w, dens = [], 0.0, 0.0, None, None, None
    for k, t in enumerate(fractions):
        target = max(spent(alpha, t) - prev_spent, 1e-300)
        if k == 0:
            c = norm.ppf(1 - target / 2)
            b = c * np.sqrt(t)
            x = np.linspace(-b, b, grid)
            w = np.full(grid, x[1] - x[0])
            w[0] = w[-1] = w[0] / 2
            dens = norm.pdf(x / np.sqrt(t)) / np.sqrt(t)
        else:
            sd = np.sqrt(t - prev_t)

            def excess(cc):
                bb = cc * np.sqrt(t)
                return np.sum(w * dens * (norm.sf((bb - x) / sd) + norm.cdf((-bb - x) / sd))) - target

            c = 40.0 if excess(40.0) > 0 else brentq(excess, 1e-3, 40.0, xtol=1e-12)
            b = c * np.sqrt(t)
            nx = np.linspace(-b, b, grid)
            nw = np.full(grid, nx[1] - nx[0])
            nw[0] = nw[-1] = nw[0] / 2
            dens = ((w * dens)[None, :] * norm.pdf((nx[:, None] - x[None, :]) / sd) / sd).sum(axis=1)
            x, w = nx, nw
        levels.append(2 * norm.sf(c))
        prev_t, prev_spent = t, spent(alpha, t)
    return levels


def union_levels(alpha, fractions):
    out, before = [], 0.0
    for t in fractions:
        out.append(spent(alpha, t) - spent(alpha, before))
        before = t
    return out


def crossing_rate(plan, levels, sims, rng):
    d = rng.normal(0.0, 1.0, size=(sims, plan[-1]))
    s, s2 = np.cumsum(d, axis=1), np.cumsum(d * d, axis=1)
    crossed = np.zeros(sims, dtype=bool)
    for n, level in zip(plan, levels):
        m = s[:, n - 1] / n
        sd = np.sqrt(np.maximum(s2[:, n - 1] - n * m * m, 0) / (n - 1))
        crossed |= np.abs(m) > student_t.ppf(1 - level / 2, n - 1) * sd / np.sqrt(n)
    return crossed.mean()


def main():
    sims = int(sys.argv[1]) if len(sys.argv) > 1 else 200000
    rng = np.random.default_rng(50)
    rows = ["| alpha | plan (pairs looked at) | normal-theory boundary, t at the same level | union bound (twinbench) |",
            "|---:|---|---:|---:|"]
    for alpha in (0.05, 0.05 / 8):
        for max_pairs in (4, 6, 8, 12, 24):
            plan = default_plan(max_pairs)
            fractions = [n / max_pairs for n in plan]
            exact = crossing_rate(plan, exact_levels(alpha, fractions), sims, rng)
            union = crossing_rate(plan, union_levels(alpha, fractions), sims, rng)
            rows.append(f"| {alpha:.4g} | {', '.join(map(str, plan))} | {100 * exact:.2f}% | {100 * union:.2f}% |")
    table = "\n".join(rows)
    print(table)
    results = os.environ.get("RESULTS", "docs/results/verdict_sim.md")
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    with tempfile.NamedTemporaryFile("w", suffix=".md", delete=False) as f:
        f.write(table + "\n")
    note = (f"A/A crossing rate (any look's interval leaves no change out) of O'Brien-Fleming spending over "
            f"default_plan(N), {sims} simulated tests of normal pair differences per cell, Student t intervals: the "
            "boundaries solved for the looks' correlation (recursive integration, 401-point grid) and converted to t "
            "at the same nominal level, beside each look at the alpha the spending function releases there (the "
            "union bound, stats::look_alpha). The nominal rate is alpha.")
    subprocess.run(["python3", os.path.join(root, "ci", "campaign_results.py"), "write",
                    results, "boundary", "--command", f"ci/campaigns/boundary_check.py {sims}", "--table", f.name,
                    "--note", note], check=True, cwd=root)
    os.unlink(f.name)


if __name__ == "__main__":
    main()
