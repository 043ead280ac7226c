#!/usr/bin/env python3
"""Reference timings for the 16-bit floats on the GPU (run on the same device as lazycl):
torch eager and JAX jit over bfloat16 and float16. The report's `--narrow` rows use the
same names: the fused 8-op chain (JAX fuses it into one kernel; torch eager runs eight),
a full sum, softmax over rows, and GEMM 4096^3 (cuBLAS through torch, f32 accumulation).
Times are medians over repeated runs between device synchronizations, after a warm-up.
Bandwidth counts the bytes the operation must move (the chain: one read and one write).

  python3 benches/reference/narrow_reference.py            # a table
  python3 benches/reference/narrow_reference.py --json     # one JSON object per row
"""

import argparse
import json

import torch

from timing import median_seconds

N = 1 << 28
SOFTMAX = [(65536, 1024), (4096, 32768)]
GEMM = 4096
DTYPES = (("bf16", torch.bfloat16, "bfloat16"), ("f16", torch.float16, "float16"))


def chain8(x, np=torch):
    """The report's 8-op chain, with `np` torch or jax.numpy."""
    return np.tanh((np.sqrt(np.abs((x * 1.5 + 2.0) * x - 0.25) + 1.0) * 3.0) / 7.0 - x)


def torch_rows(dev):
    sync = torch.cuda.synchronize
    rows = []
    for short, dtype, _ in DTYPES:
        size = torch.finfo(dtype).bits // 8
        x = torch.rand(N, device=dev, dtype=dtype)
        t = median_seconds(lambda: chain8(x), sync, 10)
        rows.append({"name": f"torch chain8 {short} 2^28", "ms": t * 1e3, "gbps": 2 * N * size / t / 1e9})
        t = median_seconds(lambda: x.sum(), sync, 10)
        rows.append({"name": f"torch sum {short} 2^28", "ms": t * 1e3, "gbps": N * size / t / 1e9})
        for n, d in SOFTMAX:
            m = torch.randn(n, d, device=dev, dtype=dtype)
            t = median_seconds(lambda: torch.softmax(m, 1), sync, 10)
            rows.append({"name": f"torch softmax {short} {n}x{d}", "ms": t * 1e3,
                         "gbps": 2 * n * d * size / t / 1e9})
        a = torch.randn(GEMM, GEMM, device=dev, dtype=dtype)
        b = torch.randn(GEMM, GEMM, device=dev, dtype=dtype)
        t = median_seconds(lambda: a @ b, sync, 10)
        rows.append({"name": f"torch gemm {short} {GEMM}^3", "ms": t * 1e3,
                     "tflops": 2.0 * GEMM ** 3 / t / 1e12})
    return rows


def jax_rows():
    import jax
    import jax.numpy as jnp

    rows = []
    for short, _, name in DTYPES:
        dtype = getattr(jnp, name)
        size = jnp.dtype(dtype).itemsize
        x = jax.random.uniform(jax.random.PRNGKey(0), (N,), dtype=dtype)
        for what, f, moved in (("chain8", jax.jit(lambda v: chain8(v, jnp)), 2 * N * size), ("sum", jax.jit(jnp.sum), N * size)):
            state = {}

            def run():
                state["y"] = f(x)

            t = median_seconds(run, lambda: state["y"].block_until_ready(), 10)
            rows.append({"name": f"jax {what} {short} 2^28", "ms": t * 1e3, "gbps": moved / t / 1e9})
    return rows


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--json", action="store_true", help="one JSON object per row")
    args = p.parse_args()
    dev = torch.device("cuda")
    print(f"# device {torch.cuda.get_device_name(dev)}")
    rows = torch_rows(dev)
    try:
        rows += jax_rows()
    except Exception as e:  # JAX without a GPU backend: torch's rows alone
        print(f"# jax skipped: {e}")
    for r in rows:
        if args.json:
            print(json.dumps(r))
        else:
            figures = ", ".join(f"{k} {v:.3f}" for k, v in r.items() if k != "name")
            print(f"{r['name']}: {figures}")


if __name__ == "__main__":
    main()
