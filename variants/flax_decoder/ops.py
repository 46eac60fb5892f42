"""The decoder's math for the Flax implementations, written once in JAX as
models/ops.cpp writes it for the C++ ones (same ops in the same order): the
Linen model (linen_model.py) and the NNX model (nnx_model.py) differ only in
how they hold their parameters, and both call these functions.

Shapes: B batch, S sequence, d model width, H query heads, KV key/value
heads, hd head width, V vocabulary. Kernels are canonical [in..., out...].
"""
import math
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np


@dataclass(frozen=True)
class Config:
    """The case's model section plus how the dense sites compute."""
    d_model: int
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    mlp_dim: int
    vocab: int
    rope_base: float
    eps: float
    dropout: float = 0.0
    quant: str = "none"            # none | int8
    dtype: str = "float32"         # compute dtype of the dense sites: float32 | bfloat16

    @staticmethod
    def from_case(case):
        m, t = case["model"], case["train"]
        return Config(d_model=m["d_model"], layers=m["layers"], heads=m["heads"], kv_heads=m["kv_heads"],
                      head_dim=m["head_dim"], mlp_dim=m["mlp_dim"], vocab=m["vocab"], rope_base=m["rope_base"],
                      eps=m["eps"], dropout=m["dropout"], quant=m.get("quant_mode", "none"),
                      dtype="bfloat16" if t["dtype"] == "bf16" else "float32")


def rms_norm(x, scale, eps):
    x32 = x.astype(jnp.float32)
    inv = jax.lax.rsqrt(jnp.mean(jnp.square(x32), axis=-1, keepdims=True) + eps)
    return (x32 * inv * scale.astype(jnp.float32)).astype(x.dtype)


def rope_table(seq_len, head_dim, base):
    """cos, sin [S, hd] in float32, computed in float64 as the C++ table is."""
    fraction = np.arange(0, head_dim, 2, dtype=np.float64) / head_dim
    angles = np.outer(np.arange(seq_len, dtype=np.float64), np.power(base, -fraction))
    both = np.concatenate([angles, angles], axis=-1)
    return np.cos(both).astype(np.float32), np.sin(both).astype(np.float32)


def apply_rope(x, cos, sin):
    """x [B, S, heads, hd]: rotate-half RoPE."""
    S, half = x.shape[1], x.shape[3] // 2
    cos = jnp.asarray(cos[:S]).reshape(1, S, 1, -1).astype(x.dtype)
    sin = jnp.asarray(sin[:S]).reshape(1, S, 1, -1).astype(x.dtype)
    rotated = jnp.concatenate([-x[..., half:], x[..., :half]], axis=-1)
    return x * cos + rotated * sin


def causal_attention(q, k, v):
    """q [B, S, H, hd], k and v [B, S, KV, hd] -> [B, S, H*hd]; kv head j serves query heads j*H/KV ..."""
    B, S, H, hd = q.shape
    if k.shape[2] != H:
        k = jnp.repeat(k, H // k.shape[2], axis=2)
        v = jnp.repeat(v, H // v.shape[2], axis=2)
    mask = jnp.triu(jnp.full((S, S), -jnp.inf, dtype=q.dtype), 1)
    scores = mask + jnp.einsum("bqhd,bkhd->bhqk", q, k) * (1.0 / math.sqrt(hd))  # [B, H, S, S]
    probs = jax.nn.softmax(scores, axis=-1)
    out = jnp.einsum("bhqk,bkhd->bqhd", probs, v)
    return out.reshape(B, S, H * hd)


# ---- dense sites: plain, bf16 compute, or AQT-style int8 (models/quant.h) -----------------

def fake_quant_int8(x, axis):
    """Symmetric int8 fake quantization, one scale per slice along `axis` (amax / 127;
    a slice of zeros keeps scale 0), round half to even, clamp to [-127, 127], in fp32."""
    scale = jnp.max(jnp.abs(x), axis=axis, keepdims=True) / 127.0
    divisor = jnp.where(scale > 0, scale, jnp.ones_like(scale))
    return jnp.clip(jnp.round(x / divisor), -127.0, 127.0) * scale


@jax.custom_vjp
def _ste_tokens(x):  # per token (last axis)
    return fake_quant_int8(x, -1)


@jax.custom_vjp
def _ste_channels(w):  # per output channel (amax over `in`, axis 0)
    return fake_quant_int8(w, 0)


# Straight-through: the quantizers pass the gradient unchanged, so the matmul's own
# gradient is taken at the quantized operands (AQT's convention, as models/quant.cpp).
_ste_tokens.defvjp(lambda x: (_ste_tokens(x), None), lambda _, g: (g,))
_ste_channels.defvjp(lambda w: (_ste_channels(w), None), lambda _, g: (g,))


def dense(x, kernel, in_dims, cfg):
    """x [..., in] @ kernel [in..., out...] viewed as [in, out] -> [..., out]."""
    n_in = math.prod(kernel.shape[:in_dims])
    w = kernel.reshape(n_in, -1)
    if cfg.quant == "int8":
        return _ste_tokens(x.astype(jnp.float32)) @ _ste_channels(w.astype(jnp.float32))
    if cfg.dtype == "bfloat16":  # bf16 compute, fp32 master weights (autocast's matmuls)
        return x.astype(jnp.bfloat16) @ w.astype(jnp.bfloat16)
    return x @ w


def swiglu(gate, up):
    return jax.nn.silu(gate) * up


def dropout(x, rate, key):
    """Inverted dropout with an explicit key (None or rate 0: identity). Both Flax
    implementations derive the same keys (site_key), so they draw the same masks;
    JAX's random stream is not LibTorch's, so against the C++ implementations
    dropout curves agree only statistically."""
    if key is None or rate <= 0.0:
        return x
    keep = jax.random.bernoulli(key, 1.0 - rate, x.shape)
    return x * keep.astype(x.dtype) * (1.0 / (1.0 - rate))


def site_key(key, layer, site):
    """The key of dropout site `site` (0 attention, 1 MLP) of `layer`: 2*layer+site, as the C++ models."""
    return None if key is None else jax.random.fold_in(key, 2 * layer + site)


def cross_entropy(logits, targets):
    """Mean token cross-entropy in fp32. logits [B, S, V], targets [B, S]."""
    logp = jax.nn.log_softmax(logits.astype(jnp.float32), axis=-1)
    return -jnp.mean(jnp.take_along_axis(logp, targets[..., None], axis=-1))
