#!/usr/bin/env python3
"""The GPU campaign's one-page summary (ci/gpu_kit/campaign.sh calls it).

Reads what the campaign left: the store (OUT/gpu.db: runs, their metrics,
config and provenance), every report's JSON (OUT/verdicts.json), the device
facts and the steps' log (WORK/*.json, *.csv, *.jsonl), and writes
OUT/summary.md (device, driver, versions, MFU and memory per case, the loss
band per arithmetic, what failed and why) and OUT/facts.json (the same facts,
the calibration, the plans and the steps, for tools). Python's standard
library only: it runs on the device's python and on a bare Debian.
"""
import argparse
import json
import math
import os
import sqlite3
import statistics


def load_json(path, default):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return default


def load_jsonl(path):
    """The JSON values written one after another (one a line, or pretty-printed)."""
    try:
        with open(path) as f:
            text = f.read()
    except OSError:
        return []
    rows, at, decoder = [], 0, json.JSONDecoder()
    while True:
        while at < len(text) and text[at].isspace():
            at += 1
        if at >= len(text):
            return rows
        try:
            value, at = decoder.raw_decode(text, at)
        except ValueError:
            return rows  # a step cut short by its budget: keep what came before
        rows.append(value)


def fmt(value, spec, unit=""):
    return "-" if value is None else format(value, spec) + unit


def arithmetic(config):
    quant = config.get("quant.mode", "none")
    return quant if quant not in ("", "none") else config.get("train.dtype", "fp32")


def runs_of(db):
    """Every timed run of the store with its metrics, config and provenance."""
    if not os.path.exists(db):
        return []
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    con.row_factory = sqlite3.Row
    runs = []
    for r in con.execute("SELECT run_id, group_id, case_name, variant, status, reason, config_json, provenance_json "
                         "FROM runs ORDER BY started_at"):
        prov = json.loads(r["provenance_json"] or "{}")
        if prov.get("run_role") == "profile":
            continue  # profiled runs explain; they are never timed
        metrics = {m["name"]: m["value"] for m in
                   con.execute("SELECT name, value FROM run_metrics WHERE run_id = ?", (r["run_id"],))}
        runs.append(dict(group=r["group_id"], case=r["case_name"], variant=r["variant"], status=r["status"],
                         reason=r["reason"], config=json.loads(r["config_json"] or "{}"), prov=prov, m=metrics))
    con.close()
    return runs


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--device", required=True)
    ap.add_argument("--version", default="")
    ap.add_argument("--elapsed", type=int, default=0)
    ap.add_argument("--failed", type=int, default=0)
    a = ap.parse_args()

    torch_facts = load_json(os.path.join(a.work, "torch.json"), {})
    smi = ""
    try:
        smi = open(os.path.join(a.work, "nvidia-smi.csv")).read().strip()
    except OSError:
        pass
    calibration = load_json(os.path.join(a.work, "calibrate.out"), [])
    plans = load_jsonl(os.path.join(a.work, "plan.out"))
    steps = load_jsonl(os.path.join(a.work, "steps.jsonl"))
    verdicts = load_json(os.path.join(a.out, "verdicts.json"), {})
    runs = runs_of(os.path.join(a.out, "gpu.db"))

    facts = dict(device=a.device, binary=a.version, torch=torch_facts, nvidia_smi=smi, calibration=calibration,
                 plans=plans, steps=steps, elapsed_s=a.elapsed, failed_steps=a.failed)
    with open(os.path.join(a.out, "facts.json"), "w") as f:
        json.dump(facts, f, indent=1)

    L = []
    L.append(f"# twinbench GPU campaign: {a.device}")
    L.append("")
    gpu = torch_facts.get("gpu") or "no GPU (CPU rehearsal)"
    L.append(f"- **Device:** {gpu}" + (f", compute capability {torch_facts.get('capability')}, "
                                       f"{torch_facts.get('sm_count')} SMs, "
                                       f"{torch_facts.get('memory_bytes', 0) / 2**30:.1f} GiB" if 'gpu' in torch_facts else ""))
    if smi:
        L.append(f"- **nvidia-smi** (name, driver, memory, max SM clock, power limit): {smi}")
    L.append(f"- **Versions:** {a.version}; torch {torch_facts.get('torch')}, CUDA {torch_facts.get('cuda')}, "
             f"cuDNN {torch_facts.get('cudnn', '-')}, NCCL {torch_facts.get('nccl', '-')}")
    L.append(f"- **Campaign:** {a.elapsed} s, {a.failed} step(s) failed")
    L.append("")
    L.append("## Steps")
    L.append("")
    L.append("| step | budget s | took s | outcome |")
    L.append("|---|---|---|---|")
    for s in steps:
        L.append(f"| {s['step']} | {s['budget_s']} | {s['took_s']} | {s['status']} |")
    L.append("")
    if calibration:
        L.append("## Calibration (measured dense-matmul peak)")
        L.append("")
        L.append("| dtype | TFLOP/s | matmul size | path | datasheet TFLOP/s |")
        L.append("|---|---|---|---|---|")
        for c in calibration:
            L.append(f"| {c.get('dtype')} | {fmt(c.get('peak_tflops'), '.2f')} | {c.get('matmul_size', '-')} | "
                     f"{c.get('backend', '-')} | {fmt(c.get('datasheet_tflops'), '.0f')} |")
        L.append("")

    if plans:
        L.append("## Plans (per device)")
        L.append("")
        L.append("| case | params | TFLOPs/step | tokens/step | memory estimate | fits |")
        L.append("|---|---|---|---|---|---|")
        for p in plans:
            q = p.get("plan") or {}
            est = q.get("memory_estimate_bytes")
            L.append(f"| {p.get('case')} | {fmt(q.get('params'), ',.0f')} | {fmt(q.get('tflops_per_step_per_device'), '.3f')} | "
                     f"{fmt(q.get('tokens_per_step'), ',.0f')} | {fmt(None if est is None else est / 2**30, '.2f', ' GiB')} | "
                     f"{q.get('fits', '-')} |")
        L.append("")

    L.append("## Per step, case and implementation (medians over the runs)")
    L.append("")
    L.append("| step | case | arithmetic | impl | runs | median s/step | tokens/s | TFLOP/s | MFU | peak memory | memory % | final loss | quant path |")
    L.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    cells = {}
    for r in runs:
        if r["status"] != "completed":
            continue
        cells.setdefault((r["group"], r["case"], r["variant"]), []).append(r)
    for (group, case, variant), rs in cells.items():
        m = lambda k: median([x["m"].get(k) for x in rs])  # noqa: E731
        reduced = " (reduced)" if rs[0]["config"].get("reduced") else ""
        mfu = m("mfu")
        peak = m("peak_memory_bytes")
        L.append(f"| {group.replace('campaign-', '')} | {case}{reduced} | {arithmetic(rs[0]['config'])} | {variant} | {len(rs)} | "
                 f"{fmt(m('step_time_median_s'), '.4f')} | {fmt(m('tokens_per_s_per_device'), ',.0f')} | "
                 f"{fmt(m('tflops_per_s_per_device'), '.2f')} | {fmt(None if mfu is None else 100 * mfu, '.1f', '%')} | "
                 f"{fmt(None if peak is None else peak / 2**30, '.2f', ' GiB')} | {fmt(m('memory_pct'), '.1f')} | "
                 f"{fmt(m('final_loss'), '.6f')} | {rs[0]['prov'].get('quant_backend', '-')} |")
    L.append("")

    # A/A of one build against itself (step `aa`): the spread of ln(B/A) per replicate, by design.
    aa = [(d, load_json(os.path.join(a.work, f"aa-{d}.json"), None)) for d in ("lockstep", "runs")]
    if any(j for _, j in aa):
        L.append("## A/A: lockstep duets and run-level pairs (01_base, one build against itself)")
        L.append("")
        L.append("| design | replicates | step time B/A [CI] | sd of ln(B/A) per replicate |")
        L.append("|---|---|---|---|")
        for design, j in aa:
            if not j:
                continue
            t = next((m for m in j.get("metrics", []) if m.get("metric") == "step_time_median_s"), {})
            pairs = [(x, y) for x, y in zip(t.get("rounds_a", []), t.get("rounds_b", [])) if x and y]
            logs = [math.log(y / x) for x, y in pairs]
            sd = statistics.stdev(logs) if len(logs) >= 2 else None
            L.append(f"| {j.get('pairing', design)} | {len(pairs)} | {t.get('change', '-')} | "
                     f"{fmt(None if sd is None else 100 * sd, '.2f', '%')} |")
        L.append("")

    L.append("## Verdicts and loss bands per arithmetic")
    L.append("")
    L.append("| step | case | B vs A | step time | peak memory | final loss A / B | loss band (source) | loss verdict |")
    L.append("|---|---|---|---|---|---|---|---|")
    for name, report in (verdicts or {}).items():
        if not isinstance(report, dict):
            continue
        # A pair report's case is one comparison; an nway report's holds one per implementation.
        comparisons = [x for c in report.get("cases", []) for x in (c.get("against") or [c])]
        for c in comparisons:
            by = {m["metric"]: m for m in c.get("metrics", [])}
            t, mem, loss = by.get("step_time_median_s"), by.get("peak_memory_bytes"), by.get("final_loss")
            if not loss:
                continue
            pair = f"{c.get('b', {}).get('label', 'B')} vs {c.get('a', {}).get('label', 'A')}"
            L.append(f"| {name} | {c['case']} | {pair} | {t['change'] + ' ' + t['verdict'] if t else '-'} | "
                     f"{mem['verdict'] if mem else '-'} | {fmt(loss.get('a'), '.6f')} / {fmt(loss.get('b'), '.6f')} | "
                     f"{fmt(loss.get('tolerance'), '.2g')} ({loss.get('tolerance_source') or '-'}) | {loss['verdict']} |")
    L.append("")

    bad = [r for r in runs if r["status"] not in ("completed",)]
    L.append("## What failed, and why")
    L.append("")
    if not bad and not any(s["exit"] for s in steps):
        L.append("Nothing.")
    for s in steps:
        if s["exit"]:
            L.append(f"- step `{s['step']}`: {s['status']}")
    for r in bad:
        L.append(f"- `{r['case']}` {r['variant']} ({r['group']}): **{r['status']}**: {r['reason']}")
    L.append("")
    with open(os.path.join(a.out, "summary.md"), "w") as f:
        f.write("\n".join(L))


if __name__ == "__main__":
    main()
