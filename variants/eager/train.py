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
import time

import torch
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

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


class Embedding(torch.nn.Module):
    def __init__(self, table):
        super().__init__()
        self.embedding = torch.nn.Parameter(table)

    def forward(self, tokens):
        return F.embedding(tokens, self.embedding)


class Layer(torch.nn.Module):
    """One decoder layer; with `remat` it keeps only its input and recomputes
    itself in backward (torch.utils.checkpoint, non-reentrant)."""

    NAMES = ("pre_self_attention_layer_norm.scale", "self_attention.query.kernel", "self_attention.key.kernel",
             "self_attention.value.kernel", "self_attention.out.kernel", "post_self_attention_layer_norm.scale",
             "mlp.wi_0.kernel", "mlp.wi_1.kernel", "mlp.wo.kernel")

    def __init__(self, tensors, m, remat):
        super().__init__()
        self.m, self.remat = m, remat
        (self.attn_norm, self.query, self.key, self.value, self.out, self.mlp_norm,
         self.wi_0, self.wi_1, self.wo) = (torch.nn.Parameter(t) for t in tensors)

    def forward(self, x, cos, sin, mask):
        if self.remat:
            return checkpoint(self.block, x, cos, sin, mask, use_reentrant=False)
        return self.block(x, cos, sin, mask)

    def block(self, x, cos, sin, mask):
        m = self.m
        B, S = x.shape[0], x.shape[1]
        h = rms_norm(x, self.attn_norm, m["eps"])
        q = dense(h, self.query).view(B, S, m["heads"], m["head_dim"])
        k = dense(h, self.key).view(B, S, m["kv_heads"], m["head_dim"])
        v = dense(h, self.value).view(B, S, m["kv_heads"], m["head_dim"])
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        x = x + dense(causal_attention(q, k, v, mask), self.out, 2)
        h = rms_norm(x, self.mlp_norm, m["eps"])
        gate = dense(h, self.wi_0)
        up = dense(h, self.wi_1)
        return x + dense(F.silu(gate) * up, self.wo)


class Head(torch.nn.Module):
    def __init__(self, norm, logits, eps):
        super().__init__()
        self.eps = eps
        self.norm, self.logits = torch.nn.Parameter(norm), torch.nn.Parameter(logits)

    def forward(self, x, targets):
        logits = dense(rms_norm(x, self.norm, self.eps), self.logits)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]).float(), targets.reshape(-1))


class Decoder(torch.nn.Module):
    """The canonical tensors as parameters ([in..., out...] kernels), in the units
    the C++ implementations shard: the embedding, each layer, the head."""

    def __init__(self, weights, m, seq_len, device, remat=False):
        super().__init__()
        w = {k: torch.from_numpy(v).to(device) for k, v in weights.items()}
        self.embed = Embedding(w["token_embedder.embedding"])
        self.layers = torch.nn.ModuleList(
            Layer([w[f"decoder.layers.{i}." + n] for n in Layer.NAMES], m, remat) for i in range(m["layers"]))
        self.head = Head(w["decoder.decoder_norm.scale"], w["decoder.logits_dense.kernel"], m["eps"])
        cos, sin = rope_table(seq_len, m["head_dim"], m["rope_base"])
        self.register_buffer("cos", cos.to(device), persistent=False)
        self.register_buffer("sin", sin.to(device), persistent=False)
        self.register_buffer("mask", torch.full((seq_len, seq_len), float("-inf"), device=device).triu(1),
                             persistent=False)

    def forward(self, tokens, targets):
        x = self.embed(tokens)
        for layer in self.layers:
            x = layer(x, self.cos, self.sin, self.mask)
        return self.head(x, targets)

    def loss(self, tokens, targets):
        return self(tokens, targets)


# ---- data parallel: the ranks, FSDP2 ---------------------------------------------------------

def fsdp2():
    """torch.distributed.fsdp.fully_shard (FSDP2; public since torch 2.6), or None.
    Imported only for a sharded case: Debian's torch 1.13 cannot even import its
    torch.distributed.fsdp on Python 3.11 (a dataclass error, not an ImportError)."""
    try:
        from torch.distributed.fsdp import fully_shard
        return fully_shard
    except Exception:  # noqa: BLE001 -- any failure to import means no FSDP2 here
        return None


def launch(nproc):
    """dist.nproc > 1: this process starts the ranks, each this script again with
    TWINBENCH_RANK set, and watches them as twinbench's launcher does: rank 0's
    stdout is the run's, the others' is discarded; when one fails the others are
    stopped and the exit names the rank. A stop request reaches every rank (the
    process group's signal); they agree on the step to stop after."""
    import signal
    import socket
    import subprocess
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    procs = []
    for rank in range(nproc):
        env = dict(os.environ, TWINBENCH_RANK=str(rank), TWINBENCH_WORLD_SIZE=str(nproc),
                   MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
        procs.append(subprocess.Popen([sys.executable] + sys.argv, env=env,
                                      stdout=None if rank == 0 else subprocess.DEVNULL))
    failed = None
    while failed is None and any(p.poll() is None for p in procs):
        for rank, p in enumerate(procs):
            if p.poll() not in (None, 0):
                failed = rank
                break
        time.sleep(0.05)
    if failed is None:
        failed = next((r for r, p in enumerate(procs) if p.returncode != 0), None)
    if failed is not None:
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        deadline = time.time() + 5
        for p in procs:
            try:
                p.wait(timeout=max(0.1, deadline - time.time()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        code = procs[failed].returncode
        print(f"{NAME}: rank {failed} " + (f"was killed by signal {-code}" if code < 0 else f"exited with code {code}"),
              file=sys.stderr, flush=True)
        return 1
    return 0


# ---- training -----------------------------------------------------------------------------

def unsupported(case):
    sharded = case["dist"].get("shard", "none") == "zero3"
    if sharded and fsdp2() is None:
        return f"dist.shard = zero3 needs FSDP2 (torch.distributed.fsdp.fully_shard), which torch {torch.__version__} lacks"
    reason = tb.common_unsupported(case, supports=("dist", "remat", "zero3"))
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
    nproc = case["dist"]["nproc"]
    if nproc > 1 and "TWINBENCH_RANK" not in os.environ:
        sys.exit(launch(nproc))
    rank = int(os.environ.get("TWINBENCH_RANK", "0"))
    sharded = case["dist"].get("shard", "none") == "zero3"
    remat = case["train"].get("remat", "none") == "full"
    threads = max(1, int(case.get("threads", 1)))
    torch.set_num_threads(threads)
    device = torch.device(case["device"])
    if device.type == "cuda":
        device = torch.device("cuda", rank % torch.cuda.device_count())
        torch.cuda.set_device(device)
    m, t, o = case["model"], case["train"], case["optimizer"]
    distributed = nproc > 1 or sharded
    if distributed:
        import torch.distributed as dist
        if "MASTER_PORT" not in os.environ:  # a sharded run of one rank: a group of its own
            import socket
            with socket.socket() as sock:
                sock.bind(("127.0.0.1", 0))
                os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(sock.getsockname()[1]))
        dist.init_process_group("nccl" if device.type == "cuda" else "gloo", rank=rank, world_size=nproc)
    train_batches, eval_batches = tb.load_batches(case["batches_path"], case["batches"])
    # The batch file holds the global batch (train.batch rows per rank); rank r trains on its rows.
    if case["batches"]["batch"] != nproc * t["batch"]:
        raise SystemExit(f"{NAME}: the batch file holds {case['batches']['batch']} rows a batch, not the global "
                         f"{nproc} x {t['batch']}")
    rows = slice(rank * t["batch"], (rank + 1) * t["batch"])
    to_device = lambda a: torch.from_numpy(a).to(device)  # noqa: E731
    train_batches = [(to_device(p[0][rows]), to_device(p[1][rows])) for p in train_batches]
    eval_batches = [(to_device(p[0]), to_device(p[1])) for p in eval_batches]
    model = Decoder(tb.load_safetensors(case["weights_path"]), m, t["seq_len"], device, remat=remat)
    provenance = {"torch_version": torch.__version__, "python_version": sys.version.split()[0]}
    if COMPILE:
        import torch._inductor.config as inductor
        inductor.compile_threads = threads  # its compile workers, too, stay within the host guard's count
        # A private cache per run: every run compiles from scratch, so the first-step time is the
        # compile time, not whatever an earlier run left in /tmp.
        os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", os.path.join(os.environ.get("TWINBENCH_OUTPUT_DIR", "/tmp"),
                                                                      "inductor-cache"))
        provenance["torch_compile"] = "inductor"
    loss_fn = model.loss
    if sharded:
        # FSDP2 as torchtitan applies it: each unit the C++ implementations shard (the
        # embedding, each layer, the head) is one fully_shard group over a 1-D mesh,
        # its layers recomputed per block (train.remat) and compiled per block.
        from torch.distributed.device_mesh import init_device_mesh
        fully_shard = fsdp2()
        mesh = init_device_mesh(device.type, (nproc,))
        for i, layer in enumerate(model.layers):
            if COMPILE:
                layer.compile(backend="inductor", dynamic=False)
            fully_shard(layer, mesh=mesh)
        fully_shard(model.embed, mesh=mesh)
        fully_shard(model.head, mesh=mesh)
        fully_shard(model, mesh=mesh)
        provenance["fsdp"] = "fully_shard per unit (embedding, each layer, head)"
    elif COMPILE:
        loss_fn = torch.compile(model.loss, backend="inductor", dynamic=False)
    if distributed:
        provenance["world_size"] = nproc
    # The canonical tensors in canonical order (sharded: FSDP2's DTensors that replaced them).
    params = list(model.parameters())
    decayed = [p for p in params if p.dim() >= 2]  # kernels and the embedding
    plain = [p for p in params if p.dim() < 2]     # norm scales
    if rank == 0:
        tb.emit({"twinbench_run": {"params": sum(p.numel() for p in params), "provenance": provenance}})
    opt = torch.optim.AdamW([{"params": decayed, "weight_decay": o["weight_decay"]},
                             {"params": plain, "weight_decay": 0.0}],
                            lr=t["lr"], betas=(o["beta1"], o["beta2"]), eps=o["eps"])
    accum = t["grad_accum"]
    max_norm = t["clip"] if t["clip"] > 0 else float("inf")

    def mean_over_ranks(value):
        if not distributed:
            return value
        v = torch.tensor([value], dtype=torch.float64, device=device)
        dist.all_reduce(v)  # SUM, then divided here
        return float(v.item()) / nproc

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
        if distributed and not sharded:  # replicated: the mean gradient, as twinbench's DataParallel
            for p in params:
                dist.all_reduce(p.grad)
                p.grad.mul_(1.0 / nproc)
        norm = torch.nn.utils.clip_grad_norm_(params, max_norm)  # FSDP2: over every rank's shards
        grad_norm = float(norm.full_tensor() if hasattr(norm, "full_tensor") else norm)
        step_loss = mean_over_ranks(step_loss / accum)
        if math.isfinite(step_loss) and math.isfinite(grad_norm):
            opt.step()
        if device.type == "cuda":
            torch.cuda.synchronize()
        return step_loss, grad_norm

    def evaluate():
        # torch.compile guards on the grad mode: under no_grad it would compile a second
        # graph; the compiled function evaluates with autograd on (nothing is stepped).
        with torch.enable_grad() if COMPILE else torch.no_grad():
            return sum(loss_fn(i, g).item() for i, g in eval_batches) / len(eval_batches)

    def agree_stop(stop):
        return mean_over_ranks(1.0 if stop else 0.0) > 0

    for record in tb.train(case, step, evaluate, agree_stop if distributed else None):
        if device.type == "cuda":
            record["memory_bytes"] = torch.cuda.max_memory_allocated(device)
        if rank == 0:
            tb.emit(record)
    if distributed:
        # Every rank past its last collective before any tears its group down: Gloo's threads of a
        # rank whose peer had gone aborted the process at exit ("terminate called without an active
        # exception", rank 1 of an FSDP2 run, after all its steps were stored).
        dist.barrier()
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
