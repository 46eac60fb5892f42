"""The decoder in Flax NNX (`nnx`): stateful modules that own their parameters
as `nnx.Param` attributes, the object-stateful twin of linen_model.py (as
MaxText's NNX port is of its Linen model). The attribute paths are the
canonical names: ('decoder', 'layers', 3, 'self_attention', 'query', 'kernel')
joined by '.'. The math is ops.py.

The model is built abstractly (nnx.eval_shape: no random initialisation is
computed) and its state is then replaced by the canonical weights twinbench
wrote (load_model), as an NNX checkpoint is restored.
"""
import jax
import jax.numpy as jnp
from flax import nnx

import ops

_shape_only = nnx.initializers.zeros  # shapes for eval_shape; the values come from the weights file


class Dense(nnx.Module):
    """A projection with a canonical [in..., out...] kernel (MaxText's DenseGeneral)."""

    def __init__(self, shape, in_dims, cfg, rngs):
        self.kernel = nnx.Param(_shape_only(rngs.params(), shape, jnp.float32))
        self.in_dims, self.cfg = in_dims, cfg

    def __call__(self, x):
        return ops.dense(x, self.kernel[...], self.in_dims, self.cfg)


class RMSNorm(nnx.Module):
    def __init__(self, cfg):
        self.scale = nnx.Param(jnp.ones((cfg.d_model,), jnp.float32))
        self.eps = cfg.eps

    def __call__(self, x):
        return ops.rms_norm(x, self.scale[...], self.eps)


class Attention(nnx.Module):
    def __init__(self, c, rngs):
        self.cfg = c
        self.query = Dense((c.d_model, c.heads, c.head_dim), 1, c, rngs)
        self.key = Dense((c.d_model, c.kv_heads, c.head_dim), 1, c, rngs)
        self.value = Dense((c.d_model, c.kv_heads, c.head_dim), 1, c, rngs)
        self.out = Dense((c.heads, c.head_dim, c.d_model), 2, c, rngs)

    def __call__(self, h, cos, sin):  # h [B, S, d]
        c = self.cfg
        B, S, _ = h.shape
        q = self.query(h).reshape(B, S, c.heads, c.head_dim)
        k = self.key(h).reshape(B, S, c.kv_heads, c.head_dim)
        v = self.value(h).reshape(B, S, c.kv_heads, c.head_dim)
        q, k = ops.apply_rope(q, cos, sin), ops.apply_rope(k, cos, sin)
        return self.out(ops.causal_attention(q, k, v))


class Mlp(nnx.Module):
    def __init__(self, c, rngs):
        self.wi_0 = Dense((c.d_model, c.mlp_dim), 1, c, rngs)
        self.wi_1 = Dense((c.d_model, c.mlp_dim), 1, c, rngs)
        self.wo = Dense((c.mlp_dim, c.d_model), 1, c, rngs)

    def __call__(self, h):
        return self.wo(ops.swiglu(self.wi_0(h), self.wi_1(h)))


class DecoderLayer(nnx.Module):
    def __init__(self, c, layer, rngs):
        self.cfg, self.layer = c, layer
        self.pre_self_attention_layer_norm = RMSNorm(c)
        self.self_attention = Attention(c, rngs)
        self.post_self_attention_layer_norm = RMSNorm(c)
        self.mlp = Mlp(c, rngs)

    def __call__(self, x, cos, sin, dropout_key):
        rate = self.cfg.dropout
        h = self.pre_self_attention_layer_norm(x)
        x = x + ops.dropout(self.self_attention(h, cos, sin), rate, ops.site_key(dropout_key, self.layer, 0))
        h = self.post_self_attention_layer_norm(x)
        return x + ops.dropout(self.mlp(h), rate, ops.site_key(dropout_key, self.layer, 1))


class Decoder(nnx.Module):
    def __init__(self, c, rngs):
        self.layers = nnx.List([DecoderLayer(c, layer, rngs) for layer in range(c.layers)])
        self.decoder_norm = RMSNorm(c)
        self.logits_dense = Dense((c.d_model, c.vocab), 1, c, rngs)

    def __call__(self, x, cos, sin, dropout_key):
        for layer in self.layers:
            x = layer(x, cos, sin, dropout_key)
        return self.logits_dense(self.decoder_norm(x))  # [B, S, V]


class TokenEmbedder(nnx.Module):
    def __init__(self, c, rngs):
        self.embedding = nnx.Param(_shape_only(rngs.params(), (c.vocab, c.d_model), jnp.float32))

    def __call__(self, tokens):
        return jnp.take(self.embedding[...], tokens, axis=0)  # [B, S, d]


class Transformer(nnx.Module):
    def __init__(self, cfg, rngs):
        self.cfg = cfg
        self.token_embedder = TokenEmbedder(cfg, rngs)
        self.decoder = Decoder(cfg, rngs)

    def __call__(self, tokens, targets, dropout_key=None):
        """Mean token cross-entropy; dropout only where a key is given (training)."""
        c = self.cfg
        cos, sin = ops.rope_table(tokens.shape[1], c.head_dim, c.rope_base)  # constants of the trace
        logits = self.decoder(self.token_embedder(tokens), cos, sin, dropout_key)
        return ops.cross_entropy(logits, targets)


def to_canonical(path):
    """('decoder', 'layers', 3, 'mlp', 'wo', 'kernel') -> 'decoder.layers.3.mlp.wo.kernel'."""
    return ".".join(str(p) for p in path)


def load_model(cfg, weights):
    """An NNX Transformer whose parameters are the canonical `weights`
    (name -> numpy array); every name and shape must match."""
    abstract = nnx.eval_shape(lambda: Transformer(cfg, nnx.Rngs(0)))
    graphdef, state = nnx.split(abstract)
    flat = nnx.to_flat_state(state)
    names = {to_canonical(path): path for path, _ in flat}
    missing, extra = sorted(set(names) - set(weights)), sorted(set(weights) - set(names))
    if missing or extra:
        raise ValueError(f"canonical weights do not match the NNX model: missing {missing[:3]}, unknown {extra[:3]}")
    leaves = []
    for path, variable in flat:
        name = to_canonical(path)
        if tuple(weights[name].shape) != tuple(variable.shape):
            raise ValueError(f"{name}: the weights file has {weights[name].shape}, the NNX model {variable.shape}")
        leaves.append((path, variable.replace(jnp.asarray(weights[name]))))
    return nnx.merge(graphdef, nnx.from_flat_state(leaves))
