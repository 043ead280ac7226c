//! The log-likelihood of a normal model `N(mu, sigma^2)` over a data array, and its
//! gradient, computed and joined on the device and read to the host once per evaluation.
//!
//! ```text
//! s1 = sum(x - mu)                 s2 = sum((x - mu)^2)          two fused reductions
//! logp      = -n ln(sigma) - n ln(2 pi) / 2 - s2 / (2 sigma^2)
//! d/dmu     = s1 / sigma^2
//! d/dsigma  = s2 / sigma^3 - n / sigma
//! [logp, d/dmu, d/dsigma]                                         one [3] kernel, one read
//! ```
//!
//! `mu` and `sigma` are host scalars, so they travel as kernel arguments: a new value
//! builds nothing and uploads nothing. The three results are stacked into one `[3]` array
//! on the device (each scalar times a unit vector), so each evaluation costs exactly one
//! host wait. The evaluations drive Newton steps on `(mu, ln sigma)` (computed on the host
//! from the gradient) to the maximum-likelihood estimate; every evaluation at the small size, and the first and last
//! at the large size, are checked against the host in f64.
//!
//! ```text
//! cargo run --release --example gaussian_logp               # 10,000,000 values, f32 and f64
//! cargo run --release --example gaussian_logp -- --n 50000000 --iters 100
//! LAZYCL_EXAMPLE_SMALL=1 cargo run --example gaussian_logp   # small, quick
//! ```

use std::process::ExitCode;
use std::time::Instant;

use clap::error::ErrorKind;
use clap::{CommandFactory, Parser, ValueEnum};
use lazycl::prelude::*;
use lazycl::Stats;

// The data, the model and its Newton step, shared with the report.
#[path = "common/gaussian.rs"]
mod gaussian;
#[path = "common/synthetic.rs"]
mod synthetic;
use gaussian::{make_data, newton_step, rel_err, Model, Real, LN_2PI, TRUE_SIGMA};

fn host_evaluate<T: Real>(data: &[T], mu: f64, sigma: f64) -> [f64; 3] {
    let n = data.len() as f64;
    let (mut s1, mut s2) = (0.0f64, 0.0f64);
    for &x in data {
        let d = x.to_f64() - mu;
        s1 += d;
        s2 += d * d;
    }
    let inv_var = 1.0 / (sigma * sigma);
    [
        -n * (sigma.ln() + 0.5 * LN_2PI) - 0.5 * s2 * inv_var,
        s1 * inv_var,
        s2 * inv_var / sigma - n / sigma,
    ]
}

fn run<T: Real>(ctx: &Context, n: usize, iters: usize, small: bool) -> lazycl::Result<bool> {
    println!("\n== {n} values, {:?} ==", T::DTYPE);
    let data: Vec<T> = make_data(n);
    let model = Model::new(ctx, &data)?;
    let mut ok = true;

    // Warm-up (builds the kernels) and the first check.
    let (mut mu, mut ln_sigma) = (0.0f64, 0.0f64);
    let first = model.evaluate(mu, ln_sigma.exp())?;
    let want = host_evaluate(&data, mu, ln_sigma.exp());
    let err = rel_err(&first, &want, n as f64, 1.0);
    println!(
        "at mu = 0, sigma = 1: device {first:?}\n                        host   {want:?} (rel {err:.1e})"
    );
    ok &= err <= T::TOL;

    // Newton steps on (mu, ln sigma) from the gradient alone (the curvatures are
    // -n / sigma^2 and -2 s2 / sigma^2 = -2 (sigma d/dsigma + n)): one device evaluation,
    // one read, per step.
    let nf = n as f64;
    let before = ctx.stats();
    let start = Instant::now();
    let mut worst = 0.0f64;
    let mut last = first;
    for _ in 0..iters {
        let sigma = ln_sigma.exp();
        let v = model.evaluate(mu, sigma)?;
        if small {
            let e = rel_err(&v, &host_evaluate(&data, mu, sigma), n as f64, sigma);
            worst = worst.max(e);
        }
        newton_step(&mut mu, &mut ln_sigma, &v, nf);
        last = v;
    }
    let elapsed = start.elapsed().as_secs_f64();
    let delta: Stats = ctx.stats() - before;
    let sigma = ln_sigma.exp();
    let final_host = host_evaluate(&data, mu, sigma);
    let final_dev = model.evaluate(mu, sigma)?;
    worst = worst.max(rel_err(&final_dev, &final_host, n as f64, sigma));
    ok &= worst <= T::TOL;
    let mean = data.iter().map(|v| v.to_f64()).sum::<f64>() / n as f64;
    let mle_sigma = (data.iter().map(|v| (v.to_f64() - mean).powi(2)).sum::<f64>() / n as f64).sqrt();
    println!(
        "after {iters} steps: mu = {mu:.6} (MLE {mean:.6}), sigma = {sigma:.6} (MLE {mle_sigma:.6}), \
         logp = {:.6e}, gradient at the previous step {:?}",
        final_dev[0],
        &last[1..]
    );
    println!(
        "worst relative difference from the host: {worst:.1e} (tolerance {:.0e})",
        T::TOL
    );
    let converged = (mu - mean).abs() <= 1e-6 * TRUE_SIGMA && (sigma - mle_sigma).abs() <= 1e-6 * TRUE_SIGMA;
    if iters >= 10 && !converged {
        println!("the ascent did not reach the maximum-likelihood estimate");
        ok = false;
    }
    println!(
        "{:.3} ms per evaluation (graph + launches + one read; {iters} in {elapsed:.3} s), \
         {:.2} kernels and {:.2} host waits per evaluation",
        elapsed * 1e3 / iters as f64,
        delta.kernels_launched as f64 / iters as f64,
        delta.host_waits as f64 / iters as f64
    );
    Ok(ok)
}

/// An element type the example runs in.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Dtype {
    F32,
    F64,
}

/// The log-likelihood of a normal model and its gradient on the device, driving Newton
/// steps to the maximum-likelihood estimate, checked against the host in f64.
#[derive(Parser)]
#[command(name = "gaussian_logp")]
struct Cli {
    /// Values in the data array, at least 2 [default: 10000000; 100000 with
    /// LAZYCL_EXAMPLE_SMALL=1]
    #[arg(long, value_name = "N")]
    n: Option<usize>,
    /// Evaluations, at least 1 [default: 50; 20 with LAZYCL_EXAMPLE_SMALL=1]
    #[arg(long, value_name = "I")]
    iters: Option<usize>,
    /// Run one element type only [default: both]
    #[arg(long)]
    dtype: Option<Dtype>,
}

fn main() -> lazycl::Result<ExitCode> {
    let cli = Cli::parse();
    let small = std::env::var("LAZYCL_EXAMPLE_SMALL").is_ok_and(|v| v == "1");
    let n = cli.n.unwrap_or(if small { 100_000 } else { 10_000_000 });
    let iters = cli.iters.unwrap_or(if small { 20 } else { 50 });
    if n < 2 || iters == 0 {
        Cli::command()
            .error(
                ErrorKind::ValueValidation,
                "n must be at least 2 and iters at least 1",
            )
            .exit();
    }
    let dtypes = match cli.dtype {
        Some(t) => vec![t],
        None => vec![Dtype::F32, Dtype::F64],
    };
    let ctx = Context::new()?;
    println!(
        "normal log-likelihood and gradient on {} ({})",
        ctx.device().name,
        ctx.device().platform_name
    );
    let mut ok = true;
    for &t in &dtypes {
        ok &= if t == Dtype::F64 {
            run::<f64>(&ctx, n, iters, small)?
        } else {
            run::<f32>(&ctx, n, iters, small)?
        };
    }
    println!("\n{}", ctx.stats());
    if ok {
        println!("gaussian_logp: OK");
        Ok(ExitCode::SUCCESS)
    } else {
        println!("gaussian_logp: check FAILED");
        Ok(ExitCode::FAILURE)
    }
}
