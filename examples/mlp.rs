//! A two-layer perceptron trained by gradient descent: forward and backward passes as lazy
//! arrays, checked step by step against the same computation on the host in f64.
//!
//! ```text
//! h      = relu(x w1 + b1)              one GEMM kernel: bias and ReLU in its store   [n, hidden]
//! logits = h w2 + b2                    one GEMM kernel (h read in its tile loads     [n, classes]
//!                                       when it is not kept)
//! p      = softmax(logits)              row reductions (max, sum of exponentials)
//! loss   = mean(logsumexp - logit[y])
//! dz     = (p - onehot(y)) / n                                                         [n, classes]
//! dw2    = hᵀ dz,  db2 = sum_rows dz    a product with a long k: split along the rows
//! dh     = (dz w2ᵀ) * (h > 0)           one GEMM kernel, the ReLU's mask in its store  [n, hidden]
//! dw1    = xᵀ dh,  db1 = sum_rows dh
//! w     -= lr dw                        elementwise
//! ```
//!
//! The same step is also taken with the gradients lazycl derives (`loss.grad`), from the
//! same start: both must give the same loss at every checked step, and the timed steps
//! say what each costs.
//!
//! Data: points from `classes` Gaussian blobs in `features` dimensions (the label is the
//! blob), deterministic (`common/synthetic.rs`). The weights start small and random.
//!
//! ```text
//! cargo run --release --example mlp                       # 65536 points, 100 steps
//! cargo run --release --example mlp -- --n 262144 --hidden 256 --steps 50
//! LAZYCL_EXAMPLE_SMALL=1 cargo run --example mlp          # small, quick
//! ```

use std::process::ExitCode;
use std::time::Instant;

use clap::error::ErrorKind;
use clap::{CommandFactory, Parser};
use lazycl::prelude::*;
use ndarray::{Array1, Array2, Axis as HostAxis};

#[path = "common/synthetic.rs"]
mod synthetic;
use synthetic::{normal, uniform};

/// A two-layer perceptron trained by gradient descent, checked step by step against the
/// same computation on the host in f64.
#[derive(Parser)]
#[command(name = "mlp")]
struct Cli {
    /// Points [default: 65536; 1024 with LAZYCL_EXAMPLE_SMALL=1]
    #[arg(long, value_name = "N")]
    n: Option<usize>,
    /// Input features
    #[arg(long, value_name = "F", default_value_t = 32)]
    features: usize,
    /// Hidden units [default: 128; 48 with LAZYCL_EXAMPLE_SMALL=1]
    #[arg(long, value_name = "H")]
    hidden: Option<usize>,
    /// Classes, at least 2
    #[arg(long, value_name = "C", default_value_t = 10)]
    classes: usize,
    /// Gradient steps [default: 100; 8 with LAZYCL_EXAMPLE_SMALL=1]
    #[arg(long, value_name = "S")]
    steps: Option<usize>,
}

/// The model's shape and the run.
struct Args {
    n: usize,
    features: usize,
    hidden: usize,
    classes: usize,
    steps: usize,
    lr: f32,
    small: bool,
}

/// The arguments with their defaults filled in; a usage error exits with status 2.
fn parse_args() -> Args {
    let cli = Cli::parse();
    let small = std::env::var("LAZYCL_EXAMPLE_SMALL").is_ok_and(|v| v == "1");
    let a = Args {
        n: cli.n.unwrap_or(if small { 1024 } else { 65536 }),
        features: cli.features,
        hidden: cli.hidden.unwrap_or(if small { 48 } else { 128 }),
        classes: cli.classes,
        steps: cli.steps.unwrap_or(if small { 8 } else { 100 }),
        lr: 0.5,
        small,
    };
    if a.n == 0 || a.classes < 2 || a.features == 0 || a.hidden == 0 {
        Cli::command()
            .error(
                ErrorKind::ValueValidation,
                "n, features and hidden must be positive, and classes at least 2",
            )
            .exit();
    }
    a
}

/// Points of `classes` blobs (centers `0.7 * N(0, 1)`, unit noise) and their blobs.
fn make_data(n: usize, features: usize, classes: usize) -> (Vec<f32>, Vec<u64>) {
    let centers: Vec<f64> = (0..classes * features)
        .map(|i| 0.7 * normal(21, i as u64))
        .collect();
    let mut x = Vec::with_capacity(n * features);
    let mut y = Vec::with_capacity(n);
    for i in 0..n {
        let c = ((uniform(22, i as u64) * classes as f64) as usize).min(classes - 1);
        y.push(c as u64);
        for j in 0..features {
            x.push((centers[c * features + j] + normal(23, (i * features + j) as u64)) as f32);
        }
    }
    (x, y)
}

/// Weights of `rows x cols`, `N(0, 1) / sqrt(rows)`.
fn init(seed: u64, rows: usize, cols: usize) -> Vec<f32> {
    let s = (rows as f64).sqrt();
    (0..rows * cols)
        .map(|i| (normal(seed, i as u64) / s) as f32)
        .collect()
}

/// The parameters on the device.
struct Model {
    w1: Array<f32>,
    b1: Array<f32>,
    w2: Array<f32>,
    b2: Array<f32>,
}

/// A training step: the loss of the parameters it updates.
type StepFn = fn(&mut Model, &Array<f32>, &Array<f32>, f32) -> lazycl::Result<Array<f32>>;

/// The same parameters on the host, in f64.
struct HostModel {
    w1: Array2<f64>,
    b1: Array1<f64>,
    w2: Array2<f64>,
    b2: Array1<f64>,
}

/// One step on the device: the loss of the current parameters (lazy), and the parameters
/// updated in place (enqueued, not waited for).
fn step(m: &mut Model, x: &Array<f32>, onehot: &Array<f32>, lr: f32) -> lazycl::Result<Array<f32>> {
    let n = x.shape()[0] as f32;
    // Forward.
    let h = (x.matmul(&m.w1) + &m.b1).max(0.0f32); // [n, hidden]
    let logits = h.matmul(&m.w2) + &m.b2; // [n, classes]
    let top = logits.amax_axes(&[1], true); // [n, 1]
    let e = (&logits - &top).exp();
    let total = e.sum_axes(&[1], true); // [n, 1]
    let p = &e / &total;
    let picked = (&logits * onehot).sum_axes(&[1], true);
    let loss = (total.ln() + &top - &picked).mean();
    // Backward.
    let dz = (&p - onehot) / n; // [n, classes]
    let dw2 = h.t().matmul(&dz);
    let db2 = dz.sum_axis(0);
    let dh = dz.matmul(&m.w2.t()) * h.gt(0.0f32).cast::<f32>(); // [n, hidden]
    let dw1 = x.t().matmul(&dh);
    let db1 = dh.sum_axis(0);
    let w1 = &m.w1 - lr * &dw1;
    let b1 = &m.b1 - lr * &db1;
    let w2 = &m.w2 - lr * &dw2;
    let b2 = &m.b2 - lr * &db2;
    lazycl::eval(&(&loss, &w1, &b1, &w2, &b2))?;
    *m = Model { w1, b1, w2, b2 };
    Ok(loss)
}

/// The same step with the gradients derived by lazycl: only the loss is written.
fn grad_step(m: &mut Model, x: &Array<f32>, onehot: &Array<f32>, lr: f32) -> lazycl::Result<Array<f32>> {
    let h = (x.matmul(&m.w1) + &m.b1).max(0.0f32);
    let logits = h.matmul(&m.w2) + &m.b2;
    let loss = (logits.logsumexp(1) - (&logits * onehot).sum_axis(1)).mean();
    let g = loss.grad(&[&m.w1, &m.b1, &m.w2, &m.b2])?;
    let w1 = &m.w1 - lr * &g[0];
    let b1 = &m.b1 - lr * &g[1];
    let w2 = &m.w2 - lr * &g[2];
    let b2 = &m.b2 - lr * &g[3];
    lazycl::eval(&(&loss, &w1, &b1, &w2, &b2))?;
    *m = Model { w1, b1, w2, b2 };
    Ok(loss)
}

/// The same step on the host in f64; returns the loss before the update.
fn host_step(m: &mut HostModel, x: &Array2<f64>, onehot: &Array2<f64>, lr: f64) -> f64 {
    let n = x.nrows() as f64;
    let h = (x.dot(&m.w1) + &m.b1).mapv(|v| v.max(0.0));
    let logits = h.dot(&m.w2) + &m.b2;
    let top = logits.map_axis(HostAxis(1), |r| r.fold(f64::NEG_INFINITY, |a, &b| a.max(b)));
    let e = (&logits - &top.clone().insert_axis(HostAxis(1))).mapv(f64::exp);
    let total = e.sum_axis(HostAxis(1));
    let p = &e / &total.clone().insert_axis(HostAxis(1));
    let picked = (&logits * onehot).sum_axis(HostAxis(1));
    let loss = (total.mapv(f64::ln) + &top - &picked).mean().unwrap_or(0.0);
    let dz = (&p - onehot) / n;
    let dw2 = h.t().dot(&dz);
    let db2 = dz.sum_axis(HostAxis(0));
    let mask = h.mapv(|v| if v > 0.0 { 1.0 } else { 0.0 });
    let dh = dz.dot(&m.w2.t()) * mask;
    let dw1 = x.t().dot(&dh);
    let db1 = dh.sum_axis(HostAxis(0));
    m.w1 = &m.w1 - &(lr * dw1);
    m.b1 = &m.b1 - &(lr * db1);
    m.w2 = &m.w2 - &(lr * dw2);
    m.b2 = &m.b2 - &(lr * db2);
    loss
}

/// The largest difference between device and host parameters, relative to the host's
/// largest magnitude.
fn drift(m: &Model, h: &HostModel) -> lazycl::Result<f64> {
    let mut worst = 0.0f64;
    for (dev, host) in [
        (&m.w1, h.w1.view().into_dyn()),
        (&m.b1, h.b1.view().into_dyn()),
        (&m.w2, h.w2.view().into_dyn()),
        (&m.b2, h.b2.view().into_dyn()),
    ] {
        let got = dev.to_vec()?;
        let scale = host.iter().fold(1e-12f64, |a, v| a.max(v.abs()));
        let diff = got
            .iter()
            .zip(host.iter())
            .fold(0.0f64, |a, (g, w)| a.max((*g as f64 - w).abs()));
        worst = worst.max(diff / scale);
    }
    Ok(worst)
}

fn main() -> lazycl::Result<ExitCode> {
    let args = parse_args();
    let Args {
        n,
        features,
        hidden,
        classes,
        steps,
        lr,
        small,
    } = args;
    let ctx = Context::new()?;
    println!(
        "two-layer perceptron {features} -> {hidden} -> {classes} on {n} points, {steps} steps, on {} ({})",
        ctx.device().name,
        ctx.device().platform_name
    );
    let (xh, yh) = make_data(n, features, classes);
    let (w1h, w2h) = (init(31, features, hidden), init(32, hidden, classes));
    let x = ctx.from_shape_slice([n, features], &xh)?;
    let ids: Vec<u64> = (0..classes as u64).collect();
    let onehot = ctx
        .from_shape_slice([n, 1], &yh)?
        .eq(&ctx.from_shape_slice([1, classes], &ids)?)
        .cast::<f32>();
    onehot.eval()?;
    let start_model = || -> lazycl::Result<Model> {
        Ok(Model {
            w1: ctx.from_shape_slice([features, hidden], &w1h)?,
            b1: ctx.zeros([hidden])?,
            w2: ctx.from_shape_slice([hidden, classes], &w2h)?,
            b2: ctx.zeros([classes])?,
        })
    };
    let mut model = start_model()?;
    let mut derived = start_model()?;
    let to64 = |v: &[f32], r: usize, c: usize| Array2::from_shape_fn((r, c), |(i, j)| v[i * c + j] as f64);
    let mut host = HostModel {
        w1: to64(&w1h, features, hidden),
        b1: Array1::zeros(hidden),
        w2: to64(&w2h, hidden, classes),
        b2: Array1::zeros(classes),
    };
    let xd = to64(&xh, n, features);
    let onehot_h = Array2::from_shape_fn((n, classes), |(i, j)| f64::from(yh[i] as usize == j));

    // Checked steps: every step at the small size, the first few at the large one.
    let checked = if small { steps } else { steps.min(3) };
    let mut worst = 0.0f64;
    for s in 0..checked {
        let loss = step(&mut model, &x, &onehot, lr)?.item()? as f64;
        let derived_loss = grad_step(&mut derived, &x, &onehot, lr)?.item()? as f64;
        let host_loss = host_step(&mut host, &xd, &onehot_h, lr as f64);
        let d = drift(&model, &host)?;
        worst = worst.max(d);
        println!(
            "step {s}: loss {loss:.5} (by grad {derived_loss:.5}, host f64 {host_loss:.5}), parameters within {d:.1e} of the host's"
        );
        if (loss - derived_loss).abs() > 1e-5 * (1.0 + loss.abs()) {
            println!("mlp: the loss by grad differs from the hand-written step's");
            return Ok(ExitCode::FAILURE);
        }
        if (loss - host_loss).abs() > 1e-4 * (1.0 + host_loss.abs()) {
            println!("mlp: the loss differs from the host's");
            return Ok(ExitCode::FAILURE);
        }
    }
    // f32 against f64 over a few steps of sums of thousands of terms.
    let ok = worst <= 1e-4;

    // Timed steps: nothing read until the end; the hand-written steps, then those by grad.
    let timed = steps - checked;
    for (name, mut m, by) in [
        ("hand-written", model, step as StepFn),
        ("by grad", derived, grad_step as StepFn),
    ] {
        ctx.synchronize()?;
        let before = ctx.stats();
        let start = Instant::now();
        let mut loss = None;
        for _ in checked..steps {
            loss = Some(by(&mut m, &x, &onehot, lr)?);
        }
        let last = loss.map(|l| l.item()).transpose()?;
        let elapsed = start.elapsed().as_secs_f64();
        if let Some(last) = last {
            let ran = ctx.stats() - before;
            println!(
                "{timed} more steps {name} in {:.3} s ({:.3} ms per step, {:.1} kernels per step), final loss {last:.5}",
                elapsed,
                elapsed * 1e3 / timed as f64,
                ran.kernels_launched as f64 / timed as f64
            );
        }
    }
    if ok {
        println!("mlp: OK");
        Ok(ExitCode::SUCCESS)
    } else {
        println!("mlp: parameters drifted {worst:.2e} from the host's (more than 1e-4)");
        Ok(ExitCode::FAILURE)
    }
}
