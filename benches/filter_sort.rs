//! Filter then sort: the positive elements of 2^26 `f32` (about half), sorted, the 1000
//! smallest summed, per step — as a `Compacted` whose count stays on the device, and the
//! way that reads the count first (`into_array`). Prints per step the host waits while
//! enqueuing (from `ctx.stats()`), the host time to enqueue and the time until the device
//! is done. `cargo bench --bench filter_sort` (a release build; `LAZYCL_BENCH_N` sets the
//! length, `LAZYCL_BENCH_STEPS` the steps, default 10).

use std::time::Instant;

use lazycl::prelude::*;

/// The smallest this many are summed.
const K: usize = 1000;

/// One way of filtering, sorting and summing.
type Way = dyn Fn(&Array<f32>) -> lazycl::Result<Array<f32>>;

/// What one way of filtering and sorting made: the sum, and the host waits, host time
/// and total time of its enqueuing.
struct StepRun {
    total: Array<f32>,
    waits: u64,
    enqueue_ms: f64,
    step_ms: f64,
}

/// Runs `step` on `x` and waits for the device; counts what happened before the wait.
fn run(ctx: &Context, x: &Array<f32>, step: &Way) -> lazycl::Result<StepRun> {
    let before = ctx.stats();
    let start = Instant::now();
    let total = step(x)?;
    total.eval()?;
    let enqueue_ms = start.elapsed().as_secs_f64() * 1e3;
    let waits = (ctx.stats() - before).host_waits;
    ctx.synchronize()?;
    Ok(StepRun {
        total,
        waits,
        enqueue_ms,
        step_ms: start.elapsed().as_secs_f64() * 1e3,
    })
}

/// The count stays on the device: nothing waits until the sum is read.
fn lazy_step(x: &Array<f32>) -> lazycl::Result<Array<f32>> {
    Ok(x.compress(&x.gt(0.0))?.sort()?.head(K).sum())
}

/// The count read first, then an array of known length sorted.
fn waiting_step(x: &Array<f32>) -> lazycl::Result<Array<f32>> {
    let picked = x.compress(&x.gt(0.0))?.into_array()?;
    let k = K.min(picked.len());
    Ok(picked.sort()?.slice(ndarray::s![..k]).sum())
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() -> lazycl::Result<()> {
    // `cargo bench` passes `--bench`; a filter argument is ignored.
    let ctx = Context::new()?;
    let n = env("LAZYCL_BENCH_N", 1 << 26);
    let steps = env("LAZYCL_BENCH_STEPS", 10).max(1);
    let x = ctx.random_normal::<f32>([n], 7)?;
    x.eval()?;
    println!(
        "filter then sort on {}: n = {n} f32 (about half positive), sum of the {K} smallest, {steps} steps",
        ctx.device().name
    );
    println!(
        "{:<44} {:>12} {:>14} {:>12}",
        "way", "waits/step", "enqueue ms", "step ms"
    );
    let ways: [(&str, &Way); 2] = [
        ("compress -> sort -> head -> sum (lazy count)", &lazy_step),
        ("compress -> into_array -> sort -> sum", &waiting_step),
    ];
    let mut totals = Vec::new();
    for (name, step) in ways {
        // One step to build and warm, not counted.
        run(&ctx, &x, step)?;
        let (mut waits, mut enqueue, mut times) = (0, Vec::new(), Vec::new());
        let mut last = None;
        for _ in 0..steps {
            let r = run(&ctx, &x, step)?;
            waits += r.waits;
            enqueue.push(r.enqueue_ms);
            times.push(r.step_ms);
            last = Some(r.total);
        }
        println!(
            "{name:<44} {:>12.2} {:>14.3} {:>12.3}",
            waits as f64 / steps as f64,
            median(enqueue),
            median(times)
        );
        if let Some(t) = last {
            totals.push(t.item()?);
        }
    }
    println!("sums (the two ways agree): {totals:?}");
    Ok(())
}
