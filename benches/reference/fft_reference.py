#!/usr/bin/env python3
"""Reference timings for Fourier transforms (run on the same device as lazycl): torch.fft
(cuFFT) for the report's `--fft` rows, the same definitions: batched 1-D complex64
transforms of 2^24 elements in all, a 2-D 4096^2 one, a windowed power spectrum
|fft(x w)|^2 of real rows (and its half, |rfft(x w)|^2) and a circular convolution
irfft(rfft(a) rfft(b)), each as torch runs it (eager: one kernel per operation). Times are medians between device
synchronizations, after a warm-up.

  python3 benches/reference/fft_reference.py            # a table
  python3 benches/reference/fft_reference.py --json     # one JSON object per row
"""

import argparse
import json
import math

from timing import median_seconds

TOTAL = 1 << 24
LENGTHS = [256, 1024, 4096, 16384, 1 << 16, 1 << 20, 1000, 1009]


def torch_rows():
    import torch

    dev = torch.device("cuda")
    sync = torch.cuda.synchronize
    rows = []

    def timed(name, fn):
        state = {}

        def run():
            state["out"] = fn()

        rows.append({"name": name, "ms": median_seconds(run, sync, 10) * 1e3})

    for n in LENGTHS:
        batch = max(TOTAL // n, 1)
        x = torch.randn(batch, n, dtype=torch.complex64, device=dev)
        timed(f"torch.fft.fft c32 n={n} x {batch}", lambda: torch.fft.fft(x, dim=1))
    x = torch.randn(4096, 4096, dtype=torch.complex64, device=dev)
    timed("torch.fft.fft2 c32 4096x4096", lambda: torch.fft.fft2(x))
    n = 4096
    batch = TOTAL // n
    x = torch.randn(batch, n, device=dev)
    y = torch.randn(batch, n, device=dev)
    k = torch.arange(n, device=dev, dtype=torch.float32)
    w = 0.5 - 0.5 * torch.cos(2 * math.pi * k / n)
    timed(f"torch power spectrum |fft(x w)|^2 f32 n={n} x {batch}", lambda: torch.fft.fft(x * w, dim=1).abs() ** 2)
    timed(
        f"torch power spectrum |rfft(x w)|^2 f32 n={n} x {batch}",
        lambda: torch.fft.rfft(x * w, dim=1).abs() ** 2,
    )
    timed(
        f"torch convolution irfft(rfft(a) rfft(b)) f32 n={n} x {batch}",
        lambda: torch.fft.irfft(torch.fft.rfft(x, dim=1) * torch.fft.rfft(y, dim=1), n=n, dim=1),
    )
    return rows


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--json", action="store_true", help="one JSON object per row")
    args = p.parse_args()
    rows = torch_rows()
    for r in rows:
        if args.json:
            print(json.dumps(r))
        else:
            print(f"{r['name']:<64} {r['ms']:10.3f} ms")


if __name__ == "__main__":
    main()
