//! A short tour of lazycl: devices, a `#[kernel]`, lazy fused expressions, reductions that
//! stay on the device, `explain()`, views (slices, transposes, concatenation, assignment
//! into a region), matrix products with what surrounds them fused in, a second queue with
//! an event, and the counters.
//!
//! `make run` runs this on the default device (`LAZYCL_DEVICE` picks another).

use clap::Parser;
use lazycl::prelude::*;
use ndarray::{Array1, Array2};

/// `y = a * x + y`, translated to OpenCL C at compile time.
#[kernel]
fn saxpy(a: f32, x: &[f32], y: &mut [f32]) {
    let i = global_id(0);
    if i < y.len() {
        y[i] = a * x[i] + y[i];
    }
}

/// A device function: callable from kernels and `expr!`, and mappable over arrays.
#[device_fn]
fn softplus(x: f32) -> f32 {
    if x > 20.0 {
        x
    } else {
        (1.0 + x.exp()).ln()
    }
}

/// A short tour of lazycl: devices, a `#[kernel]`, lazy fused expressions, reductions,
/// `explain()`, views, matrix products, a second queue and the counters.
#[derive(Parser)]
#[command(after_help = "`make run` runs this on the default device (LAZYCL_DEVICE picks another).")]
struct Cli {}

// `s![1..-1]` counts from the end of the axis (ndarray's slices), not an empty range.
#[allow(clippy::reversed_empty_ranges)]
fn main() -> lazycl::Result<()> {
    let Cli {} = Cli::parse();
    println!("== devices ==");
    print!("{}", lazycl::device_table(&lazycl::devices()?));

    let ctx = Context::new()?;
    println!("\nusing {} ({})", ctx.device().name, ctx.device().platform_name);

    println!("\n== upload / download round trip ==");
    let host = Array2::from_shape_fn((3, 4), |(i, j)| (i * 10 + j) as f32);
    let m = ctx.array(&host.t())?; // a transposed view: the device gets the logical order
    let back = m.to_ndarray()?;
    println!("the 4x3 transpose of a 3x4 matrix, read back:\n{back}");
    assert_eq!(back, host.t().into_dyn());

    println!("\n== a #[kernel] ==");
    let n = 1 << 16;
    let x = ctx.array(&Array1::linspace(0.0f32, 1.0, n))?;
    let mut y = ctx.full(n, 0.5f32)?;
    let k = saxpy::bind(&ctx)?; // program built once, cl_kernel created once
    k.global(n).launch(2.0, &x, &mut y)?; // asynchronous: set arguments + enqueue
    println!("saxpy enqueued ({} work-items); nothing waited", n);

    println!("\n== a lazy expression ==");
    let a = 3.0f32; // a kernel argument, never an upload and never part of the cache key
    let before = ctx.stats();
    let z = (a * &x + &y).sqrt() - x.sin() * 0.5; // recorded, nothing runs
    let w = &z / (&z * &z).sum(); // the sum stays on the device
    assert_eq!(ctx.stats(), before, "recording touches nothing");
    println!("{}", w.explain()?);
    let w = w.to_vec()?; // one flush, then one read
    println!("w[0..4] = {:?}", &w[..4]);

    println!("\n== expr!: Rust expressions over arrays, translated at compile time ==");
    let t = 0.25f32; // a scalar: a kernel argument
    let act = expr!(if x > t { x * y } else { softplus(x) - y }); // a branch and a device fn
    let total = (&act * 2.0 + &x).sum(); // the operators around it fuse with it
    println!("sum = {:.4}", total.item()?);
    let lerp = expr!(|a: f32, b: f32, w: f32| a + (b - a) * w); // a closure over elements
    println!("lerp[..4] = {:?}", &lerp.apply(&x, &y, 0.25).to_vec()?[..4]);
    println!("softplus[..4] = {:?}", &softplus::map(&x).to_vec()?[..4]);

    println!("\n== reductions ==");
    let mat = ctx.array(&Array2::from_shape_fn((4, 5), |(i, j)| (i * 5 + j) as f32))?;
    let v = ctx.from_slice(&[1.0f32, 0.0, -1.0, 0.0, 2.0])?;
    println!("row sums      {:?}", mat.sum_axis(1).to_vec()?);
    println!("m · v         {:?}", mat.dot(&v).to_vec()?);
    println!("argmax        {}", mat.argmax().item()?);
    let var = (&x - x.mean()).powi(2).mean(); // no host round trip between the passes
    println!("variance of x {:.6}", var.item()?);

    println!("\n== views: slices, transposes, concatenation, all read in place ==");
    // Nothing is copied: each view is an index map that the consuming kernel reads through.
    println!("columns 1..3  {:?}", mat.slice(s![.., 1..3]).to_vec()?);
    println!("reversed rows {:?}", mat.slice(s![..;-1, 0]).to_vec()?);
    let sq = &x * &x; // views of a lazy expression: evaluated where the consumer reads them
    let lap = &sq.slice(s![2..]) - 2.0 * &sq.slice(s![1..-1]) + &sq.slice(s![..-2]); // one kernel
    println!("stencil[..3]  {:?}", &lap.to_vec()?[..3]);
    println!("mᵀ row 0      {:?}", mat.t().slice(s![0, ..]).to_vec()?);
    let both = lazycl::concatenate(Axis(0), &[&mat, &mat.slice(s![..;-1, ..])])?;
    println!("m stacked on m upside down: shape {:?}", both.shape());
    let mut grid = ctx.zeros::<f32>([3, 4])?;
    grid.slice_mut(s![1, ..]).assign(v.slice(s![..4]))?; // written in place
    println!("grid row 1    {:?}", grid.to_vec()?[4..8].to_vec());

    println!("\n== matrix products: operands read in the tile loads, consumers in the store ==");
    let w = ctx.array(&Array2::from_shape_fn((3, 5), |(i, j)| {
        (i as f32 - j as f32) / 4.0
    }))?;
    let bias = ctx.from_slice(&[0.5f32, -1.0, 0.25])?;
    let before = ctx.stats();
    // (mat - mean) · wᵀ + bias, then ReLU: the subtraction, the transpose, the bias and
    // the ReLU all happen inside one GEMM kernel, which writes once.
    let hidden = ((&mat - mat.mean()).matmul(&w.t()) + &bias).max(0.0);
    println!("relu((m - mean) wᵀ + b) {:?}", hidden.to_vec()?);
    println!("kernels launched: {}", (ctx.stats() - before).kernels_launched);
    let scores = mat.matmul(&w.t()).argmax_axis(1); // the argmax runs in the product's kernel
    println!("best of each row {:?}", scores.to_vec()?);

    println!("\n== a repeated step, captured: launches only ==");
    // One gradient step of |x·w - 1|² per run, its step size an input. The first run
    // traces the closure (one ordinary flush); later runs launch its kernels with the new
    // `w` bound and the step size, a host value, passed as a kernel argument: nothing is
    // recorded or uploaded (like JAX's `jit`: `x` and `n` are the trace's).
    let inv_n = 1.0 / n as f32;
    let step = ctx.capture(|(w, lr): (lazycl::Array<f32>, lazycl::Array<f32>)| {
        let r = (&x * &w).sum() - 1.0; // the residual, on the device
        Ok(&w - &x * r * lr * inv_n)
    });
    let mut wv = ctx.zeros::<f32>(n)?;
    let mut lr = 1.0f32;
    wv = step.run((&wv, lr))?;
    let before = ctx.stats();
    for _ in 0..10 {
        lr *= 0.9; // a decaying step size
        wv = step.run((&wv, lr))?;
    }
    let d = ctx.stats() - before;
    println!(
        "10 runs: {} kernels, {} planned, {} replayed by the step, {} bytes uploaded; x·w = {:.4}",
        d.kernels_launched,
        d.flushes_planned + d.plans_reused,
        d.steps_replayed,
        d.bytes_uploaded,
        (&x * &wv).sum().item()?
    );

    println!("\n== queues and events ==");
    let side = ctx.new_queue()?; // another in-order queue: its work may overlap the default one's
    let mut acc = ctx.zeros::<f32>(x.len())?;
    let done = k.global(x.len()).on(&side).launch_event(1.5, &x, &mut acc)?;
    let before = ctx.stats();
    let scaled = &acc * 2.0; // on the default queue, reading what `side` writes:
    scaled.eval()?; //          the dependency is a device-side event, not a host wait
    let d = ctx.stats() - before;
    println!(
        "scaled[..4] = {:?}; the launch is {}; cross-queue waits {}, host waits {}",
        &scaled.to_vec()?[..4],
        if done.is_complete()? {
            "complete"
        } else {
            "still running"
        },
        d.cross_queue_waits,
        d.host_waits
    );

    println!("\n== counters ==\n{}", ctx.stats());
    Ok(())
}
