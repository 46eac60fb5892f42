#!/usr/bin/python3
"""The twinbench decoder written plainly in PyTorch eager, as a user would: the
speed reference that ci/campaigns/perf.sh compares both C++ implementations against.

Same architecture as models/ (RMSNorm, rotate-half RoPE, grouped-query causal
attention, SwiGLU MLP, untied logits head, mean token cross-entropy), the same
parameter count as `twinbench plan`, AdamW (betas 0.9/0.95, eps 1e-8, weight
decay 0.1 on matrices and the embedding) and global-norm clipping at 1.0 as in
harness/run/train/trainer.cpp. Nothing clever: nn.Module, nn.Linear, torch.optim.AdamW.

Run with Debian's python3-torch (/usr/bin/python3: LibTorch 1.13, same BLAS):
    /usr/bin/python3 ci/campaigns/perf/eager_reference.py --steps 8 --threads 2
Prints one JSON object: steady-state step time (steps after the warm-up ones)
and tokens/s. --profile N writes a torch.profiler op table of N steps to stderr.
"""
import argparse
import json
import math
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

PRESETS = {  # d, layers, heads, kv_heads, head_dim, mlp, vocab (models/config.cpp)
    "tiny": (64, 2, 4, 2, 16, 192, 256),
    "small": (512, 4, 8, 8, 64, 1536, 8192),
}


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.scale = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        x32 = x.float()
        out = x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + self.eps) * self.scale
        return out.to(x.dtype)


def rope_tables(seq_len, head_dim, base=10000.0):
    inv = base ** -(torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)
    angles = torch.outer(torch.arange(seq_len, dtype=torch.float64), inv)
    both = torch.cat([angles, angles], -1)
    return both.cos().float(), both.sin().float()  # [S, hd]


def apply_rope(x, cos, sin):  # x [B, S, heads, hd]
    half = x.shape[-1] // 2
    rotated = torch.cat([-x[..., half:], x[..., :half]], -1)
    S = x.shape[1]
    return x * cos[:S, None, :] + rotated * sin[:S, None, :]


class Attention(nn.Module):
    def __init__(self, d, heads, kv_heads, head_dim):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, head_dim
        self.query = nn.Linear(d, heads * head_dim, bias=False)
        self.key = nn.Linear(d, kv_heads * head_dim, bias=False)
        self.value = nn.Linear(d, kv_heads * head_dim, bias=False)
        self.out = nn.Linear(heads * head_dim, d, bias=False)

    def forward(self, x, cos, sin, mask):
        B, S, _ = x.shape
        q = apply_rope(self.query(x).view(B, S, self.heads, self.head_dim), cos, sin)
        k = apply_rope(self.key(x).view(B, S, self.kv_heads, self.head_dim), cos, sin)
        v = self.value(x).view(B, S, self.kv_heads, self.head_dim)
        q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)  # [B, heads, S, hd]
        if self.kv_heads != self.heads:
            k = k.repeat_interleave(self.heads // self.kv_heads, dim=1)
            v = v.repeat_interleave(self.heads // self.kv_heads, dim=1)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim) + mask[:S, :S]
        out = torch.softmax(scores, -1) @ v  # [B, H, S, hd]
        return self.out(out.transpose(1, 2).reshape(B, S, -1))


class Mlp(nn.Module):
    def __init__(self, d, mlp):
        super().__init__()
        self.wi_0 = nn.Linear(d, mlp, bias=False)
        self.wi_1 = nn.Linear(d, mlp, bias=False)
        self.wo = nn.Linear(mlp, d, bias=False)

    def forward(self, x):
        return self.wo(F.silu(self.wi_0(x)) * self.wi_1(x))


class Block(nn.Module):
    def __init__(self, d, heads, kv_heads, head_dim, mlp):
        super().__init__()
        self.attn_norm = RMSNorm(d)
        self.attn = Attention(d, heads, kv_heads, head_dim)
        self.mlp_norm = RMSNorm(d)
        self.mlp = Mlp(d, mlp)

    def forward(self, x, cos, sin, mask):
        x = x + self.attn(self.attn_norm(x), cos, sin, mask)
        return x + self.mlp(self.mlp_norm(x))


class Decoder(nn.Module):
    def __init__(self, d, layers, heads, kv_heads, head_dim, mlp, vocab, seq_len):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.layers = nn.ModuleList(Block(d, heads, kv_heads, head_dim, mlp) for _ in range(layers))
        self.norm = RMSNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)
        cos, sin = rope_tables(seq_len, head_dim)
        self.register_buffer("cos", cos)
        self.register_buffer("sin", sin)
        self.register_buffer("mask", torch.full((seq_len, seq_len), float("-inf")).triu(1))

    def forward(self, tokens, targets):
        x = self.embed(tokens)
        for layer in self.layers:
            x = layer(x, self.cos, self.sin, self.mask)
        logits = self.head(self.norm(x))
        return F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]), targets.reshape(-1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", default="small", choices=sorted(PRESETS))
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--seq-len", type=int, default=256)
    ap.add_argument("--steps", type=int, default=8, help="optimizer steps in all")
    ap.add_argument("--warmup", type=int, default=2, help="leading steps left out of the statistics")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--dtype", default="fp32", choices=["fp32", "bf16"], help="bf16: CPU autocast")
    ap.add_argument("--profile", type=int, default=0, help="profile N more steps, op table to stderr")
    a = ap.parse_args()
    if a.steps <= a.warmup:
        ap.error(f"--steps ({a.steps}) must exceed --warmup ({a.warmup})")

    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    d, L, H, KV, hd, mlp, V = PRESETS[a.preset]
    model = Decoder(d, L, H, KV, hd, mlp, V, a.seq_len)
    params = sum(p.numel() for p in model.parameters())
    decayed = [p for n, p in model.named_parameters() if p.dim() >= 2]
    plain = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decayed, "weight_decay": 0.1}, {"params": plain, "weight_decay": 0.0}],
                            lr=1e-3, betas=(0.9, 0.95), eps=1e-8)
    data = torch.randint(0, V, (a.batch, a.seq_len + 1))

    def step():
        tokens, targets = data[:, :-1].contiguous(), data[:, 1:].contiguous()
        opt.zero_grad()
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=a.dtype == "bf16"):
            loss = model(tokens, targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        return loss.item()

    times, loss = [], 0.0
    for _ in range(a.steps):
        start = time.perf_counter()
        loss = step()
        times.append(time.perf_counter() - start)
    steady = times[a.warmup:]
    mean = statistics.mean(steady)
    tokens = a.batch * a.seq_len
    print(json.dumps({
        "impl": "eager", "preset": a.preset, "dtype": a.dtype, "threads": a.threads, "params": params,
        "batch": a.batch, "seq_len": a.seq_len, "steady_steps": len(steady), "final_loss": loss,
        "step_time_mean_s": mean, "step_time_median_s": statistics.median(steady),
        "tokens_per_s": tokens / mean, "torch": torch.__version__,
    }))

    if a.profile:
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            for _ in range(a.profile):
                step()
        print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=40), file=sys.stderr)


if __name__ == "__main__":
    main()
