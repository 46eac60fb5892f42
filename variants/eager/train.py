#!/usr/bin/env python3
"""twinbench's PyTorch implementations, run by twinbench as external variants
(docs/external.md): the twinbench decoder in plain PyTorch, written with the
same ops in the same order as models/ops.cpp, so the step-0 loss matches the
C++ implementations' to float rounding.

    train.py             `eager` (the venv's torch 2.x) and `eager-debian`
                         (Debian's python3-torch 1.13): eager mode
    train.py --compile   `compiled`: torch.compile (inductor) of the same
                         model's loss; the compilation happens in step 0,
                         whose time is the first-step time

The case, weights, batches, schedule and step loop are variants/twinbench_trainer.py;
the optimizer is torch.optim.AdamW with the case's settings, and gradients are
clipped with clip_grad_norm_ as the C++ trainer does.
"""
import math
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import twinbench_trainer as tb  # noqa: E402

COMPILE = "--compile" in sys.argv[1:]
NAME = os.environ.get("TWINBENCH_VARIANT", "compiled" if COMPILE else "eager")


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
        self.p = {k: torch.from_numpy(v).to(device).requires_grad_(True) for k, v in weights.items()}
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


# ---- training -----------------------------------------------------------------------------

def unsupported(case):
    reason = tb.common_unsupported(case)
    if reason:
        return reason
    if COMPILE and not hasattr(torch, "compile"):
        return f"torch {torch.__version__} has no torch.compile (PyTorch 2.x needed)"
    if case["device"] == "cuda" and not torch.cuda.is_available():
        return f"the case runs on CUDA and this torch ({torch.__version__}) sees no CUDA device"
    return None


def main():
    case = tb.read_case()
    reason = unsupported(case)
    if reason:
        tb.skip(NAME, reason)
    threads = max(1, int(case.get("threads", 1)))
    torch.set_num_threads(threads)
    device = torch.device(case["device"])
    m, t, o = case["model"], case["train"], case["optimizer"]
    train_batches, eval_batches = tb.load_batches(case["batches_path"], case["batches"])
    to_device = lambda a: torch.from_numpy(a).to(device)  # noqa: E731
    train_batches = [(to_device(p[0]), to_device(p[1])) for p in train_batches]
    eval_batches = [(to_device(p[0]), to_device(p[1])) for p in eval_batches]
    model = Decoder(tb.load_safetensors(case["weights_path"]), m, t["seq_len"], device)
    loss_fn = model.loss
    provenance = {"torch_version": torch.__version__, "python_version": sys.version.split()[0]}
    if COMPILE:
        import torch._inductor.config as inductor
        inductor.compile_threads = threads  # its compile workers, too, stay within the host guard's count
        # A private cache per run: every run compiles from scratch, so the first-step time is the
        # compile time, not whatever an earlier run left in /tmp.
        os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", os.path.join(os.environ.get("TWINBENCH_OUTPUT_DIR", "/tmp"),
                                                                      "inductor-cache"))
        loss_fn = torch.compile(model.loss, backend="inductor", dynamic=False)
        provenance["torch_compile"] = "inductor"
    params = list(model.p.values())
    tb.emit({"twinbench_run": {"params": sum(p.numel() for p in params), "provenance": provenance}})
    decayed = [p for p in params if p.dim() >= 2]  # kernels and the embedding
    plain = [p for p in params if p.dim() < 2]     # norm scales
    opt = torch.optim.AdamW([{"params": decayed, "weight_decay": o["weight_decay"]},
                             {"params": plain, "weight_decay": 0.0}],
                            lr=t["lr"], betas=(o["beta1"], o["beta2"]), eps=o["eps"])
    accum = t["grad_accum"]
    max_norm = t["clip"] if t["clip"] > 0 else float("inf")

    def step(s):
        for group in opt.param_groups:
            group["lr"] = tb.learning_rate(t, o["lr_floor"], s)
        opt.zero_grad()
        step_loss = 0.0
        for a in range(accum):
            inputs, targets = train_batches[s * accum + a]
            loss = loss_fn(inputs, targets)
            (loss / accum).backward()
            step_loss += loss.item()
        grad_norm = float(torch.nn.utils.clip_grad_norm_(params, max_norm))
        if math.isfinite(step_loss) and math.isfinite(grad_norm):
            opt.step()
        if device.type == "cuda":
            torch.cuda.synchronize()
        return step_loss / accum, grad_norm

    def evaluate():
        # torch.compile guards on the grad mode: under no_grad it would compile a second
        # graph; the compiled function evaluates with autograd on (nothing is stepped).
        with torch.enable_grad() if COMPILE else torch.no_grad():
            return sum(loss_fn(i, g).item() for i, g in eval_batches) / len(eval_batches)

    for record in tb.train(case, step, evaluate):
        if device.type == "cuda":
            record["memory_bytes"] = torch.cuda.max_memory_allocated(device)
        tb.emit(record)


if __name__ == "__main__":
    main()
