#!/usr/bin/env python3
"""Reference timings for training steps whose gradients the framework derives (run on the
same device as lazycl): JAX `jit(value_and_grad)` and torch eager autograd, f32 with TF32
off, for the report's `--grad` rows. A two-layer perceptron 784-1024-10 at batch 4096 with
softmax cross-entropy, and logistic regression on 200,000 x 100 with an L2 penalty. Each
step computes the loss and the updated parameters from the same parameters; times are
medians over repeated steps between device synchronizations, after a warm-up.

  python3 benches/reference/grad_reference.py            # a table
  python3 benches/reference/grad_reference.py --json     # one JSON object per row
"""

import argparse
import json

from timing import median_seconds

MLP = (4096, 784, 1024, 10)
LOGREG = (200_000, 100)
LR, LAMBDA = 0.05, 1e-3


def jax_rows():
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_default_matmul_precision", "highest")
    key = jax.random.PRNGKey(0)
    rows = []

    n, f, hidden, classes = MLP
    ks = jax.random.split(key, 4)
    params = (
        jax.random.normal(ks[0], (f, hidden), jnp.float32) * 0.05,
        jnp.zeros((hidden,), jnp.float32),
        jax.random.normal(ks[1], (hidden, classes), jnp.float32) * 0.05,
        jnp.zeros((classes,), jnp.float32),
    )
    x = jax.random.normal(ks[2], (n, f), jnp.float32)
    onehot = jax.nn.one_hot(jnp.arange(n) * 7 % classes, classes, dtype=jnp.float32)

    def mlp_loss(p, x, onehot):
        h = jnp.maximum(x @ p[0] + p[1], 0.0)
        logits = h @ p[2] + p[3]
        return jnp.mean(jax.nn.logsumexp(logits, axis=1) - jnp.sum(logits * onehot, axis=1))

    @jax.jit
    def mlp_step(p, x, onehot):
        loss, g = jax.value_and_grad(mlp_loss)(p, x, onehot)
        return loss, tuple(w - LR * gw for w, gw in zip(p, g))

    rows.append(timed(f"jax jit(grad) MLP step {f}-{hidden}-{classes} batch {n} f32", lambda: mlp_step(params, x, onehot)))

    m, d = LOGREG
    xs = jax.random.normal(ks[3], (m, d), jnp.float32)
    ys = (jax.random.uniform(key, (m, 1)) < 0.5).astype(jnp.float32)
    w, b = jnp.zeros((d,), jnp.float32), jnp.zeros((1,), jnp.float32)

    def logreg_loss(wb, x, y):
        w, b = wb
        z = jnp.sum(x * w, axis=1, keepdims=True) + b
        rows = jnp.maximum(z, 0.0) + jnp.log1p(jnp.exp(-jnp.abs(z))) - y * z
        return jnp.mean(rows) + 0.5 * LAMBDA * jnp.sum(w * w)

    @jax.jit
    def logreg_step(wb, x, y):
        loss, g = jax.value_and_grad(logreg_loss)(wb, x, y)
        return loss, tuple(p - 0.2 * gp for p, gp in zip(wb, g))

    rows.append(timed(f"jax jit(grad) logistic regression step {m}x{d} f32", lambda: logreg_step((w, b), xs, ys)))
    return rows


def timed(name, step):
    import jax

    state = {}

    def run():
        state["out"] = step()

    t = median_seconds(run, lambda: jax.block_until_ready(state["out"]), 20)
    return {"name": name, "ms": t * 1e3}


def torch_rows():
    import torch

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device("cuda")
    sync = torch.cuda.synchronize
    rows = []
    n, f, hidden, classes = MLP
    p = [
        (torch.randn(f, hidden, device=dev) * 0.05).requires_grad_(),
        torch.zeros(hidden, device=dev, requires_grad=True),
        (torch.randn(hidden, classes, device=dev) * 0.05).requires_grad_(),
        torch.zeros(classes, device=dev, requires_grad=True),
    ]
    x = torch.randn(n, f, device=dev)
    onehot = torch.nn.functional.one_hot(torch.arange(n, device=dev) * 7 % classes, classes).float()

    def mlp_step():
        h = torch.relu(x @ p[0] + p[1])
        logits = h @ p[2] + p[3]
        loss = (torch.logsumexp(logits, 1) - (logits * onehot).sum(1)).mean()
        g = torch.autograd.grad(loss, p)
        return loss, [w.detach() - LR * gw for w, gw in zip(p, g)]

    t = median_seconds(mlp_step, sync, 20)
    rows.append({"name": f"torch autograd MLP step {f}-{hidden}-{classes} batch {n} f32", "ms": t * 1e3})
    m, d = LOGREG
    xs = torch.randn(m, d, device=dev)
    ys = (torch.rand(m, 1, device=dev) < 0.5).float()
    w = torch.zeros(d, device=dev, requires_grad=True)
    b = torch.zeros(1, device=dev, requires_grad=True)

    def logreg_step():
        z = (xs * w).sum(1, keepdim=True) + b
        rows_ = torch.clamp(z, min=0) + torch.log1p(torch.exp(-z.abs())) - ys * z
        loss = rows_.mean() + 0.5 * LAMBDA * (w * w).sum()
        gw, gb = torch.autograd.grad(loss, (w, b))
        return loss, w.detach() - 0.2 * gw, b.detach() - 0.2 * gb

    t = median_seconds(logreg_step, sync, 20)
    rows.append({"name": f"torch autograd logistic regression step {m}x{d} f32", "ms": t * 1e3})
    return rows


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--json", action="store_true", help="one JSON object per row")
    args = p.parse_args()
    rows = []
    for source in (torch_rows, jax_rows):
        try:
            rows += source()
        except Exception as e:  # a framework without a GPU backend: the others' rows
            print(f"# {source.__name__} skipped: {e}")
    for r in rows:
        if args.json:
            print(json.dumps(r))
        else:
            print(f"{r['name']}: ms {r['ms']:.3f}")


if __name__ == "__main__":
    main()
