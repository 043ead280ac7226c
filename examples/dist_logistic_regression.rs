//! Logistic regression fitted by gradient descent over MPI ranks (feature `mpi`): each
//! rank generates its own rows of `X` and `y` from a seeded generator (row `i` is a
//! function of the seed and `i` alone, so the data do not depend on the rank count),
//! computes its part of the gradient on its device, and the ranks add the parts with
//! `MPI_Allreduce` on host buffers of `d + 1` numbers a step. The weights are the same on
//! every rank after every step.
//!
//! ```text
//! z = X w + b          this rank's rows             [n_r]
//! r = sigmoid(z) - y   this rank's rows             [n_r]
//! g = Xᵀ r, sum(r)     this rank's part, then MPI_Allreduce   [d], [1]
//! w -= lr (g / n + lambda w);  b -= lr sum(r) / n   on every rank
//! ```
//!
//! `--check` also runs the same fit in one process on rank 0 (all the rows, a plain
//! context) and fails unless the weights agree to within float tolerance. Prints per
//! step where the time goes: the local part (the kernels and the read of `d + 1`
//! numbers, which waits for them) and the allreduce.
//!
//! ```text
//! cargo build --release --features mpi --example dist_logistic_regression
//! mpirun -np 2 --oversubscribe target/release/examples/dist_logistic_regression --check
//! ```

use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Parser;
use lazycl::dist::World;
use lazycl::prelude::*;

#[derive(Parser)]
struct Cli {
    /// Rows of the whole data set
    #[arg(long, default_value_t = 200_000)]
    rows: usize,
    /// Features per row
    #[arg(long, default_value_t = 32)]
    features: usize,
    /// Gradient steps
    #[arg(long, default_value_t = 50)]
    iters: usize,
    /// Compare with the same fit in one process (rank 0)
    #[arg(long)]
    check: bool,
}

const LR: f32 = 0.5;
const LAMBDA: f32 = 1e-3;

/// splitmix64 of a key: uniform bits.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e3779b97f4a7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d049bb133111eb);
    z ^ (z >> 31)
}

/// Rows `rows` of the data set: features in [-1, 1), and labels from a fixed linear rule
/// with 2 % flipped.
fn generate(rows: std::ops::Range<usize>, d: usize) -> (Vec<f32>, Vec<f32>) {
    let mut x = Vec::with_capacity(rows.len() * d);
    let mut y = Vec::with_capacity(rows.len());
    for i in rows {
        let mut score = 0.0f32;
        for j in 0..d {
            let v = (mix((i * d + j) as u64 ^ 0x5eed) >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0;
            score += v * if j % 3 == 0 { 1.5 } else { -0.25 };
            x.push(v);
        }
        let flip = mix(i as u64 ^ 0xf11b).is_multiple_of(50);
        y.push(f32::from(u8::from((score > 0.0) != flip)));
    }
    (x, y)
}

/// The local part of a step: `[Xᵀ r, sum(r)]` over the rows in `x`, `y`.
fn partial(x: &Array<f32>, y: &Array<f32>, w: &Array<f32>, b: f32) -> Result<Vec<f32>> {
    let z = x.matmul(w) + b;
    let r = expr!(1.0 / (1.0 + (-z).exp()) - y);
    let g = x.t().matmul(&r);
    let mut out = g.to_vec()?;
    out.push(r.sum().item()?);
    Ok(out)
}

/// One update of `w` and `b` from the whole gradient `[Xᵀ r, sum(r)]`.
fn update(w: &Array<f32>, b: f32, grad: &[f32], n: usize) -> Result<(Array<f32>, f32)> {
    let d = grad.len() - 1;
    let g = w.context().from_slice(&grad[..d])?;
    let w = w - LR * (g / n as f32 + LAMBDA * w);
    w.eval()?;
    Ok((w, b - LR * grad[d] / n as f32))
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("dist_logistic_regression failed: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<()> {
    let cli = Cli::parse();
    let small = std::env::var("LAZYCL_EXAMPLE_SMALL").is_ok();
    let (n, d, iters) = if small {
        (5000, 8, 10)
    } else {
        (cli.rows, cli.features, cli.iters)
    };
    let world = World::init()?;
    let (rank, size) = (world.rank(), world.size());
    let share = |r: usize| n / size + usize::from(r < n % size);
    let first: usize = (0..rank).map(share).sum();
    let (xs, ys) = generate(first..first + share(rank), d);
    let ctx = world.ctx().clone();
    let x = world.rows(ctx.from_shape_slice([share(rank), d], &xs)?)?;
    let y = world.rows(ctx.from_slice(&ys)?)?;

    let mut w = ctx.zeros::<f32>(d)?;
    let mut b = 0.0f32;
    // Timed from the second step on (the first builds the programs).
    let (mut local_time, mut reduce_time) = (Duration::ZERO, Duration::ZERO);
    let mut started = Instant::now();
    for step in 0..iters {
        if step == 1 {
            (local_time, reduce_time, started) = (Duration::ZERO, Duration::ZERO, Instant::now());
        }
        let t = Instant::now();
        let part = partial(x.local(), y.local(), &w, b)?;
        local_time += t.elapsed();
        let t = Instant::now();
        let grad = world.allreduce_sum(&part);
        reduce_time += t.elapsed();
        (w, b) = update(&w, b, &grad, n)?;
    }
    let weights = w.to_vec()?;
    let total = started.elapsed();
    let per = |t: Duration| t.as_secs_f64() * 1e3 / iters.saturating_sub(1).max(1) as f64;
    println!(
        "rank {rank} of {size}: {n}x{d}, {iters} steps, {:.3} ms a step after the first: \
         local part {:.3} ms, allreduce {:.3} ms",
        per(total),
        per(local_time),
        per(reduce_time)
    );
    if rank == 0 {
        println!("w[..4] = {:?}, b = {b}", &weights[..4.min(d)]);
    }
    if cli.check || small {
        check(&world, &weights, b, n, d, iters)?;
    }
    Ok(())
}

/// Rank 0 fits the whole data set in one process and compares; every rank learns the
/// verdict (so all exit alike).
fn check(world: &World, weights: &[f32], b: f32, n: usize, d: usize, iters: usize) -> Result<()> {
    let mut bad = 0.0f32;
    if world.rank() == 0 {
        let ctx = world.ctx();
        let (xs, ys) = generate(0..n, d);
        let (x, y) = (ctx.from_shape_slice([n, d], &xs)?, ctx.from_slice(&ys)?);
        let (mut w1, mut b1) = (ctx.zeros::<f32>(d)?, 0.0f32);
        for _ in 0..iters {
            let grad = partial(&x, &y, &w1, b1)?;
            (w1, b1) = update(&w1, b1, &grad, n)?;
        }
        let one = w1.to_vec()?;
        let worst = one
            .iter()
            .chain([&b1])
            .zip(weights.iter().chain([&b]))
            .map(|(a, c)| (a - c).abs() / a.abs().max(1e-2))
            .fold(0.0f32, f32::max);
        println!(
            "one process against {} ranks: largest relative difference {worst:.2e}",
            world.size()
        );
        bad = f32::from(u8::from(worst > 1e-3));
    }
    if world.allreduce_sum(&[bad])[0] > 0.0 {
        return Err(Error::InvalidShape(
            "the distributed fit differs from the one-process fit".into(),
        ));
    }
    Ok(())
}
