//! `#[kernel]` in its simplest form, generic over the element type: `y = a * x + y`, run
//! for `f32` and `f64` and checked against the host. The macro writes one OpenCL C
//! program per type at compile time; `axpy::bind::<T>` builds the one asked for.
//!
//! `cargo run --release --example saxpy` (`LAZYCL_EXAMPLE_SMALL=1` runs a small size).

use std::time::Instant;

use clap::Parser;
use lazycl::prelude::*;

#[path = "common/host_float.rs"]
mod host_float;
use host_float::HostFloat;

/// One work-item per element; the bounds check makes any global size safe.
#[kernel]
fn axpy<T: Float>(a: T, x: &[T], y: &mut [T]) {
    let i = global_id(0);
    if i < y.len() {
        y[i] = a * x[i] + y[i];
    }
}

/// Ten launches of `axpy::<T>` on `n` elements, checked against the host in `f64`.
fn run<T: HostFloat + axpy::Types>(ctx: &Context, n: usize, tolerance: f64) -> lazycl::Result<()> {
    let xs: Vec<T> = (0..n).map(|i| T::of((i % 1000) as f64 * 0.001)).collect();
    let ys: Vec<T> = (0..n).map(|i| T::of(1.0 - (i % 7) as f64)).collect();
    let x = ctx.from_slice(&xs)?;
    let mut y = ctx.from_slice(&ys)?;

    let k = axpy::bind::<T>(ctx)?; // builds this instance's program once for this context
    let start = Instant::now();
    let reps = 10;
    for _ in 0..reps {
        k.global(n).launch(T::of(2.0), &x, &mut y)?; // asynchronous: enqueue and return
    }
    let result = y.to_vec()?; // the only wait
    let elapsed = start.elapsed();

    let max_err = result
        .iter()
        .zip(xs.iter().zip(&ys))
        .map(|(r, (x, y))| {
            let want = y.to_f64() + reps as f64 * 2.0 * x.to_f64();
            (r.to_f64() - want).abs() / want.abs().max(1.0)
        })
        .fold(0.0f64, f64::max);
    assert!(max_err < tolerance, "max relative error {max_err}");
    println!(
        "{}: {reps} launches + read back: {:.2} ms, max relative error {max_err:e}",
        T::DTYPE.rust_name(),
        elapsed.as_secs_f64() * 1e3
    );
    Ok(())
}

/// `y = a * x + y` with a generic `#[kernel]`, for f32 and f64, checked against the host.
#[derive(Parser)]
#[command(after_help = "2^24 elements; LAZYCL_EXAMPLE_SMALL=1 runs 1001.")]
struct Cli {}

fn main() -> lazycl::Result<()> {
    let Cli {} = Cli::parse();
    let small = std::env::var("LAZYCL_EXAMPLE_SMALL").is_ok_and(|v| v == "1");
    let n = if small { 1001 } else { 1 << 24 };
    let ctx = Context::new()?;
    println!("axpy on {} elements, device {}", n, ctx.device().name);
    run::<f32>(&ctx, n, 1e-5)?;
    if ctx.device().fp64 {
        run::<f64>(&ctx, n, 1e-12)?;
    } else {
        println!("f64: the device has no fp64, skipped");
    }
    println!("{}", ctx.stats());
    println!("saxpy: OK");
    Ok(())
}
