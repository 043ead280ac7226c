#!/usr/bin/env python3
"""Reference timings for the array algorithms (scans, take, scatter_add, bincount, sorts,
compaction) on the GPU, run on the same device as lazycl: torch eager and JAX jit. Times
are medians over repeated runs between device synchronizations, after a warm-up.
Bandwidth counts one read and one write of the array (what a scan must move); sorts
count keys per second.

  python3 benches/reference/arrays_reference.py            # a table
  python3 benches/reference/arrays_reference.py --json     # one JSON object per row
"""

import argparse
import json

import torch

from timing import median_seconds


# (name, shape, axis, dtype): the report's scan rows use the same names.
SCANS = [
    ("cumsum f32 2^28", (1 << 28,), 0, "float32"),
    ("cumsum i32 2^28", (1 << 28,), 0, "int32"),
    ("cumsum f32 16384x16384 axis 1", (16384, 16384), 1, "float32"),
    ("cumsum f32 16384x16384 axis 0", (16384, 16384), 0, "float32"),
    ("cumsum f32 1048576x256 axis 1", (1 << 20, 256), 1, "float32"),
]


# (name, rows, columns, picked rows): gather rows of a matrix by random row indices.
TAKES = [
    ("take rows f32 1048576x64 by 1048576 indices", 1 << 20, 64, 1 << 20),
    ("take f32 2^26 by 2^26 indices", 1 << 26, 1, 1 << 26),
]


def torch_takes(dev):
    rows = []
    sync = torch.cuda.synchronize
    for name, n, d, m in TAKES:
        x = torch.randn(n, d, device=dev).squeeze(1) if d == 1 else torch.randn(n, d, device=dev)
        idx = torch.randint(0, n, (m,), device=dev)
        t = median_seconds(lambda: torch.index_select(x, 0, idx), sync, 10)
        # Bytes: the picked elements read and written, and the indices read (int64).
        moved = 2 * m * d * 4 + m * 8
        rows.append({"name": f"torch {name}", "ms": t * 1e3, "gbps": moved / t / 1e9})
    return rows


def jax_takes():
    import jax
    import jax.numpy as jnp

    rows = []
    for name, n, d, m in TAKES:
        shape = (n,) if d == 1 else (n, d)
        x = jax.random.normal(jax.random.PRNGKey(0), shape)
        idx = jax.random.randint(jax.random.PRNGKey(1), (m,), 0, n, dtype=jnp.int32)
        f = jax.jit(lambda v, i: jnp.take(v, i, axis=0, mode="clip"))
        state = {}

        def run():
            state["y"] = f(x, idx)

        t = median_seconds(run, lambda: state["y"].block_until_ready(), 10)
        moved = 2 * m * d * 4 + m * 4
        rows.append({"name": f"jax {name}", "ms": t * 1e3, "gbps": moved / t / 1e9})
    return rows


# (name, rows of src, columns, rows of dst): add rows of src into random rows of dst.
SCATTERS = [
    ("scatter_add f32 1048576x16 into 16 rows", 1 << 20, 16, 16),
    ("scatter_add f32 1048576x16 into 1048576 rows", 1 << 20, 16, 1 << 20),
]
# (name, values, bins)
BINCOUNTS = [("bincount 2^24 values into 256 bins", 1 << 24, 256)]


def torch_scatters(dev):
    rows = []
    sync = torch.cuda.synchronize
    for name, n, d, k in SCATTERS:
        src = torch.randn(n, d, device=dev)
        idx = torch.randint(0, k, (n,), device=dev)
        dst = torch.zeros(k, d, device=dev)
        t = median_seconds(lambda: dst.index_add_(0, idx, src), sync, 10)
        rows.append({"name": f"torch {name}", "ms": t * 1e3})
    for name, n, k in BINCOUNTS:
        x = torch.randint(0, k, (n,), device=dev)
        t = median_seconds(lambda: torch.bincount(x, minlength=k), sync, 10)
        rows.append({"name": f"torch {name}", "ms": t * 1e3})
    return rows


def jax_scatters():
    import jax
    import jax.numpy as jnp

    rows = []
    for name, n, d, k in SCATTERS:
        src = jax.random.normal(jax.random.PRNGKey(0), (n, d))
        idx = jax.random.randint(jax.random.PRNGKey(1), (n,), 0, k, dtype=jnp.int32)
        dst = jnp.zeros((k, d))
        f = jax.jit(lambda a, i, s: a.at[i].add(s))
        state = {}

        def run():
            state["y"] = f(dst, idx, src)

        t = median_seconds(run, lambda: state["y"].block_until_ready(), 10)
        rows.append({"name": f"jax {name}", "ms": t * 1e3})
    for name, n, k in BINCOUNTS:
        x = jax.random.randint(jax.random.PRNGKey(2), (n,), 0, k, dtype=jnp.int32)
        f = jax.jit(lambda v: jnp.bincount(v, length=k))
        state = {}

        def run():
            state["y"] = f(x)

        t = median_seconds(run, lambda: state["y"].block_until_ready(), 10)
        rows.append({"name": f"jax {name}", "ms": t * 1e3})
    return rows


# (name, rows, row length, dtype, argsort): the report's sort rows use the same names.
SORTS = [
    ("sort i32 2^20", 1, 1 << 20, "int32", False),
    ("sort i32 2^26", 1, 1 << 26, "int32", False),
    ("sort f32 2^20", 1, 1 << 20, "float32", False),
    ("sort f32 2^26", 1, 1 << 26, "float32", False),
    ("argsort f32 2^26", 1, 1 << 26, "float32", True),
    ("sort f32 16384 rows of 4096", 16384, 4096, "float32", False),
    ("sort f32 256 rows of 262144", 256, 1 << 18, "float32", False),
]
COMPACT_N = 1 << 26


def torch_sorts(dev):
    rows = []
    sync = torch.cuda.synchronize
    for name, r, n, dt, arg in SORTS:
        x = (torch.randn(r, n, device=dev) * 1e6).to(getattr(torch, dt))
        if arg:
            f = lambda: torch.argsort(x, dim=-1, stable=True)
        else:
            # torch.sort always returns the positions too.
            f = lambda: torch.sort(x, dim=-1, stable=True)
        t = median_seconds(f, sync, 10)
        rows.append({"name": f"torch {name}", "ms": t * 1e3, "gkeys": r * n / t / 1e9})
    x = torch.randn(COMPACT_N, device=dev)
    m = torch.rand(COMPACT_N, device=dev) < 0.5
    t = median_seconds(lambda: x[m], sync, 10)
    rows.append({"name": "torch compress f32 2^26 by a mask of half", "ms": t * 1e3})
    t = median_seconds(lambda: torch.nonzero(m), sync, 10)
    rows.append({"name": "torch nonzero 2^26 mask of half", "ms": t * 1e3})
    return rows


def jax_sorts():
    import jax
    import jax.numpy as jnp

    rows = []
    for name, r, n, dt, arg in SORTS:
        x = (jax.random.normal(jax.random.PRNGKey(0), (r, n)) * 1e6).astype(getattr(jnp, dt))
        if arg:
            f = jax.jit(lambda v: jnp.argsort(v, axis=-1, stable=True))
        else:
            f = jax.jit(lambda v: jnp.sort(v, axis=-1, stable=True))
        state = {}

        def run():
            state["y"] = f(x)

        t = median_seconds(run, lambda: state["y"].block_until_ready(), 10)
        rows.append({"name": f"jax {name}", "ms": t * 1e3, "gkeys": r * n / t / 1e9})
    x = jax.random.normal(jax.random.PRNGKey(1), (COMPACT_N,))
    m = jax.random.uniform(jax.random.PRNGKey(2), (COMPACT_N,)) < 0.5
    n = COMPACT_N
    for name, f in [
        ("compress f32 2^26 by a mask of half", jax.jit(lambda v, k: v[jnp.nonzero(k, size=n, fill_value=0)[0]])),
        ("nonzero 2^26 mask of half", jax.jit(lambda v, k: jnp.nonzero(k, size=n, fill_value=0)[0])),
    ]:
        state = {}

        def run():
            state["y"] = f(x, m)

        t = median_seconds(run, lambda: state["y"].block_until_ready(), 10)
        rows.append({"name": f"jax {name}", "ms": t * 1e3})
    return rows


def torch_scans(dev):
    rows = []
    sync = torch.cuda.synchronize
    for name, shape, axis, dt in SCANS:
        dtype = getattr(torch, dt)
        x = (torch.randn(shape, device=dev) * 100).to(dtype)
        n = x.numel()
        # torch.cumsum of int32 gives int64 (numpy's rule); ask for int32 to move the same bytes.
        t = median_seconds(lambda: torch.cumsum(x, axis, dtype=dtype), sync, 10)
        rows.append({"name": f"torch {name}", "ms": t * 1e3, "gbps": 2 * n * x.element_size() / t / 1e9})
    return rows


def jax_scans():
    import jax
    import jax.numpy as jnp

    rows = []
    for name, shape, axis, dt in SCANS:
        dtype = getattr(jnp, dt)
        x = (jax.random.normal(jax.random.PRNGKey(0), shape) * 100).astype(dtype)
        f = jax.jit(lambda v, axis=axis, dtype=dtype: jnp.cumsum(v, axis=axis, dtype=dtype))
        state = {}

        def run():
            state["y"] = f(x)

        t = median_seconds(run, lambda: state["y"].block_until_ready(), 10)
        rows.append({"name": f"jax {name}", "ms": t * 1e3, "gbps": 2 * x.size * x.dtype.itemsize / t / 1e9})
    return rows


# (name, rows, columns): the report's row-function rows use the same names.
ROW_FUNCTIONS = [
    ("softmax f32 65536x1024", 65536, 1024),
    ("softmax f32 4096x32768", 4096, 32768),
]
LAYER_NORMS = [("layer norm f32 65536x1024", 65536, 1024)]


def torch_rows(dev):
    rows = []
    sync = torch.cuda.synchronize
    for name, n, d in ROW_FUNCTIONS:
        x = torch.randn((n, d), device=dev)
        t = median_seconds(lambda: torch.softmax(x, 1), sync, 10)
        rows.append({"name": f"torch {name}", "ms": t * 1e3, "tbps": 2 * x.numel() * 4 / t / 1e12})
    for name, n, d in LAYER_NORMS:
        x = torch.randn((n, d), device=dev)
        g = torch.full((d,), 1.5, device=dev)
        b = torch.full((d,), 0.25, device=dev)
        t = median_seconds(lambda: torch.nn.functional.layer_norm(x, (d,), g, b, 1e-5), sync, 10)
        rows.append({"name": f"torch {name}", "ms": t * 1e3, "tbps": 2 * x.numel() * 4 / t / 1e12})
    return rows


def jax_rows():
    import jax
    import jax.numpy as jnp

    rows = []
    for name, n, d in ROW_FUNCTIONS:
        x = jax.random.normal(jax.random.PRNGKey(0), (n, d))
        f = jax.jit(lambda v: jax.nn.softmax(v, axis=1))
        state = {}

        def run():
            state["y"] = f(x)

        t = median_seconds(run, lambda: state["y"].block_until_ready(), 10)
        rows.append({"name": f"jax {name}", "ms": t * 1e3, "tbps": 2 * x.size * 4 / t / 1e12})
    return rows


# (name, elements): the report's random rows use the same names.
RANDOMS = [("random_uniform f32 2^28", 1 << 28)]


def torch_randoms(dev):
    rows = []
    sync = torch.cuda.synchronize
    for name, n in RANDOMS:
        out = torch.empty(n, device=dev)
        t = median_seconds(lambda: torch.rand(n, device=dev, out=out), sync, 10)
        rows.append({"name": f"torch {name}", "ms": t * 1e3, "tbps": n * 4 / t / 1e12})
        t = median_seconds(lambda: out.uniform_(), sync, 10)
        rows.append({"name": f"torch {name} in place", "ms": t * 1e3, "tbps": n * 4 / t / 1e12})
    return rows


def jax_randoms():
    import jax

    rows = []
    for name, n in RANDOMS:
        f = jax.jit(lambda k: jax.random.uniform(k, (n,)))
        key = jax.random.PRNGKey(0)
        state = {}

        def run():
            state["y"] = f(key)

        t = median_seconds(run, lambda: state["y"].block_until_ready(), 10)
        rows.append({"name": f"jax {name}", "ms": t * 1e3, "tbps": n * 4 / t / 1e12})
    return rows


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--json", action="store_true")
    p.add_argument("--only", default="scans,takes,scatters,sorts,rows,randoms", help="a comma-separated subset")
    a = p.parse_args()
    only = a.only.split(",")
    dev = torch.device("cuda")
    groups = {
        "scans": (torch_scans, jax_scans),
        "takes": (torch_takes, jax_takes),
        "scatters": (torch_scatters, jax_scatters),
        "sorts": (torch_sorts, jax_sorts),
        "rows": (torch_rows, jax_rows),
        "randoms": (torch_randoms, jax_randoms),
    }
    rows = [r for g in only for r in groups[g][0](dev)]
    try:
        rows += [r for g in only for r in groups[g][1]()]
    except Exception as e:  # JAX missing or without a GPU: say so, keep the rest
        rows.append({"name": "jax", "error": repr(e)[:200]})
    print(f"# {torch.cuda.get_device_name(0)}, torch {torch.__version__}")
    for r in rows:
        if a.json:
            print(json.dumps(r))
        else:
            print(f"{r['name']:<44} {r.get('ms', float('nan')):9.3f} ms  {r.get('gbps', float('nan')):8.1f} GB/s  {r.get('error', '')}")


if __name__ == "__main__":
    main()
