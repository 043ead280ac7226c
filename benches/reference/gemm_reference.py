#!/usr/bin/env python3
"""Reference timings for matrix products on the GPU (run on the same device as lazycl).

cuBLAS through torch, TF32 off (the float32 products lazycl's GEMM is measured against):
SGEMM and DGEMM, and SGEMM with a bias + ReLU epilogue; and a k-means Lloyd step whose
squared distances are one GEMM (|x|^2 - 2 x c^T + |c|^2), in torch eager and JAX jit.
Data is random (these are timings, not results to compare). Times are medians over
repeated runs between device synchronizations, after a warm-up.

  python3 benches/reference/gemm_reference.py            # everything
  python3 benches/reference/gemm_reference.py --json     # one JSON object per row
  python3 benches/reference/gemm_reference.py --only gemm   # or: kmeans
"""

import argparse
import json

import torch

from timing import median_seconds


def gemm_rows(dev):
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    sync = torch.cuda.synchronize
    rows = []
    for dtype, sizes in ((torch.float32, (4096, 8192)), (torch.float64, (4096,))):
        for n in sizes:
            a = torch.randn(n, n, device=dev, dtype=dtype)
            b = torch.randn(n, n, device=dev, dtype=dtype)
            bias = torch.randn(n, device=dev, dtype=dtype)
            flops = 2.0 * n ** 3
            reps = 10 if n <= 4096 else 3
            name = "sgemm" if dtype == torch.float32 else "dgemm"
            t = median_seconds(lambda: a @ b, sync, reps)
            rows.append({"name": f"torch {name} {n}^3", "ms": t * 1e3, "tflops": flops / t / 1e12})
            if dtype == torch.float32:
                t = median_seconds(lambda: torch.relu(torch.addmm(bias, a, b)), sync, reps)
                rows.append({"name": f"torch {name} {n}^3 + bias + relu", "ms": t * 1e3,
                             "tflops": flops / t / 1e12})
    return rows


def kmeans_rows(dev):
    rows = []
    for n, d, k in ((100_000, 64, 32), (1_000_000, 16, 8)):
        x = torch.randn(n, d, device=dev)
        c = x[:k].clone()
        xx = (x * x).sum(1, keepdim=True)

        def step():
            dist = xx - 2.0 * (x @ c.T) + (c * c).sum(1)
            labels = dist.argmin(1)
            sums = torch.zeros(k, d, device=dev).index_add_(0, labels, x)
            counts = torch.bincount(labels, minlength=k).clamp(min=1).unsqueeze(1)
            return sums / counts

        t = median_seconds(step, torch.cuda.synchronize, 20)
        rows.append({"name": f"torch eager kmeans step {n}x{d} k={k}", "ms": t * 1e3})
        try:
            rows.append(jax_kmeans(n, d, k))
        except Exception as e:  # JAX missing or without a GPU: say so, keep the rest
            rows.append({"name": f"jax jit kmeans step {n}x{d} k={k}", "error": repr(e)[:200]})
    return rows


def jax_kmeans(n, d, k):
    import jax
    import jax.numpy as jnp

    key = jax.random.PRNGKey(0)
    x = jax.random.normal(key, (n, d), dtype=jnp.float32)
    c = x[:k]
    xx = jnp.sum(x * x, axis=1, keepdims=True)

    @jax.jit
    def step(c):
        dist = xx - 2.0 * (x @ c.T) + jnp.sum(c * c, axis=1)
        labels = jnp.argmin(dist, axis=1)
        sums = jax.ops.segment_sum(x, labels, num_segments=k)
        counts = jnp.maximum(jnp.bincount(labels, length=k), 1)[:, None]
        return sums / counts

    state = {"c": c}

    def run():
        state["c"] = step(state["c"])

    t = median_seconds(run, lambda: state["c"].block_until_ready(), 20)
    return {"name": f"jax jit kmeans step {n}x{d} k={k}", "ms": t * 1e3,
            "device": str(jax.devices()[0])}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--only", choices=["gemm", "kmeans"])
    p.add_argument("--json", action="store_true")
    a = p.parse_args()
    dev = torch.device("cuda")
    rows = []
    if a.only in (None, "gemm"):
        rows += gemm_rows(dev)
    if a.only in (None, "kmeans"):
        rows += kmeans_rows(dev)
    print(f"# {torch.cuda.get_device_name(0)}, torch {torch.__version__}")
    for r in rows:
        if a.json:
            print(json.dumps(r))
        else:
            extra = f"  {r['tflops']:.1f} TFLOP/s" if "tflops" in r else ""
            print(f"{r['name']:<48} {r.get('ms', float('nan')):9.3f} ms{extra}  {r.get('error', '')}")


if __name__ == "__main__":
    main()
