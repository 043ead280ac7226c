//! A bootstrap confidence interval for the mean of a skewed sample, against the normal
//! approximation, with random numbers, gathers, reductions, a sort and special functions
//! working together — and checked against the same computation on the host.
//!
//! ```text
//! x      = exp(0.75 z),  z ~ N(0, 1)          a log-normal sample              [n]
//! idx    ~ U{0 .. n}                          resampling indices (never stored) [b, n]
//! means  = mean(x[idx], axis 1)               one kernel: draw, gather, sum    [b]
//! ci     = sort(means)[2.5 %, 97.5 %]         the percentile interval
//! normal = mean(x) ± 1.96 std(x, ddof 1) / sqrt(n)
//! p      = erfc(z / sqrt 2) / 2               one-sided p-value of mean = mu0
//! ```
//!
//! The resampling indices are a lazy random node: the reduction that computes the
//! resampled means draws them where it reads them, so the `[b, n]` index array and the
//! `[b, n]` resamples never exist in memory. The host check draws the same indices again
//! (the same seed and stream give bit-identical values: `Rng::at`), reads them back, and
//! recomputes the first resamples' means in f64.
//!
//! ```text
//! cargo run --release --example bootstrap                     # n = 100000, b = 4000
//! cargo run --release --example bootstrap -- --n 20000 --b 10000
//! LAZYCL_EXAMPLE_SMALL=1 cargo run --example bootstrap        # small, quick
//! ```

use std::process::ExitCode;
use std::time::Instant;

use clap::error::ErrorKind;
use clap::{CommandFactory, Parser};
use lazycl::prelude::*;

/// A bootstrap confidence interval for the mean of a log-normal sample, against the
/// normal approximation, checked against the same computation on the host.
#[derive(Parser)]
#[command(name = "bootstrap")]
struct Cli {
    /// The sample's size, 2..2^32 [default: 100000; 3001 with LAZYCL_EXAMPLE_SMALL=1]
    #[arg(long, value_name = "N")]
    n: Option<usize>,
    /// The number of resamples, at least 40 [default: 4000; 400 with
    /// LAZYCL_EXAMPLE_SMALL=1]
    #[arg(long, value_name = "B")]
    b: Option<usize>,
    /// The random numbers' seed
    #[arg(long, value_name = "S", default_value_t = 2026)]
    seed: u64,
}

/// The sample's size, the number of resamples and the seed.
struct Args {
    n: usize,
    b: usize,
    seed: u64,
}

/// The arguments with their defaults filled in; a usage error exits with status 2.
fn parse_args() -> Args {
    let cli = Cli::parse();
    let small = std::env::var("LAZYCL_EXAMPLE_SMALL").is_ok_and(|v| v == "1");
    let a = Args {
        n: cli.n.unwrap_or(if small { 3001 } else { 100_000 }),
        b: cli.b.unwrap_or(if small { 400 } else { 4000 }),
        seed: cli.seed,
    };
    if a.n < 2 || a.b < 40 || a.n > u32::MAX as usize {
        Cli::command()
            .error(
                ErrorKind::ValueValidation,
                "n must be in 2..2^32 and b at least 40",
            )
            .exit();
    }
    a
}

/// The value at quantile `q` of sorted `v`, numpy's default ("linear") rule.
fn quantile(v: &[f64], q: f64) -> f64 {
    let pos = q * (v.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    v[lo] + (v[hi] - v[lo]) * (pos - lo as f64)
}

fn main() -> lazycl::Result<ExitCode> {
    let Args { n, b, seed } = parse_args();
    let ctx = Context::new()?;
    println!(
        "bootstrap of the mean: n = {n}, {b} resamples, on {} ({})",
        ctx.device().name,
        ctx.device().platform_name
    );
    let mut rng = ctx.rng(seed);

    // The sample: log-normal, kept (everything below reads it).
    let x = (rng.standard_normal::<f32>([n])? * 0.75f32).exp();
    x.eval()?;

    // The resampled means: draws, gather and row sums in one kernel (two where a row is
    // split across work-groups), reading x and writing b numbers.
    let stream = rng.offset();
    let idx = rng.integers::<u32>([b, n], 0, n as u32)?;
    let before = ctx.stats();
    let start = Instant::now();
    let means = x.take(0, &idx).mean_axis(1);
    means.eval()?;
    let queued = start.elapsed().as_secs_f64();
    let ran = ctx.stats() - before;
    let sorted = means.sort()?;
    let q = [0.025f64, 0.975];
    let positions: Vec<u32> = q.iter().map(|q| (q * (b - 1) as f64).round() as u32).collect();
    let ends = sorted.take(0, &ctx.from_slice(&positions)?).to_vec()?;
    let elapsed = start.elapsed().as_secs_f64();
    // Stored, the indices alone would take b n 4 bytes.
    let stored = (b * n * 4) as u64;
    println!(
        "resampled means: {} kernel(s), {} bytes allocated (the indices would take {stored}), {:.3} ms to plan, build (first run) and enqueue; with the sort and the interval's ends read: {:.2} ms",
        ran.kernels_launched,
        ran.bytes_allocated,
        queued * 1e3,
        elapsed * 1e3,
    );

    // The normal approximation and a one-sided p-value of "the mean is mu0", on the device.
    let mu0 = 1.32f32;
    let mean = x.mean();
    let se = x.std(1.0) / (n as f32).sqrt();
    let z = (&mean - mu0) / &se;
    let p = (&z * std::f32::consts::FRAC_1_SQRT_2).erfc() * 0.5f32;
    let (mean_d, se_d, p_d) = (mean.item()? as f64, se.item()? as f64, p.item()? as f64);
    println!(
        "mean {mean_d:.5}; bootstrap 95% interval [{:.5}, {:.5}]; normal approximation [{:.5}, {:.5}]",
        ends[0],
        ends[1],
        mean_d - 1.96 * se_d,
        mean_d + 1.96 * se_d
    );
    println!("p-value of \"the mean is {mu0}\" against \"greater\": {p_d:.4} (normal approximation)");

    // The host: the same sample and indices, in f64.
    let xh: Vec<f64> = x.to_vec()?.into_iter().map(f64::from).collect();
    let nh = n as f64;
    let mean_h = xh.iter().sum::<f64>() / nh;
    let var_h = xh.iter().map(|v| (v - mean_h) * (v - mean_h)).sum::<f64>() / (nh - 1.0);
    let se_h = (var_h / nh).sqrt();
    let p_h = 0.5 * libm::erfc((mean_h - f64::from(mu0)) / se_h / std::f64::consts::SQRT_2);
    // Every resample's mean where the indices fit in host memory, else the first ones.
    let rows = b.min((1 << 26) / n).max(1);
    let idx_h = Rng::at(&ctx, seed, stream)
        .integers::<u32>([b, n], 0, n as u32)?
        .slice(s![..rows as isize, ..])
        .to_vec()?;
    let means_h: Vec<f64> = idx_h
        .chunks(n)
        .map(|r| r.iter().map(|&i| xh[i as usize]).sum::<f64>() / nh)
        .collect();
    let means_d = means.to_vec()?;
    let worst_mean = means_h
        .iter()
        .zip(&means_d)
        .fold(0.0f64, |w, (h, d)| w.max((h - f64::from(*d)).abs() / h.abs()));
    let sorted_d: Vec<f64> = sorted.to_vec()?.into_iter().map(f64::from).collect();
    let mut sorted_h: Vec<f64> = means_d.iter().map(|&v| f64::from(v)).collect();
    sorted_h.sort_by(f64::total_cmp);
    let ends_h: Vec<f64> = positions.iter().map(|&i| sorted_h[i as usize]).collect();
    println!(
        "host (f64): {rows} resampled means within {worst_mean:.1e}; mean {mean_h:.5}; interval [{:.5}, {:.5}] by numpy's rule [{:.5}, {:.5}]; p {p_h:.3e}",
        ends_h[0],
        ends_h[1],
        quantile(&sorted_h, q[0]),
        quantile(&sorted_h, q[1])
    );

    let close = |a: f64, b: f64, tol: f64| (a - b).abs() <= tol * (1.0 + b.abs());
    let checks = [
        ("resampled means", worst_mean <= 1e-5),
        ("indices never stored", ran.bytes_allocated < stored),
        ("sort", sorted_d == sorted_h),
        (
            "interval",
            ends.iter().zip(&ends_h).all(|(d, h)| f64::from(*d) == *h),
        ),
        ("mean", close(mean_d, mean_h, 1e-5)),
        ("standard error", close(se_d, se_h, 1e-4)),
        ("p-value", (p_d - p_h).abs() <= 1e-4 + 1e-3 * p_h),
        // The interval holds the sample's mean, and the normal one is close to it.
        (
            "coverage",
            f64::from(ends[0]) < mean_h && mean_h < f64::from(ends[1]),
        ),
        (
            "normal approximation",
            (f64::from(ends[1] - ends[0]) - 3.92 * se_h).abs() <= 0.25 * 3.92 * se_h,
        ),
    ];
    let failed: Vec<&str> = checks.iter().filter(|c| !c.1).map(|c| c.0).collect();
    if failed.is_empty() {
        println!("bootstrap: OK");
        Ok(ExitCode::SUCCESS)
    } else {
        println!("bootstrap: differs from the host: {}", failed.join(", "));
        Ok(ExitCode::FAILURE)
    }
}
