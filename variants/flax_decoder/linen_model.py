"""The decoder in Flax Linen (`linen`): stateless modules whose parameters live
in a separate tree handed to `apply`, with MaxText's unscanned Linen names
(token_embedder/embedding, decoder/layers_3/self_attention/query/kernel, ...).
The canonical names are those names joined by '.', with `layers_N` written
`layers.N` (to_canonical / from_canonical). The math is ops.py.

Parameters are never initialised here from random numbers that matter: the
initialisers only give `init` the shapes, and the trainer loads the canonical
weights twinbench wrote (see load_params).
"""
import re

import flax.linen as nn
import jax
import jax.numpy as jnp

import ops

_shape_only = nn.initializers.zeros  # shapes for eval_shape; the values come from the weights file


class Dense(nn.Module):
    """A projection with a canonical [in..., out...] kernel (MaxText's DenseGeneral)."""
    shape: tuple
    in_dims: int
    cfg: ops.Config

    @nn.compact
    def __call__(self, x):
        kernel = self.param("kernel", _shape_only, self.shape, jnp.float32)
        return ops.dense(x, kernel, self.in_dims, self.cfg)


class RMSNorm(nn.Module):
    cfg: ops.Config

    @nn.compact
    def __call__(self, x):
        return ops.rms_norm(x, self.param("scale", nn.initializers.ones, (self.cfg.d_model,), jnp.float32),
                            self.cfg.eps)


class Attention(nn.Module):
    cfg: ops.Config

    @nn.compact
    def __call__(self, h, cos, sin):  # h [B, S, d]
        c = self.cfg
        B, S, _ = h.shape
        q = Dense((c.d_model, c.heads, c.head_dim), 1, c, name="query")(h).reshape(B, S, c.heads, c.head_dim)
        k = Dense((c.d_model, c.kv_heads, c.head_dim), 1, c, name="key")(h).reshape(B, S, c.kv_heads, c.head_dim)
        v = Dense((c.d_model, c.kv_heads, c.head_dim), 1, c, name="value")(h).reshape(B, S, c.kv_heads, c.head_dim)
        q, k = ops.apply_rope(q, cos, sin), ops.apply_rope(k, cos, sin)
        return Dense((c.heads, c.head_dim, c.d_model), 2, c, name="out")(ops.causal_attention(q, k, v))


class Mlp(nn.Module):
    cfg: ops.Config

    @nn.compact
    def __call__(self, h):
        c = self.cfg
        gate = Dense((c.d_model, c.mlp_dim), 1, c, name="wi_0")(h)
        up = Dense((c.d_model, c.mlp_dim), 1, c, name="wi_1")(h)
        return Dense((c.mlp_dim, c.d_model), 1, c, name="wo")(ops.swiglu(gate, up))


class DecoderLayer(nn.Module):
    cfg: ops.Config
    layer: int

    @nn.compact
    def __call__(self, x, cos, sin, dropout_key):
        c = self.cfg
        h = RMSNorm(c, name="pre_self_attention_layer_norm")(x)
        x = x + ops.dropout(Attention(c, name="self_attention")(h, cos, sin), c.dropout,
                            ops.site_key(dropout_key, self.layer, 0))
        h = RMSNorm(c, name="post_self_attention_layer_norm")(x)
        return x + ops.dropout(Mlp(c, name="mlp")(h), c.dropout, ops.site_key(dropout_key, self.layer, 1))


class Decoder(nn.Module):
    cfg: ops.Config

    @nn.compact
    def __call__(self, x, cos, sin, dropout_key):
        c = self.cfg
        for layer in range(c.layers):
            x = DecoderLayer(c, layer, name=f"layers_{layer}")(x, cos, sin, dropout_key)
        x = RMSNorm(c, name="decoder_norm")(x)
        return Dense((c.d_model, c.vocab), 1, c, name="logits_dense")(x)  # [B, S, V]


class TokenEmbedder(nn.Module):
    cfg: ops.Config

    @nn.compact
    def __call__(self, tokens):
        table = self.param("embedding", _shape_only, (self.cfg.vocab, self.cfg.d_model), jnp.float32)
        return jnp.take(table, tokens, axis=0)  # [B, S, d]


class Transformer(nn.Module):
    cfg: ops.Config

    @nn.compact
    def __call__(self, tokens, targets, dropout_key=None):
        """Mean token cross-entropy; dropout only where a key is given (training)."""
        c = self.cfg
        cos, sin = ops.rope_table(tokens.shape[1], c.head_dim, c.rope_base)  # constants of the trace
        x = TokenEmbedder(c, name="token_embedder")(tokens)
        logits = Decoder(c, name="decoder")(x, cos, sin, dropout_key)
        return ops.cross_entropy(logits, targets)


def to_canonical(path):
    """('decoder', 'layers_3', 'mlp', 'wo', 'kernel') -> 'decoder.layers.3.mlp.wo.kernel'."""
    return re.sub(r"(^|\.)layers_(\d+)(\.|$)", r"\1layers.\2\3", ".".join(path))


def load_params(model, weights, batch, seq_len):
    """The Linen parameter tree of `model` filled from canonical `weights`
    (name -> numpy array); every name and shape must match."""
    tokens = jnp.zeros((batch, seq_len), jnp.int32)
    shapes = jax.eval_shape(model.init, jax.random.key(0), tokens, tokens)["params"]
    flat = {}
    for path, leaf in jax.tree_util.tree_flatten_with_path(shapes)[0]:
        flat[to_canonical(tuple(p.key for p in path))] = leaf
    missing, extra = sorted(set(flat) - set(weights)), sorted(set(weights) - set(flat))
    if missing or extra:
        raise ValueError(f"canonical weights do not match the Linen model: missing {missing[:3]}, unknown {extra[:3]}")
    for name, leaf in flat.items():
        if tuple(weights[name].shape) != tuple(leaf.shape):
            raise ValueError(f"{name}: the weights file has {weights[name].shape}, the Linen model {leaf.shape}")
    return jax.tree_util.tree_map_with_path(
        lambda path, _: jnp.asarray(weights[to_canonical(tuple(p.key for p in path))]), shapes)
