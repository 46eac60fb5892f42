"""What every Python implementation shares with twinbench (docs/external.md):
reading the case, the canonical weights and the token batches, bounding the
CPU threads, the learning-rate schedule of harness/run/train/trainer.cpp, and the
step loop that prints one JSON line per optimizer step. The trainers
(variants/eager/train.py for PyTorch, variants/flax_decoder/train.py for Flax Linen
and NNX) supply only their model and their optimizer step.

numpy only (Debian's python3-numpy or the project venv's), so the same file
serves the venv's torch 2.x and Debian's torch 1.13.
"""
import json
import math
import os
import signal
import struct
import sys
import time

import numpy as np

STOP = []  # a forwarded SIGINT/SIGTERM: finish the current step, then stop


def emit(obj):
    print(json.dumps(obj), flush=True)


def skip(name, reason):
    """Tells twinbench this case is not one `name` can run: stored as skipped with the reason."""
    emit({"twinbench_skip": f"{name}: {reason}"})
    sys.exit(0)


def read_case():
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: STOP.append(1))
    with open(os.environ["TWINBENCH_CASE_JSON"]) as f:
        return json.load(f)


def common_unsupported(case, supports=()):
    """The reason a case is out of reach for a trainer that supports the
    optional features named in `supports` ("bf16", "dropout", "int8", "dist":
    data parallel over dist.nproc ranks, "zero3": dist.shard = zero3, "remat":
    train.remat = full), or None."""
    m, t = case["model"], case["train"]
    if t["dtype"] != "fp32" and not (t["dtype"] == "bf16" and "bf16" in supports):
        return f"train.dtype = {t['dtype']} is not supported"
    quant = m.get("quant_mode", "none")
    if quant != "none" and quant not in supports:
        return f"quant.mode = {quant} is not supported"
    if m["dropout"] > 0 and "dropout" not in supports:
        return "dropout is not supported (its random stream is twinbench's own)"
    if case["dist"]["nproc"] > 1 and "dist" not in supports:
        return "data parallel (dist.nproc > 1) is not supported"
    if case["dist"].get("shard", "none") != "none" and "zero3" not in supports:
        return f"dist.shard = {case['dist']['shard']} is not supported"
    if t.get("remat", "none") != "none" and "remat" not in supports:
        return f"train.remat = {t['remat']} is not supported"
    if t["optimizer"] != "adamw":
        return f"train.optimizer = {t['optimizer']} is not supported (adamw only)"
    if not case.get("weights_path") or not case.get("batches_path"):
        return "twinbench wrote no weights or batches (same_model = false)"
    return None


def bound_cpu_threads(threads):
    """Keeps this process on `threads` of the cores it may use (the first ones
    of its affinity), so that a runtime that sizes its thread pools by the
    schedulable cores (XLA's CPU client does; it has no thread-count option)
    puts no more threads on the host than twinbench's host guard counted.
    Must run before such a runtime starts. Returns the cores kept."""
    allowed = sorted(os.sched_getaffinity(0))
    if 0 < threads < len(allowed):
        os.sched_setaffinity(0, allowed[:threads])
    return len(os.sched_getaffinity(0))


# ---- inputs -----------------------------------------------------------------------------

_DTYPES = {"F32": np.float32, "F64": np.float64, "F16": np.float16, "I64": np.int64, "I32": np.int32,
           "I8": np.int8, "U8": np.uint8}


def load_safetensors(path):
    """name -> numpy array. 8-byte little-endian header length, a JSON header, raw little-endian data."""
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n].decode("utf-8"))
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        if info["dtype"] not in _DTYPES:
            raise ValueError(f"{path}: tensor {name} has dtype {info['dtype']}; expected one of {sorted(_DTYPES)}")
        begin, end = info["data_offsets"]
        dtype = np.dtype(_DTYPES[info["dtype"]]).newbyteorder("<")
        out[name] = np.frombuffer(blob, dtype=dtype, count=(end - begin) // dtype.itemsize,
                                  offset=8 + n + begin).reshape(info["shape"]).astype(dtype.newbyteorder("="))
    return out


def load_batches(path, spec):
    """int64 little-endian; per batch inputs [B, S] then targets [B, S]; train batches first.
    Returns (train, held_out) as int64 arrays [count, 2, B, S]."""
    pairs = np.fromfile(path, dtype="<i8").astype(np.int64).reshape(-1, 2, spec["batch"], spec["seq_len"])
    return pairs[:spec["train_count"]], pairs[spec["train_count"]:]


# ---- training, as harness/run/train/trainer.cpp -------------------------------------------------

def learning_rate(t, lr_floor, step):
    """Warm-up lr·(s+1)/warmup, then constant, linear or cosine decay to lr_floor·lr."""
    if step < t["warmup_steps"]:
        return t["lr"] * (step + 1) / t["warmup_steps"]
    if t["schedule"] == "constant":
        return t["lr"]
    decay_steps = max(1, t["steps"] - t["warmup_steps"] - 1)
    progress = min(1.0, (step - t["warmup_steps"]) / decay_steps)
    floor = lr_floor * t["lr"]
    if t["schedule"] == "linear":
        return t["lr"] - (t["lr"] - floor) * progress
    return floor + 0.5 * (t["lr"] - floor) * (1.0 + math.cos(math.pi * progress))


def train(case, step, evaluate, agree_stop=None):
    """The step loop. `step(s)` runs optimizer step s and returns (loss, grad_norm) as
    Python floats once the device work is done (the step time is read after it);
    `evaluate()` returns the mean held-out loss. Step 0 holds any compilation: it is
    a warm-up step, reported apart from the steady state as the first-step time.
    With several ranks `agree_stop(stop)` makes every rank stop after the same step
    (a stop request reaches them at different moments)."""
    t = case["train"]
    warmup = max(1, case["measure"]["warmup_steps"])
    for s in range(t["steps"]):
        start = time.perf_counter()
        loss, grad_norm = step(s)
        elapsed = time.perf_counter() - start
        diverged = not (math.isfinite(loss) and math.isfinite(grad_norm))
        record = {"step": s, "loss": loss, "step_time_s": elapsed, "tokens": t["batch"] * t["seq_len"] * t["grad_accum"],
                  "is_warmup": s < warmup, "grad_norm": grad_norm}
        last = s + 1 == t["steps"]
        if not diverged and ((t["eval_every"] > 0 and (s + 1) % t["eval_every"] == 0) or last):
            record["is_eval"] = True
            record["eval_loss"] = evaluate()
        yield record
        stop = bool(STOP)
        if agree_stop is not None:
            stop = agree_stop(stop)
        if diverged or stop:
            break
