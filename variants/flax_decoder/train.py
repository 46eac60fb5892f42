#!/usr/bin/env python3
"""twinbench's Flax implementations, run by twinbench as external variants
(docs/external.md, docs/frameworks.md):

    train.py --api linen    `linen`: linen_model.py, parameters as a tree, jax.jit
    train.py --api nnx      `nnx`:   nnx_model.py, parameters owned by the modules, nnx.jit

Both load the canonical initial weights and the token batches twinbench wrote,
and train with optax: twinbench's AdamW (betas, eps, weight decay on kernels
and the embedding), its schedule (variants/twinbench_trainer.py, one lr per
step) and torch's global-norm clipping rule. Dropout (explicit keys, ops.py),
bf16 compute and int8 (AQT-style fake quantization) are supported; fp8, data
parallel and other optimizers are skipped with the reason.

JAX compiles the step at its first call and dispatches asynchronously: step 0
holds the compilation (the first-step time, a warm-up step), and every step
time is read after jax.block_until_ready on the new parameters and optimizer
state. XLA sizes its CPU thread pool by the cores the process may use, so the
process keeps only $TWINBENCH_THREADS of them before JAX starts.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import twinbench_trainer as tb  # noqa: E402

API = sys.argv[sys.argv.index("--api") + 1] if "--api" in sys.argv[1:-1] else ""
NAME = os.environ.get("TWINBENCH_VARIANT", API)


def unsupported(case):
    if case["model"].get("quant_mode") == "fp8":
        return ("quant.mode = fp8 is not supported (twinbench's delayed-scaling fp8 emulation is not written "
                "for Flax; Flax's own fp8 ops keep different scaling state)")
    return tb.common_unsupported(case, supports=("bf16", "dropout", "int8"))


def make_optimizer(case):
    import jax
    import jax.numpy as jnp
    import optax
    t, o = case["train"], case["optimizer"]
    lrs = jnp.asarray([tb.learning_rate(t, o["lr_floor"], s) for s in range(t["steps"])], jnp.float32)
    clip = t["clip"]

    def clip_like_torch(updates, state, params=None):
        """torch's clip_grad_norm_: scale by min(1, clip / (norm + 1e-6)); clip 0 = off."""
        del params
        if clip <= 0:
            return updates, state
        scale = jnp.minimum(clip / (optax.global_norm(updates) + 1e-6), 1.0)
        return jax.tree.map(lambda g: g * scale, updates), state

    return optax.chain(
        optax.GradientTransformation(lambda _: optax.EmptyState(), clip_like_torch),
        optax.adamw(lambda count: lrs[jnp.minimum(count, lrs.shape[0] - 1)], b1=o["beta1"], b2=o["beta2"],
                    eps=o["eps"], weight_decay=o["weight_decay"],
                    mask=lambda params: jax.tree.map(lambda p: p.ndim >= 2, params)))


def micro_key(base, step, accum, a):
    """The dropout key of micro-batch a of step `step` (None without dropout)."""
    import jax
    return None if base is None else jax.random.fold_in(base, step * accum + a)


def linen_trainer(case, cfg, weights, tx, base_key):
    """(step_fn(inputs, targets, step) -> (loss, norm) arrays, eval_fn(inputs, targets), sync, params)."""
    import jax
    import optax
    import linen_model
    t = case["train"]
    model = linen_model.Transformer(cfg)
    state = {"params": linen_model.load_params(model, weights, t["batch"], t["seq_len"])}
    state["opt"] = tx.init(state["params"])

    def loss_fn(params, inputs, targets, key):
        return model.apply({"params": params}, inputs, targets, key)

    def train_step(params, opt_state, inputs, targets, step):  # inputs [A, B, S]
        accum = inputs.shape[0]
        loss, grads = 0.0, None
        for a in range(accum):
            la, ga = jax.value_and_grad(loss_fn)(params, inputs[a], targets[a], micro_key(base_key, step, accum, a))
            loss, grads = loss + la, ga if grads is None else jax.tree.map(lambda x, y: x + y, grads, ga)
        grads = jax.tree.map(lambda g: g / accum, grads)
        norm = optax.global_norm(grads)
        updates, opt_state = tx.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss / accum, norm

    jit_step = jax.jit(train_step, donate_argnums=(0, 1))
    jit_eval = jax.jit(lambda params, i, g: loss_fn(params, i, g, None))

    def step(inputs, targets, s):
        state["params"], state["opt"], loss, norm = jit_step(state["params"], state["opt"], inputs, targets, s)
        jax.block_until_ready((state["params"], state["opt"]))
        return loss, norm

    return step, lambda i, g: jit_eval(state["params"], i, g), lambda: state["params"]


def nnx_trainer(case, cfg, weights, tx, base_key):
    import jax
    import optax
    from flax import nnx
    import nnx_model
    model = nnx_model.load_model(cfg, weights)
    optimizer = nnx.Optimizer(model, tx, wrt=nnx.Param)

    @nnx.jit(donate_argnums=(0, 1))
    def train_step(model, optimizer, inputs, targets, step):  # inputs [A, B, S]
        accum = inputs.shape[0]
        loss, grads = 0.0, None
        for a in range(accum):
            key = micro_key(base_key, step, accum, a)
            la, ga = nnx.value_and_grad(lambda m: m(inputs[a], targets[a], key))(model)
            loss, grads = loss + la, ga if grads is None else jax.tree.map(lambda x, y: x + y, grads, ga)
        grads = jax.tree.map(lambda g: g / accum, grads)
        norm = optax.global_norm(grads)
        optimizer.update(model, grads)
        return loss / accum, norm

    eval_step = nnx.jit(lambda model, i, g: model(i, g, None))

    def step(inputs, targets, s):
        loss, norm = train_step(model, optimizer, inputs, targets, s)
        jax.block_until_ready(nnx.state((model, optimizer)))
        return loss, norm

    return step, lambda i, g: eval_step(model, i, g), lambda: nnx.state(model, nnx.Param)


def xla_cpu_threads():
    """Threads of XLA's CPU compute pool in this process (named tf_XLAEigen)."""
    count = 0
    for task in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{task}/comm") as f:
                count += f.read().strip() == "tf_XLAEigen"
        except OSError:
            pass
    return count


def main():
    if API not in ("linen", "nnx"):
        sys.exit("usage: train.py --api linen|nnx (run by twinbench; see docs/external.md)")
    case = tb.read_case()
    reason = unsupported(case)
    if reason:
        tb.skip(NAME, reason)
    cores = tb.bound_cpu_threads(max(1, int(case.get("threads", 1))))
    # Only the platform the case asked for: a CPU case never touches (or reserves memory on) a GPU.
    os.environ["JAX_PLATFORMS"] = "cuda" if case["device"] == "cuda" else "cpu"
    try:
        import jax
    except ImportError as e:
        sys.exit(f"{NAME}: cannot import jax ({e}): run ci/venv.sh, or set TWINBENCH_PYTHON to a Python with "
                 "jax, flax and optax")
    if case["device"] == "cuda":
        try:
            jax.devices("cuda")
        except RuntimeError:
            tb.skip(NAME, f"the case runs on CUDA and this jaxlib ({jax.__version__}) has no CUDA backend "
                          "(pip install jax[cuda13])")
    import flax
    import jax.numpy as jnp
    import numpy as np
    import optax
    import ops
    t = case["train"]
    cfg = ops.Config.from_case(case)
    weights = tb.load_safetensors(case["weights_path"])
    train_pairs, eval_pairs = tb.load_batches(case["batches_path"], case["batches"])
    accum = t["grad_accum"]
    # int32 tokens (JAX's default integer width), micro-batches grouped per step: [steps, A, B, S]
    train_in = train_pairs[:, 0].astype(np.int32).reshape(t["steps"], accum, t["batch"], t["seq_len"])
    train_tg = train_pairs[:, 1].astype(np.int32).reshape(t["steps"], accum, t["batch"], t["seq_len"])
    eval_batches = [(jnp.asarray(p[0].astype(np.int32)), jnp.asarray(p[1].astype(np.int32))) for p in eval_pairs]
    tx = make_optimizer(case)
    base_key = jax.random.key(t["seed"]) if cfg.dropout > 0 else None
    make = linen_trainer if API == "linen" else nnx_trainer
    step_fn, eval_fn, params = make(case, cfg, weights, tx, base_key)
    n_params = sum(int(np.prod(p.shape)) for p in jax.tree.leaves(params()))

    def step(s):
        loss, norm = step_fn(jnp.asarray(train_in[s]), jnp.asarray(train_tg[s]), jnp.int32(s))
        return float(loss), float(norm)

    def evaluate():
        return sum(float(eval_fn(i, g)) for i, g in eval_batches) / len(eval_batches)

    for record in tb.train(case, step, evaluate):
        if record["step"] == 0:  # after the first compilation: XLA's pools exist now
            tb.emit({"twinbench_run": {"params": n_params, "provenance": {
                "jax_version": jax.__version__, "flax_version": flax.__version__, "optax_version": optax.__version__,
                "flax_api": API, "jax_backend": jax.default_backend(), "cores_kept": cores,
                "xla_cpu_threads": xla_cpu_threads()}}})
        tb.emit(record)


if __name__ == "__main__":
    main()
