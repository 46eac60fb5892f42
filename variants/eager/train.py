#!/usr/bin/python3
"""twinbench's third implementation, `eager`: the twinbench decoder in plain
PyTorch eager, run by twinbench as an external variant (docs/external.md).

It reads the case twinbench resolved ($TWINBENCH_CASE_JSON), loads the
canonical initial weights (safetensors) and the exact token batches the C++
implementations train on, trains with the same optimizer (AdamW betas
0.9/0.95, eps 1e-8, weight decay 0.1 on kernels and the embedding, global
grad-norm clip, warm-up then cosine/linear decay to 0.1 x lr) and prints one
JSON line per step on stdout. The math is written like models/ops.cpp (same
ops in the same order), so the step-0 loss matches the C++ implementations'
to float rounding.

Grown from ci/perf/eager_reference.py. Needs Debian's python3-torch (1.13)
or any later torch; nothing else.
"""
import json
import math
import os
import signal
import struct
import sys
import time

import torch
import torch.nn.functional as F

STOP = []  # a forwarded SIGINT/SIGTERM: finish the current step, then stop


def emit(obj):
    print(json.dumps(obj), flush=True)


def skip(reason):
    """Tells twinbench this case is not one eager can run: stored as skipped."""
    emit({"twinbench_skip": "eager: " + reason})
    sys.exit(0)


# ---- inputs -----------------------------------------------------------------------------

DTYPES = {"F32": torch.float32, "F64": torch.float64, "BF16": torch.bfloat16, "F16": torch.float16,
          "I64": torch.int64, "I32": torch.int32, "I8": torch.int8, "U8": torch.uint8}


def load_safetensors(path):
    """8-byte little-endian header length, a JSON header, then raw little-endian data."""
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n].decode("utf-8"))
    data = memoryview(blob)[8 + n:]
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        dtype = DTYPES[info["dtype"]]
        t = torch.frombuffer(bytearray(data[begin:end]), dtype=dtype) if end > begin else torch.empty(0, dtype=dtype)
        out[name] = t.reshape(info["shape"]).clone()
    return out


def load_batches(path, spec):
    """int64 little-endian; per batch inputs [B, S] then targets [B, S]; train batches, then held-out ones."""
    B, S = spec["batch"], spec["seq_len"]
    with open(path, "rb") as f:
        flat = torch.frombuffer(bytearray(f.read()), dtype=torch.int64)
    pairs = flat.view(-1, 2, B, S)
    train, held_out = pairs[:spec["train_count"]], pairs[spec["train_count"]:]
    return [(p[0], p[1]) for p in train], [(p[0], p[1]) for p in held_out]


# ---- the model, as models/ops.cpp and models/functional/model.cpp -----------------------

def rms_norm(x, scale, eps):
    x32 = x.float()
    inv = torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + eps)
    return (x32 * inv * scale.float()).to(x.dtype)


def rope_table(seq_len, head_dim, base):
    fraction = torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim
    inv_timescale = torch.pow(base, -fraction)
    angles = torch.outer(torch.arange(seq_len, dtype=torch.float64), inv_timescale)
    both = torch.cat([angles, angles], -1)
    return both.cos().float(), both.sin().float()


def apply_rope(x, cos, sin):  # x [B, S, heads, hd]
    S, half = x.shape[1], x.shape[3] // 2
    cos = cos[:S].view(1, S, 1, -1).to(x.dtype)
    sin = sin[:S].view(1, S, 1, -1).to(x.dtype)
    rotated = torch.cat([-x[..., half:], x[..., :half]], -1)
    return x * cos + rotated * sin


def expand_kv(t, heads):  # [B, S, KV, hd] -> [B, H, S, hd]
    B, S, KV, hd = t.shape
    bhsd = t.permute(0, 2, 1, 3)
    if KV == heads:
        return bhsd
    return bhsd.unsqueeze(2).expand(B, KV, heads // KV, S, hd).reshape(B, heads, S, hd)


def causal_attention(q, k, v, mask):
    B, S, H, hd = q.shape
    qh, kh, vh = q.permute(0, 2, 1, 3), expand_kv(k, H), expand_kv(v, H)
    q3, k3, v3 = qh.reshape(B * H, S, hd), kh.reshape(B * H, S, hd), vh.reshape(B * H, S, hd)
    scores = torch.baddbmm(mask[:S, :S].to(q.dtype).unsqueeze(0), q3, k3.transpose(1, 2),
                           beta=1.0, alpha=1.0 / math.sqrt(hd))
    out = torch.bmm(torch.softmax(scores, -1), v3).view(B, H, S, hd)
    return out.permute(0, 2, 1, 3).reshape(B, S, H * hd)


def dense(x, kernel, in_dims=1):
    n_in = 1
    for size in kernel.shape[:in_dims]:
        n_in *= size
    return torch.matmul(x, kernel.view(n_in, kernel.numel() // n_in))


class Decoder:
    """Parameters are the canonical tensors themselves, [in..., out...] kernels."""

    def __init__(self, weights, m, seq_len, device):
        self.m = m
        self.p = {k: v.to(device).requires_grad_(True) for k, v in weights.items()}
        self.cos, self.sin = (t.to(device) for t in rope_table(seq_len, m["head_dim"], m["rope_base"]))
        self.mask = torch.full((seq_len, seq_len), float("-inf"), device=device).triu(1)

    def loss(self, tokens, targets):
        m, p = self.m, self.p
        B, S = tokens.shape
        x = F.embedding(tokens, p["token_embedder.embedding"])
        for layer in range(m["layers"]):
            pre = f"decoder.layers.{layer}."
            h = rms_norm(x, p[pre + "pre_self_attention_layer_norm.scale"], m["eps"])
            q = dense(h, p[pre + "self_attention.query.kernel"]).view(B, S, m["heads"], m["head_dim"])
            k = dense(h, p[pre + "self_attention.key.kernel"]).view(B, S, m["kv_heads"], m["head_dim"])
            v = dense(h, p[pre + "self_attention.value.kernel"]).view(B, S, m["kv_heads"], m["head_dim"])
            q, k = apply_rope(q, self.cos, self.sin), apply_rope(k, self.cos, self.sin)
            x = x + dense(causal_attention(q, k, v, self.mask), p[pre + "self_attention.out.kernel"], 2)
            h = rms_norm(x, p[pre + "post_self_attention_layer_norm.scale"], m["eps"])
            gate = dense(h, p[pre + "mlp.wi_0.kernel"])
            up = dense(h, p[pre + "mlp.wi_1.kernel"])
            x = x + dense(F.silu(gate) * up, p[pre + "mlp.wo.kernel"])
        x = rms_norm(x, p["decoder.decoder_norm.scale"], m["eps"])
        logits = dense(x, p["decoder.logits_dense.kernel"])
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]).float(), targets.reshape(-1))


# ---- training, as harness/run/trainer.cpp -------------------------------------------------

def learning_rate(t, lr_floor, step):
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


def unsupported(case):
    m, t = case["model"], case["train"]
    if t["dtype"] != "fp32":
        return f"train.dtype = {t['dtype']} is not supported (fp32 only)"
    if m.get("quant_mode", "none") != "none":
        return f"quant.mode = {m['quant_mode']} is not supported"
    if m["dropout"] > 0:
        return "dropout is not supported (its random stream is twinbench's own)"
    if case["dist"]["nproc"] > 1:
        return "data parallel (dist.nproc > 1) is not supported"
    if t["optimizer"] != "adamw":
        return f"train.optimizer = {t['optimizer']} is not supported (adamw only)"
    if case["device"] == "cuda" and not torch.cuda.is_available():
        return "the case runs on CUDA and this torch has no CUDA"
    if not case.get("weights_path") or not case.get("batches_path"):
        return "twinbench wrote no weights or batches (same_model = false)"
    return None


def main():
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: STOP.append(1))
    with open(os.environ["TWINBENCH_CASE_JSON"]) as f:
        case = json.load(f)
    reason = unsupported(case)
    if reason:
        skip(reason)
    torch.set_num_threads(max(1, int(case.get("threads", 1))))
    device = torch.device(case["device"])
    m, t, o = case["model"], case["train"], case["optimizer"]
    train_batches, eval_batches = load_batches(case["batches_path"], case["batches"])
    model = Decoder(load_safetensors(case["weights_path"]), m, t["seq_len"], device)
    params = list(model.p.values())
    emit({"twinbench_run": {"params": sum(p.numel() for p in params),
                            "provenance": {"eager_torch_version": torch.__version__,
                                           "eager_python_version": sys.version.split()[0]}}})
    decayed = [p for p in params if p.dim() >= 2]  # kernels and the embedding
    plain = [p for p in params if p.dim() < 2]     # norm scales
    opt = torch.optim.AdamW([{"params": decayed, "weight_decay": o["weight_decay"]},
                             {"params": plain, "weight_decay": 0.0}],
                            lr=t["lr"], betas=(o["beta1"], o["beta2"]), eps=o["eps"])
    warmup = max(1, case["measure"]["warmup_steps"])
    accum = t["grad_accum"]
    max_norm = t["clip"] if t["clip"] > 0 else float("inf")

    def evaluate():
        with torch.no_grad():
            return sum(model.loss(i.to(device), g.to(device)).item() for i, g in eval_batches) / len(eval_batches)

    forward = 0
    for step in range(t["steps"]):
        start = time.perf_counter()
        for group in opt.param_groups:
            group["lr"] = learning_rate(t, o["lr_floor"], step)
        opt.zero_grad()
        step_loss = 0.0
        for _ in range(accum):
            inputs, targets = train_batches[forward]
            forward += 1
            loss = model.loss(inputs.to(device), targets.to(device))
            (loss / accum).backward()
            step_loss += loss.item()
        grad_norm = float(torch.nn.utils.clip_grad_norm_(params, max_norm))
        loss_value = step_loss / accum
        diverged = not (math.isfinite(loss_value) and math.isfinite(grad_norm))
        if not diverged:
            opt.step()
        if device.type == "cuda":
            torch.cuda.synchronize()
        record = {"step": step, "loss": loss_value, "step_time_s": time.perf_counter() - start,
                  "tokens": t["batch"] * t["seq_len"] * accum, "is_warmup": step < warmup, "grad_norm": grad_norm}
        last = step + 1 == t["steps"]
        if not diverged and ((t["eval_every"] > 0 and (step + 1) % t["eval_every"] == 0) or last):
            record["is_eval"] = True
            record["eval_loss"] = evaluate()
        if device.type == "cuda":
            record["memory_bytes"] = torch.cuda.max_memory_allocated(device)
        emit(record)
        if diverged or STOP:
            break


if __name__ == "__main__":
    main()
