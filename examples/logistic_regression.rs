//! Binary logistic regression fitted by gradient descent, on synthetic data shaped like
//! scikit-learn's `make_classification` (a few informative features whose class means
//! differ, the rest Gaussian noise, 1% flipped labels).
//!
//! One step, on `X` (`n x d`, no column of ones: rows of exactly `d` elements keep the
//! reductions' aligned vector loads) with the intercept as a separate bias `b`, written
//! as plain lazy arrays, evaluated once (`w` and `b` in one flush):
//!
//! ```text
//! z = X w + b                    a row reduction                          [n]
//! r = sigmoid(z) - y             elementwise (`expr!`), not stored        [n]
//! g = X^T r                      a column reduction                       [d]
//! w = w - lr (g / n + lambda w)  elementwise                              [d]
//! b = mean(b - lr r)             a full reduction                         [1]
//! ```
//!
//! This is `--residual fused`. The engine runs `z` and `g` as one kernel that reads `X`
//! once (the column reduction reads the row reduction per row, so it computes it inside
//! and writes `z` out) and leaves `g` in partials; `w`'s update combines them itself
//! (it is the first kernel that reads `g`, over exactly `g`'s elements); `b`'s mean
//! recomputes `r` from `z` inside that same kernel (a total over the rows beside the row
//! reduction): two kernels per step (`ctx.stats()`), and the step never waits for the
//! device.
//!
//! `--residual stored` evaluates `r` first (`r.eval()`), which splits the step into a
//! matrix-vector product, the residual, a column reduction reading `r` (finished by its
//! last work-group or by `w`'s update), `w`'s and `b`'s updates: five kernels, two reads
//! of `X`.
//!
//! The default (`auto`) is `fused` on GPUs and `stored` elsewhere. On the H200 `fused` is
//! 1.5-1.6x faster for rows of at most 160 bytes (20 elements: one work-item reads whole
//! rows), 1.3-1.7x for rows of 126 f64, as fast or a little faster for 100 f32, 1.2-1.3x
//! for 1,000 f64 (a work-group per row), and as fast for 25,300 f32 (rows of more than
//! 1,024 vectors are not fused; RESULTS.md#rule-residual-fused). On CPU devices the
//! engine fuses only rows one work-item reads whole (a barrier is a loop there), so
//! `fused` recomputes the sigmoid per element of `X` for longer rows: on PoCL `stored` is
//! 1.1-1.3x faster for 20-element rows and 1.8-2.5x for 126 and 2,530.
//!
//! The elementwise formulas (the residual, the loss per row) are written with `expr!`.
//! The loss (`mean(softplus(z) - y z) + lambda/2 |w|^2`, no penalty on `b`) is read to
//! the host every `LOSS_EVERY` iterations and at the end; nothing else waits. The fit
//! (weights and bias) is checked against the same algorithm on the host in f64 (ndarray):
//! every iteration at the small sizes, the first `CHECK_ITERS` at the large ones.
//!
//! ```text
//! cargo run --release --example logistic_regression                 # the six shapes
//! cargo run --release --example logistic_regression -- --shape 200000x100 --dtype f32 --iters 100
//! LAZYCL_EXAMPLE_SMALL=1 cargo run --example logistic_regression    # small, quick
//! ```
//!
//! `benches/reference/torch_reference.py` generates the same data and times the same fit
//! with PyTorch.

use std::process::ExitCode;
use std::time::Instant;

use clap::{Parser, ValueEnum};
use lazycl::prelude::*;
use lazycl::Stats;
use ndarray::{Array1, ArrayView2};

/// The shapes (rows x features, element type) from the field.
const SHAPES: [(usize, usize, &str); 6] = [
    (36_000, 126, "f64"),
    (200_000, 100, "f32"),
    (20_000, 1_000, "f64"),
    (3_200, 25_300, "f32"),
    (2_000_000, 20, "f32"),
    (8_000_000, 20, "f64"),
];
/// Small shapes for `make test` on a 2-core CPU device: one of each kind (many features
/// in f64, more features than rows, few features in f32 and f64). Fewer shapes, because
/// each new shape and type builds its own few programs, which PoCL compiles slowly.
const SMALL_SHAPES: [(usize, usize, &str); 4] = [
    (1_500, 126, "f64"),
    (48, 2_530, "f32"),
    (8_000, 20, "f32"),
    (8_000, 20, "f64"),
];

const LOSS_EVERY: usize = 50;
const CHECK_ITERS: usize = 3;
const DEFAULT_ITERS: usize = 100;
const SMALL_ITERS: usize = 30;

// The data, the model's formulas and its step, shared with the report.
#[path = "common/logreg.rs"]
mod logreg;
#[path = "common/synthetic.rs"]
mod synthetic;
use logreg::{loss, make_classification, Model, Real, LAMBDA, LEARNING_RATE};

// ---------------------------------------------------------------------------------------
// The same algorithm on the host, in f64.

/// Weights and bias after `iters` steps from zero.
fn host_fit<T: Real>(x: &[T], y: &[T], n: usize, d: usize, iters: usize) -> (Array1<f64>, f64) {
    let x = ArrayView2::from_shape((n, d), x).expect("shape");
    let mut w = Array1::<f64>::zeros(d);
    let mut b = 0.0;
    for _ in 0..iters {
        // One pass over the rows: z_i = x_i . w + b, r_i = sigmoid(z_i) - y_i, g += r_i x_i,
        // gb += r_i.
        let mut g = Array1::<f64>::zeros(d);
        let mut gb = 0.0;
        for (row, yi) in x.rows().into_iter().zip(y) {
            let z: f64 = row.iter().zip(&w).map(|(a, w)| a.to_f64() * w).sum::<f64>() + b;
            let r = 1.0 / (1.0 + (-z).exp()) - yi.to_f64();
            g.zip_mut_with(&row, |g, a| *g += r * a.to_f64());
            gb += r;
        }
        w = &w - &((g / n as f64 + &w * LAMBDA) * LEARNING_RATE);
        b -= gb / n as f64 * LEARNING_RATE;
    }
    (w, b)
}

fn host_loss<T: Real>(x: &[T], y: &[T], n: usize, d: usize, w: &Array1<f64>, b: f64) -> f64 {
    let mut total = 0.0;
    for i in 0..n {
        let z: f64 = (0..d).map(|j| x[i * d + j].to_f64() * w[j]).sum::<f64>() + b;
        let softplus = z.max(0.0) + (-z.abs()).exp().ln_1p();
        total += softplus - y[i].to_f64() * z;
    }
    let penalty: f64 = w.iter().map(|v| v * v).sum::<f64>() * LAMBDA * 0.5;
    total / n as f64 + penalty
}

// ---------------------------------------------------------------------------------------

struct Outcome {
    per_iter_ms: f64,
    loss: f64,
    accuracy: f64,
    kernels_per_iter: f64,
}

fn run_shape<T: Real>(
    ctx: &Context,
    n: usize,
    d: usize,
    iters: usize,
    small: bool,
    fuse_residual: bool,
) -> lazycl::Result<std::result::Result<Outcome, String>> {
    let dtype = T::DTYPE;
    println!(
        "\n== {n} x {d} {dtype:?}, {iters} iterations, residual {} ==",
        if fuse_residual { "fused" } else { "stored" }
    );
    let t0 = Instant::now();
    let (xh, yh) = make_classification::<T>(n, d);
    let mut m = Model::new(ctx, &xh, &yh, n, d, fuse_residual)?;
    println!(
        "data generated and uploaded in {:.2} s",
        t0.elapsed().as_secs_f64()
    );

    // Check (also the warm-up: builds every kernel): the first iterations, or all of them
    // at the small sizes, against the host.
    let check_iters = if small { iters } else { CHECK_ITERS };
    for _ in 0..check_iters {
        m.step()?;
    }
    // The weights and the bias, compared as one vector [w..., b].
    let mut p_dev: Vec<f64> = m.w.to_vec()?.into_iter().map(T::to_f64).collect();
    p_dev.extend(m.b.to_vec()?.into_iter().map(T::to_f64));
    let (loss_dev, _) = m.metrics()?;
    let t1 = Instant::now();
    let (w_ref, b_ref) = host_fit(&xh, &yh, n, d, check_iters);
    let loss_ref = host_loss(&xh, &yh, n, d, &w_ref, b_ref);
    let p_ref: Vec<f64> = w_ref.iter().copied().chain([b_ref]).collect();
    let scale = p_ref.iter().fold(1e-12f64, |a, v| a.max(v.abs()));
    let err = p_dev
        .iter()
        .zip(&p_ref)
        .fold(0.0f64, |a, (g, r)| a.max((g - r).abs()))
        / scale;
    let b_err = (p_dev[d] - b_ref).abs() / scale;
    let loss_err = (loss_dev - loss_ref).abs() / loss_ref.abs().max(1e-12);
    println!(
        "host check after {check_iters} iterations ({:.2} s on the host): max |(w, b) - (w, b)_ref| / max |(w, b)_ref| = {err:.2e} \
         (bias {:.6} vs {b_ref:.6}, {b_err:.1e}), loss {loss_dev:.6} vs {loss_ref:.6} (rel {loss_err:.1e}), tolerance {:.0e}",
        t1.elapsed().as_secs_f64(),
        p_dev[d],
        T::TOL
    );
    if !(err <= T::TOL && loss_err <= T::TOL) {
        return Ok(Err(format!(
            "{n}x{d} {dtype:?}: device fit differs from the host (weights and bias {err:.2e}, loss {loss_err:.2e})"
        )));
    }

    // The same iterations from zero by the gradients lazycl derives (`grad`): the same
    // parameters up to rounding, and the kernels a step takes beside the hand-written one.
    let (mut w, mut b) = (ctx.zeros::<T>([d])?, ctx.zeros::<T>([1])?);
    let mut grad_kernels = 0;
    for _ in 0..check_iters {
        let s0 = ctx.stats();
        (w, b) = logreg::grad_update(&m.x, &m.y, &w, &b)?;
        lazycl::eval(&(&w, &b))?;
        grad_kernels = (ctx.stats() - s0).kernels_launched;
    }
    let mut p_grad: Vec<f64> = w.to_vec()?.into_iter().map(T::to_f64).collect();
    p_grad.extend(b.to_vec()?.into_iter().map(T::to_f64));
    let grad_err = p_grad
        .iter()
        .zip(&p_dev)
        .fold(0.0f64, |a, (c, g)| a.max((c - g).abs()))
        / scale;
    println!("by grad, {check_iters} steps: max difference {grad_err:.1e}, {grad_kernels} kernels a step");
    if grad_err.is_nan() || grad_err > T::TOL {
        return Ok(Err(format!(
            "{n}x{d} {dtype:?}: the step by grad differs from the hand-written one ({grad_err:.2e})"
        )));
    }

    // The same iterations from zero as a captured step (residual fused): the same
    // parameters, up to rounding.
    let captured = m.capture();
    let (mut w, mut b) = (ctx.zeros::<T>([d])?, ctx.zeros::<T>([1])?);
    for _ in 0..check_iters {
        (w, b) = captured.run((&w, &b))?;
    }
    let mut p_cap: Vec<f64> = w.to_vec()?.into_iter().map(T::to_f64).collect();
    p_cap.extend(b.to_vec()?.into_iter().map(T::to_f64));
    let cap_err = p_cap
        .iter()
        .zip(&p_dev)
        .fold(0.0f64, |a, (c, g)| a.max((c - g).abs()))
        / scale;
    println!("captured step (Context::capture), {check_iters} runs: max difference {cap_err:.1e}");
    if cap_err.is_nan() || cap_err > T::TOL {
        return Ok(Err(format!(
            "{n}x{d} {dtype:?}: the captured step differs from the recorded one ({cap_err:.2e})"
        )));
    }

    // Warm-up: one step with a loss read, as the timed loop does, so that every program
    // the loop uses is built (or loaded) before the clock starts.
    let w_before = m.w.clone();
    let z = m.step()?;
    loss(&z, &m.y, &w_before).item()?;

    // Timed fit from zero: read the loss every LOSS_EVERY iterations and at the end.
    m.reset()?;
    ctx.synchronize()?;
    let before = ctx.stats();
    let start = Instant::now();
    let mut losses = Vec::new();
    let mut step_kernels = 0;
    for it in 0..iters {
        let w_before = m.w.clone();
        let s0 = ctx.stats();
        let z = m.step()?;
        if it == 1 {
            step_kernels = (ctx.stats() - s0).kernels_launched;
        }
        if it % LOSS_EVERY == 0 {
            losses.push((it, loss(&z, &m.y, &w_before).item()?.to_f64()));
        }
    }
    // The loss and accuracy of the final weights: one more z, both read in one flush.
    let (final_loss, accuracy) = m.metrics()?;
    let elapsed = start.elapsed().as_secs_f64();
    let delta: Stats = ctx.stats() - before;
    let per_iter_ms = elapsed * 1e3 / iters as f64;
    for (it, l) in &losses {
        println!("  iteration {it:>5}: loss {l:.6}");
    }
    println!(
        "  final: loss {final_loss:.6}, training accuracy {:.2}%",
        accuracy * 100.0
    );
    let kernels_per_iter = delta.kernels_launched as f64 / iters as f64;
    println!(
        "  {:.3} ms per iteration ({iters} iterations in {:.3} s), {kernels_per_iter:.2} kernels, \
         {:.2} host waits per iteration ({step_kernels} kernels in a step without a loss read)",
        per_iter_ms,
        elapsed,
        delta.host_waits as f64 / iters as f64
    );
    if !final_loss.is_finite() || final_loss >= losses[0].1 {
        return Ok(Err(format!(
            "{n}x{d} {dtype:?}: the loss did not decrease ({} -> {final_loss})",
            losses[0].1
        )));
    }
    Ok(Ok(Outcome {
        per_iter_ms,
        loss: final_loss,
        accuracy,
        kernels_per_iter,
    }))
}

/// A matrix shape on the command line: `RxC`.
#[derive(Clone, Copy)]
struct Shape {
    rows: usize,
    cols: usize,
}

fn parse_shape(v: &str) -> std::result::Result<Shape, String> {
    let (r, c) = v.split_once('x').ok_or("needs RxC, e.g. 200000x100")?;
    Ok(Shape {
        rows: r.parse().map_err(|_| format!("bad row count {r}"))?,
        cols: c.parse().map_err(|_| format!("bad column count {c}"))?,
    })
}

/// An element type on the command line.
#[derive(Clone, Copy, ValueEnum)]
enum Dtype {
    F32,
    F64,
}

impl Dtype {
    fn name(self) -> &'static str {
        match self {
            Dtype::F32 => "f32",
            Dtype::F64 => "f64",
        }
    }
}

/// Where the residual `sigmoid(z) - y` lives in a step.
#[derive(Clone, Copy, ValueEnum)]
enum Residual {
    /// `fused` on GPUs, `stored` elsewhere
    Auto,
    /// Recomputed inside the kernels that read it: two kernels a step
    Fused,
    /// Evaluated first (`r.eval()`): five kernels a step, two reads of X
    Stored,
}

impl Residual {
    fn name(self) -> &'static str {
        match self {
            Residual::Auto => "auto",
            Residual::Fused => "fused",
            Residual::Stored => "stored",
        }
    }
}

/// Binary logistic regression fitted by gradient descent on synthetic data, checked
/// against the same algorithm on the host in f64.
#[derive(Parser)]
struct Cli {
    /// One shape, rows x features, e.g. 200000x100 [default: the six shapes from the field;
    /// four small ones with LAZYCL_EXAMPLE_SMALL=1]
    #[arg(long, value_name = "RxC", value_parser = parse_shape)]
    shape: Option<Shape>,
    /// The element type [default: each shape's own, from its table, else f32]
    #[arg(long)]
    dtype: Option<Dtype>,
    /// Iterations, at least 1 [default: 100; 30 with LAZYCL_EXAMPLE_SMALL=1]
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u64).range(1..))]
    iters: Option<u64>,
    /// Where the residual lives in a step
    #[arg(long, value_enum, default_value_t = Residual::Auto)]
    residual: Residual,
}

struct Args {
    shapes: Vec<(usize, usize, String)>,
    iters: usize,
    residual: Residual,
    small: bool,
}

/// The arguments with their defaults filled in; a usage error exits with status 2.
fn parse_args() -> Args {
    let cli = Cli::parse();
    let small = std::env::var("LAZYCL_EXAMPLE_SMALL").is_ok_and(|v| v == "1");
    let shape = cli.shape.map(|s| (s.rows, s.cols));
    let dtype = cli.dtype.map(|t| t.name().to_string());
    let iters = cli
        .iters
        .map_or(if small { SMALL_ITERS } else { DEFAULT_ITERS }, |i| i as usize);
    let residual = cli.residual;
    let table: &[(usize, usize, &str)] = if small { &SMALL_SHAPES } else { &SHAPES };
    let shapes = match (shape, dtype) {
        (Some((r, c)), Some(t)) => vec![(r, c, t)],
        (Some((r, c)), None) => {
            let t = table
                .iter()
                .chain(SHAPES.iter())
                .find(|s| s.0 == r && s.1 == c)
                .map_or("f32", |s| s.2);
            vec![(r, c, t.to_string())]
        }
        (None, Some(t)) => table.iter().map(|&(r, c, _)| (r, c, t.clone())).collect(),
        (None, None) => table.iter().map(|&(r, c, t)| (r, c, t.to_string())).collect(),
    };
    Args {
        shapes,
        iters,
        residual,
        small,
    }
}

fn main() -> lazycl::Result<ExitCode> {
    let args = parse_args();
    let ctx = Context::new()?;
    let fuse = match args.residual {
        Residual::Auto => ctx.device().device_type == lazycl::DeviceType::Gpu,
        Residual::Fused => true,
        Residual::Stored => false,
    };
    println!(
        "logistic regression by gradient descent on {} ({}), lr {LEARNING_RATE}, lambda {LAMBDA}, residual {} ({})",
        ctx.device().name,
        ctx.device().platform_name,
        if fuse { "fused" } else { "stored" },
        args.residual.name()
    );
    let mut rows = Vec::new();
    let mut failures = Vec::new();
    for (n, d, t) in &args.shapes {
        let fp64 = t == "f64";
        let result = if fp64 {
            run_shape::<f64>(&ctx, *n, *d, args.iters, args.small, fuse)?
        } else {
            run_shape::<f32>(&ctx, *n, *d, args.iters, args.small, fuse)?
        };
        match result {
            Ok(o) => rows.push((*n, *d, t.clone(), o)),
            Err(e) => {
                eprintln!("FAILED: {e}");
                failures.push(e);
            }
        }
    }
    println!("\n| shape | dtype | ms / iteration | kernels / iteration | final loss | accuracy |");
    println!("|---|---|---|---|---|---|");
    for (n, d, t, o) in &rows {
        println!(
            "| {n} x {d} | {t} | {:.4} | {:.2} | {:.5} | {:.2}% |",
            o.per_iter_ms,
            o.kernels_per_iter,
            o.loss,
            o.accuracy * 100.0
        );
    }
    println!("\n{}", ctx.stats());
    if failures.is_empty() {
        println!("logistic_regression: OK");
        Ok(ExitCode::SUCCESS)
    } else {
        println!("logistic_regression: {} check(s) FAILED", failures.len());
        Ok(ExitCode::FAILURE)
    }
}
