//! Device memory under a limit (`ContextBuilder::memory_limit`): uploads, fills and lazy
//! results evaluated and kept fill it up to `Error::OutOfMemory` naming the request and
//! the memory in use, from the call that needed the memory; the pool's free buffers are
//! released before anything fails; and after arrays are dropped the context computes
//! correctly again.

use std::time::{Duration, Instant};

use crate::common::{builder, rng, Random};
use lazycl::prelude::*;
use lazycl::{Dispatch, MemoryStats};

/// One MiB of `f32`s: every array below is one pooled size class.
const N: usize = 1 << 18;
const MIB: u64 = 1 << 20;
/// Room for four such arrays and change (less than a fifth), and a pool of one (a
/// quarter of the limit).
const LIMIT: u64 = 4 * MIB + MIB / 2;

/// Keeps one work-item busy for `iters` steps, then writes a value that depends on them.
#[kernel]
fn spin(y: &mut [f32], iters: u32) {
    let i = global_id(0);
    if i < y.len() {
        let mut v = y[i];
        let mut k = 0u32;
        while k < iters {
            v = v * 0.999 + 0.001;
            k += 1;
        }
        y[i] = v;
    }
}

fn limited() -> Context {
    builder()
        .memory_limit(LIMIT)
        .dispatch(Dispatch::Inline)
        .build()
        .unwrap()
}

fn close(got: &[f32], want: &[f32]) {
    assert_eq!(got.len(), want.len());
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((g - w).abs() <= 1e-4 * w.abs().max(1.0), "at {i}: {g} vs {w}");
    }
}

/// The context's memory once OpenCL has freed what was released (its destructor
/// callbacks may come on a thread of the driver a moment later).
fn settled(ctx: &Context, live: u64) -> MemoryStats {
    let start = Instant::now();
    loop {
        let m = ctx.memory_stats();
        if m.bytes_live <= live || start.elapsed() > Duration::from_secs(10) {
            return m;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn expect_oom<T: std::fmt::Debug>(got: lazycl::Result<T>, what: &str) -> lazycl::Error {
    match got {
        Err(e @ Error::OutOfMemory { .. }) => {
            let Error::OutOfMemory {
                what: w,
                bytes,
                memory,
                ..
            } = &e
            else {
                unreachable!()
            };
            assert_eq!(*w, what, "{e}");
            assert_eq!(memory.bytes_limit, LIMIT, "{e}");
            assert!(
                memory.bytes_in_use() + *bytes as u64 > LIMIT,
                "it would have fit: {e}"
            );
            let text = e.to_string();
            for fact in [
                format!("{bytes} bytes requested"),
                format!("{} bytes live", memory.bytes_live),
                format!("{} bytes pooled", memory.bytes_pooled),
                format!("limit {LIMIT} bytes"),
                what.to_string(),
            ] {
                assert!(text.contains(&fact), "{fact:?} missing from: {text}");
            }
            e
        }
        other => panic!("expected OutOfMemory for {what}, got {other:?}"),
    }
}

#[test]
fn filling_memory_past_the_limit_is_an_error_and_the_context_recovers() {
    let ctx = limited();
    let mut r = rng(81);
    let (ha, hb) = (f32::random_vec(&mut r, N), f32::random_vec(&mut r, N));
    let a = ctx.from_slice(&ha).unwrap();
    let b = ctx.from_slice(&hb).unwrap();
    // A lazy result evaluated and kept, and a fill: four MiB live.
    let sum = (&a + &b) * 2.0;
    sum.eval().unwrap();
    let z = ctx.zeros::<f32>(N).unwrap();
    let m = ctx.memory_stats();
    assert!(m.bytes_live >= 4 * MIB && m.bytes_in_use() <= LIMIT, "{m:?}");

    // A fifth MiB fails, whichever call asks for it, and says why.
    let e = expect_oom(ctx.zeros::<f32>(N), "a filled array");
    assert!(e.to_string().contains("memory limit"), "{e}");
    expect_oom(ctx.from_slice(&ha), "an upload");
    // A lazy result fails at the call that materializes it, not where it was recorded.
    let lazy = &a * &b - &z;
    expect_oom(lazy.eval(), "a kernel's output");
    expect_oom(lazy.to_vec(), "a kernel's output");
    // A request over the whole limit fails at once, with nothing freed.
    let e = expect_oom(ctx.zeros::<f32>(5 * N), "a filled array");
    assert!(e.to_string().contains("whole memory limit"), "{e}");

    // What was computed is intact, and dropping arrays gives their memory back: the
    // result that failed stayed lazy, and is computed now.
    let want: Vec<f32> = ha.iter().zip(&hb).map(|(x, y)| (x + y) * 2.0).collect();
    close(&sum.to_vec().unwrap(), &want);
    drop(sum);
    let want: Vec<f32> = ha.iter().zip(&hb).map(|(x, y)| x * y).collect();
    close(&lazy.to_vec().unwrap(), &want);
    drop((z, lazy));
    let want: Vec<f32> = ha.iter().zip(&hb).map(|(x, y)| x * y - 0.5 * x).collect();
    let lazy = &a * &b - &a * 0.5;
    close(&lazy.to_vec().unwrap(), &want);
    let total: f64 = want.iter().map(|&v| f64::from(v)).sum();
    let got = f64::from(lazy.sum().item().unwrap());
    assert!(
        (got - total).abs() <= 1e-3 * total.abs().max(1.0) + 1.0,
        "{got} vs {total}"
    );
    let m = ctx.memory_stats();
    assert!(m.peak_bytes_in_use <= LIMIT, "{m:?}");
}

#[test]
fn the_pool_is_emptied_before_an_allocation_fails() {
    let ctx = limited();
    let mut r = rng(82);
    let host: Vec<Vec<f32>> = (0..4).map(|_| f32::random_vec(&mut r, N)).collect();
    let mut arrays: Vec<Array<f32>> = host.iter().map(|h| ctx.from_slice(h).unwrap()).collect();
    // One array dropped: its MiB stays with the pool, still held.
    drop(arrays.pop());
    let m = ctx.memory_stats();
    assert_eq!(m.bytes_pooled, MIB, "{m:?}");
    assert_eq!(m.bytes_in_use(), 4 * MIB, "{m:?}");

    // A request of another size class cannot reuse it, and fits only once it is freed.
    let before = ctx.stats();
    let n = N + 64;
    let want: Vec<f32> = (0..n).map(|i| host[i % 3][i % N] * 3.0).collect();
    let wide = ctx.from_slice(&want).unwrap();
    let d = ctx.stats() - before;
    assert_eq!((d.pool_trims, d.buffers_released), (1, 1), "{d}");
    let m = settled(&ctx, 3 * MIB + (n * 4) as u64);
    assert_eq!(m.bytes_pooled, 0, "{m:?}");
    assert_eq!(m.bytes_live, 3 * MIB + (n * 4) as u64, "{m:?}");
    close(&wide.to_vec().unwrap(), &want);

    // With nothing pooled left to free, the next request fails.
    let before = ctx.stats();
    expect_oom(ctx.zeros::<f32>(N), "a filled array");
    assert_eq!((ctx.stats() - before).pool_trims, 0);

    // Each computation after that still gets memory and the right numbers.
    drop(wide);
    for (k, a) in arrays.iter().enumerate() {
        let b = &arrays[(k + 1) % arrays.len()];
        let want: Vec<f32> = host[k]
            .iter()
            .zip(&host[(k + 1) % arrays.len()])
            .map(|(x, y)| (x - y) * 0.25)
            .collect();
        close(&((a - b) * 0.25).to_vec().unwrap(), &want);
    }
}

#[test]
fn memory_a_running_kernel_uses_comes_back_when_it_completes() {
    let ctx = limited();
    let k = spin::bind(&ctx).unwrap();
    let mut y = ctx.zeros::<f32>(N).unwrap();
    // A tenth of a second or more on a CPU device, far more than an upload takes.
    let running = k.global(1).launch_event(&mut y, 100_000_000).unwrap();
    // Dropped while the kernel writes it: pooled, with the record of that kernel.
    drop(y);
    assert_eq!(ctx.memory_stats().bytes_pooled, MIB);
    // Room for this only once the pool is emptied and the kernel has let its memory go:
    // the upload waits for it, instead of counting memory the device still uses as free.
    let n = 3 * N + N / 2 + 64;
    let mut r = rng(83);
    let host = f32::random_vec(&mut r, n);
    let big = ctx.from_slice(&host).unwrap();
    assert!(
        running.is_complete().unwrap(),
        "memory still in use was counted as free"
    );
    assert_eq!(settled(&ctx, (n * 4) as u64).bytes_in_use(), (n * 4) as u64);
    // No room for another array that size, but a reduction of it needs none.
    let want: f64 = host.iter().map(|&v| f64::from(v) * 2.0).sum();
    let got = f64::from((&big * 2.0).sum().item().unwrap());
    assert!(
        (got - want).abs() <= 1e-3 * want.abs().max(1.0) + 1.0,
        "{got} vs {want}"
    );
}

#[test]
fn the_default_limit_is_what_the_device_reports_but_a_sixteenth() {
    let ctx = builder().build().unwrap();
    let global = ctx.device().global_mem_bytes;
    assert_eq!(ctx.memory_stats().bytes_limit, global - global / 16);
    let x = ctx.from_slice(&[1.0f32, 2.0]).unwrap();
    assert!(ctx.memory_stats().bytes_live > 0);
    assert_eq!((&x * 2.0).to_vec().unwrap(), [2.0, 4.0]);
}
