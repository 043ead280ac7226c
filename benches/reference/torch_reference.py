#!/usr/bin/env python3
"""PyTorch reference timings for lazycl's workload examples (run on the same GPU).

Generates exactly the data of examples/logistic_regression.rs and examples/kmeans.rs
(splitmix64 counter-based uniforms and Box-Muller normals, computed in float64 with numpy),
runs the same algorithms for the same number of iterations with torch eager on CUDA, and
prints the time per iteration (torch.cuda.synchronize() around the timed loop, after a
warm-up).

  python3 benches/reference/torch_reference.py                    # everything
  python3 benches/reference/torch_reference.py --only logreg      # or: kmeans
  python3 benches/reference/torch_reference.py --shape 200000x100 --dtype f32 --iters 100
  python3 benches/reference/torch_reference.py --dtype both       # every shape in f32 and f64
  python3 benches/reference/torch_reference.py --json             # one JSON object per row
  python3 benches/reference/torch_reference.py --compile          # also torch.compile'd steps

Logistic regression, per iteration (lr 0.2, lambda 1e-3, no penalty on the intercept):
  z = X w + b;  r = sigmoid(z) - y;  w -= lr (X^T r / n + lambda w);  b -= lr mean(r)
and the loss mean(softplus(z) - y z) + lambda/2 |w|^2 read with .item() at iterations
0, 50, 100, ... and, with the accuracy, after the last iteration (as the Rust example does;
lazycl also keeps X as n x d with a separate bias b, so the two run the same model).

k-means (Lloyd), per iteration: squared distances |x|^2 - 2 x c^T + |c|^2 (|x|^2 computed
once), argmin, index_add_ for the sums, bincount for the counts; empty clusters keep their
centroid. Initial centroids: the first k points.
"""

import argparse
import json
import math
import sys
import time

import numpy as np
import torch

# ----------------------------------------------------------------------------------------
# Deterministic data: must match the Rust examples bit for bit (up to libm rounding).

M64 = (1 << 64) - 1
GOLDEN = np.uint64(0x9E3779B97F4A7C15)
TAU = 2.0 * math.pi


def splitmix64(x):
    z = x + GOLDEN
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def uniform(seed, idx):
    """Uniform in [0, 1) from stream `seed`, elements `idx` (uint64 array)."""
    key = np.uint64((seed * 0xD1B54A32D192ED03) & M64)
    h = splitmix64(key ^ idx)
    return (h >> np.uint64(11)).astype(np.float64) * (1.0 / (1 << 53))


def normal(seed, idx):
    """Standard normals (Box-Muller on elements 2i and 2i + 1)."""
    u1 = uniform(seed, np.uint64(2) * idx)
    u2 = uniform(seed, np.uint64(2) * idx + np.uint64(1))
    return np.sqrt(-2.0 * np.log(1.0 - u1)) * np.cos(TAU * u2)


SEED_X, SEED_Y, SEED_FLIP = 1, 2, 3
INFORMATIVE, CLASS_SEP, FLIP_Y = 5, 0.5, 0.01
CHUNK_ROWS = 1 << 18


def make_classification(n, d):
    """X (n x d, float64) and y (n, float64), as make_classification in the Rust example."""
    x = np.empty((n, d), dtype=np.float64)
    rows = np.arange(n, dtype=np.uint64)
    cls = np.where(uniform(SEED_Y, rows) < 0.5, 1.0, 0.0)
    signs = np.array([1.0 if j % 2 == 0 else -1.0 for j in range(min(d, INFORMATIVE))])
    for r0 in range(0, n, CHUNK_ROWS):
        r1 = min(n, r0 + CHUNK_ROWS)
        idx = np.arange(r0 * d, r1 * d, dtype=np.uint64)
        block = normal(SEED_X, idx).reshape(r1 - r0, d)
        shift = ((2.0 * cls[r0:r1] - 1.0) * CLASS_SEP)[:, None] * signs[None, :]
        block[:, : len(signs)] += shift
        x[r0:r1] = block
    flip = uniform(SEED_FLIP, rows) < FLIP_Y
    y = np.where(flip, 1.0 - cls, cls)
    return x, y


SEED_CENTERS, SEED_LABELS, SEED_POINTS, CENTER_SPREAD = 11, 12, 13, 4.0


def make_blobs(n, d, k):
    """n x d float32 points, as make_blobs in the Rust k-means example."""
    centers = CENTER_SPREAD * normal(SEED_CENTERS, np.arange(k * d, dtype=np.uint64)).reshape(k, d)
    blob = np.minimum((uniform(SEED_LABELS, np.arange(n, dtype=np.uint64)) * k).astype(np.int64), k - 1)
    x = np.empty((n, d), dtype=np.float32)
    for r0 in range(0, n, CHUNK_ROWS):
        r1 = min(n, r0 + CHUNK_ROWS)
        idx = np.arange(r0 * d, r1 * d, dtype=np.uint64)
        x[r0:r1] = (centers[blob[r0:r1]] + normal(SEED_POINTS, idx).reshape(r1 - r0, d)).astype(np.float32)
    return x


# ----------------------------------------------------------------------------------------

SHAPES = [
    (36_000, 126, "f64"),
    (200_000, 100, "f32"),
    (20_000, 1_000, "f64"),
    (3_200, 25_300, "f32"),
    (2_000_000, 20, "f32"),
    (8_000_000, 20, "f64"),
]
LR, LAMBDA, LOSS_EVERY = 0.2, 1e-3, 50
DTYPES = {"f32": torch.float32, "f64": torch.float64}


def sync(dev):
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)


def logreg_step(X, y, w, b, inv_n):
    z = X @ w + b
    r = torch.sigmoid(z) - y
    gw = X.t() @ r * inv_n + LAMBDA * w
    gb = r.mean()
    w = w - LR * gw
    b = b - LR * gb
    return z, w, b


def logreg_loss(z, y, w):
    return (torch.nn.functional.softplus(z) - y * z).mean() + 0.5 * LAMBDA * (w * w).sum()


def run_logreg(x64, y64, dt, iters, warmup, dev, compiled):
    n, d = x64.shape
    X = torch.from_numpy(x64).to(dev, DTYPES[dt])
    y = torch.from_numpy(y64).to(dev, DTYPES[dt])
    step = torch.compile(logreg_step) if compiled else logreg_step
    inv_n = 1.0 / n

    def fit(k):
        w = torch.zeros(d, device=dev, dtype=X.dtype)
        b = torch.zeros((), device=dev, dtype=X.dtype)
        losses = []
        for it in range(k):
            w_before = w
            z, w, b = step(X, y, w, b, inv_n)
            if it % LOSS_EVERY == 0:
                losses.append(logreg_loss(z, y, w_before).item())
        z = X @ w + b
        final = logreg_loss(z, y, w).item()
        acc = ((z > 0).to(X.dtype) == y).to(X.dtype).mean().item()
        return losses, final, acc

    fit(warmup)
    sync(dev)
    t0 = time.perf_counter()
    losses, final, acc = fit(iters)
    sync(dev)
    elapsed = time.perf_counter() - t0
    return elapsed / iters, losses, final, acc


def run_kmeans(n, d, k, iters, warmup, dev):
    x = torch.from_numpy(make_blobs(n, d, k)).to(dev)
    xx = (x * x).sum(1, keepdim=True)

    def fit(m):
        c = x[:k].clone()
        for _ in range(m):
            d2 = xx - 2.0 * (x @ c.t()) + (c * c).sum(1)
            labels = d2.argmin(1)
            sums = torch.zeros_like(c).index_add_(0, labels, x)
            counts = torch.bincount(labels, minlength=k).to(x.dtype)
            c = torch.where(counts[:, None] > 0, sums / counts.clamp(min=1.0)[:, None], c)
        diff = x[:, None, :] - c[None, :, :] if n * k * d <= (1 << 28) else None
        if diff is not None:
            inertia = (diff * diff).sum(2).amin(1).sum().item()
        else:
            inertia = (xx - 2.0 * (x @ c.t()) + (c * c).sum(1)).amin(1).clamp(min=0).sum().item()
        return c, inertia

    fit(warmup)
    sync(dev)
    t0 = time.perf_counter()
    c, inertia = fit(iters)
    sync(dev)
    elapsed = time.perf_counter() - t0
    return elapsed / iters, c, inertia


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--only", choices=["logreg", "kmeans"])
    p.add_argument("--shape", help="logistic regression RxC (default: the six shapes)")
    p.add_argument("--dtype", choices=["f32", "f64", "both"], help="default: each shape's own")
    p.add_argument("--iters", type=int, default=100, help="logistic regression iterations")
    p.add_argument("--kmeans-n", type=int, default=1_000_000)
    p.add_argument("--kmeans-d", type=int, default=16)
    p.add_argument("--kmeans-k", type=int, default=16)
    p.add_argument("--kmeans-iters", type=int, default=20)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--compile", action="store_true", help="also time torch.compile'd steps")
    p.add_argument("--json", action="store_true", help="one JSON object per row")
    p.add_argument("--device", default="cuda", help="torch device (cpu only to test this script)")
    a = p.parse_args()

    dev = torch.device(a.device)
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            sys.exit("torch_reference.py needs a CUDA device (or --device cpu to test it)")
        name = torch.cuda.get_device_name(dev)
    else:
        name = str(dev)
    rows = []

    def emit(row):
        rows.append(row)
        if a.json:
            print(json.dumps(row), flush=True)

    if a.only in (None, "logreg"):
        shapes = SHAPES
        if a.shape:
            r, c = (int(v) for v in a.shape.lower().split("x"))
            own = next((t for (rr, cc, t) in SHAPES if rr == r and cc == c), "f32")
            shapes = [(r, c, own)]
        for (n, d, own) in shapes:
            dts = [own] if a.dtype is None else (["f32", "f64"] if a.dtype == "both" else [a.dtype])
            t0 = time.perf_counter()
            x64, y64 = make_classification(n, d)
            if not a.json:
                print(f"data {n} x {d} generated in {time.perf_counter() - t0:.1f} s", flush=True)
            for dt in dts:
                for compiled in [False, True] if a.compile else [False]:
                    label = "torch.compile" if compiled else "torch eager"
                    try:
                        per, losses, final, acc = run_logreg(x64, y64, dt, a.iters, a.warmup, dev, compiled)
                    except Exception as e:  # e.g. torch.compile unavailable
                        print(f"logistic regression {n}x{d} {dt} ({label}) failed: {e}", file=sys.stderr)
                        continue
                    if not a.json:
                        print(f"logistic regression {n} x {d} {dt} ({label}): {per * 1e3:.4f} ms/iteration, "
                              f"losses {[round(v, 6) for v in losses]}, final loss {final:.6f}, "
                              f"accuracy {acc * 100:.2f}%", flush=True)
                    emit({"name": f"logistic regression {n}x{d} {dt}", "impl": label, "device": name,
                          "ms_per_iter": per * 1e3, "iters": a.iters, "final_loss": final, "accuracy": acc})
                if dev.type == "cuda":
                    torch.cuda.empty_cache()

    if a.only in (None, "kmeans"):
        n, d, k = a.kmeans_n, a.kmeans_d, a.kmeans_k
        per, c, inertia = run_kmeans(n, d, k, a.kmeans_iters, a.warmup, dev)
        if not a.json:
            print(f"k-means {n} x {d}, k = {k} (torch eager): {per * 1e3:.4f} ms/iteration, "
                  f"inertia {inertia:.4e}, centroid 0 {c[0].tolist()}", flush=True)
        emit({"name": f"k-means {n}x{d} k={k} f32", "impl": "torch eager", "device": name,
              "ms_per_iter": per * 1e3, "iters": a.kmeans_iters, "inertia": inertia})

    if not a.json:
        print(f"\n| workload | torch | ms / iteration |  ({name}, torch {torch.__version__})")
        print("|---|---|---|")
        for r in rows:
            print(f"| {r['name']} | {r['impl']} | {r['ms_per_iter']:.4f} |")


if __name__ == "__main__":
    main()
