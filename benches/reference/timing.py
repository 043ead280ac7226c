"""Timing shared by the reference scripts beside this file."""

import time


def median_seconds(fn, sync, reps, trials=7):
    """Median seconds per call of `fn` over `trials` runs of `reps` calls each, each run
    ended by `sync` (after one warm-up call)."""
    fn()
    sync()
    times = []
    for _ in range(trials):
        t = time.perf_counter()
        for _ in range(reps):
            fn()
        sync()
        times.append((time.perf_counter() - t) / reps)
    times.sort()
    return times[len(times) // 2]
