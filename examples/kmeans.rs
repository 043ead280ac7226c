//! Lloyd's k-means on the device, checked against the same algorithm on the host.
//!
//! One iteration, all lazy, nothing read to the host:
//!
//! ```text
//! dist[n, k]  = sum_d (x[n, 1, d] - c[1, k, d])^2      one fused reduction (the [n, k, d]
//!                                                        differences are never stored);
//!               or, for longer points, |c|^2 - 2 x c^T  one matrix product, |c|^2 added
//!                                                        in its store (`--assign gemm`)
//! label[n]    = argmin_k dist                           one arg reduction
//! sums[k, d]  = sum_n (label[n] == k ? x[n, d] : 0)     one reduction over a one-hot
//! count[k, 1] = sum_n (label[n] == k)                   mask each (never stored)
//! c[k, d]     = count > 0 ? sums / count : c            one elementwise kernel (assign)
//! ```
//!
//! Split into segments, `count` takes a combine pass; `sums` does not: the centroid
//! update is the first kernel that reads it, over exactly its elements, so it combines the
//! partials itself. On the H200 that is six kernels per step.
//!
//! The centroid update takes the faster of two forms for the device (`Update::for_device`,
//! measured): on a GPU the one-hot reductions, which read `x` once per centroid
//! coordinate from cache, contend on nothing and give the same result on every run; on
//! a CPU `lazycl::scatter_add` of the points into their centroids' rows and `bincount`
//! of the labels (each work-group adds into a private copy of the `k * d` sums, then
//! flushes it atomically). `--update onehot|scatter` picks one (`report --arrays`
//! compares them).
//!
//! Data: `k` Gaussian blobs (splitmix64 + Box-Muller, reproduced by
//! `benches/reference/torch_reference.py`); the first `k` points are the initial centroids.
//!
//! ```text
//! cargo run --release --example kmeans                       # 1,000,000 x 16, k = 16, 20 iterations
//! cargo run --release --example kmeans -- --n 4000000 --d 16 --k 16 --iters 20
//! cargo run --release --example kmeans -- --update scatter    # centroids by scatter_add + bincount
//! LAZYCL_EXAMPLE_SMALL=1 cargo run --example kmeans           # small, quick
//! ```

use std::process::ExitCode;
use std::time::Instant;

use clap::error::ErrorKind;
use clap::{CommandFactory, Parser, ValueEnum};
use lazycl::prelude::*;
use lazycl::Stats;
use ndarray::Array2;

// The data and the model's step, shared with the report.
#[path = "common/kmeans.rs"]
mod kmeans;
#[path = "common/synthetic.rs"]
mod synthetic;
use kmeans::{make_blobs, Assign, KMeans, Update};

/// The same algorithm on the host, in f64 (plain loops: `make test` runs it unoptimized):
/// the final centroids and the nearest of them to each point.
fn host_kmeans(x: &[f32], n: usize, d: usize, k: usize, iters: usize) -> (Array2<f64>, Vec<usize>) {
    let x: Vec<f64> = x.iter().map(|&v| v as f64).collect();
    let mut c: Vec<f64> = x[..k * d].to_vec();
    let mut labels = vec![0usize; n];
    for _ in 0..iters {
        for (i, label) in labels.iter_mut().enumerate() {
            let row = &x[i * d..(i + 1) * d];
            let mut best = (f64::INFINITY, 0);
            for j in 0..k {
                let cj = &c[j * d..(j + 1) * d];
                let mut dist = 0.0;
                for t in 0..d {
                    let diff = row[t] - cj[t];
                    dist += diff * diff;
                }
                if dist < best.0 {
                    best = (dist, j);
                }
            }
            *label = best.1;
        }
        let mut sums = vec![0.0f64; k * d];
        let mut counts = vec![0usize; k];
        for (i, &l) in labels.iter().enumerate() {
            for t in 0..d {
                sums[l * d + t] += x[i * d + t];
            }
            counts[l] += 1;
        }
        for j in 0..k {
            if counts[j] > 0 {
                for t in 0..d {
                    c[j * d + t] = sums[j * d + t] / counts[j] as f64;
                }
            }
        }
    }
    let labels = (0..n)
        .map(|i| {
            let dist = |j: usize| -> f64 { (0..d).map(|t| (x[i * d + t] - c[j * d + t]).powi(2)).sum() };
            (1..k).fold(0, |best, j| if dist(j) < dist(best) { j } else { best })
        })
        .collect();
    let c = Array2::from_shape_vec((k, d), c).expect("k x d");
    (c, labels)
}

/// How points are assigned to centroids, as asked on the command line.
#[derive(Clone, Copy, ValueEnum)]
enum AssignArg {
    /// The faster lazy form for the shape (`Assign::for_points`)
    Auto,
    /// Broadcast differences, one fused reduction, then an argmin
    Broadcast,
    /// One matrix product (`|c|^2 - 2 x c^T`), then an argmin
    Gemm,
    /// A `#[kernel]`
    Kernel,
}

/// How the centroids are updated, as asked on the command line.
#[derive(Clone, Copy, ValueEnum)]
enum UpdateArg {
    /// Reductions over a one-hot mask of the labels
    #[value(name = "onehot")]
    OneHot,
    /// `scatter_add` of the points and `bincount` of the labels
    Scatter,
}

/// Lloyd's k-means on the device, checked against the same algorithm on the host.
#[derive(Parser)]
#[command(name = "kmeans")]
struct Cli {
    /// Points [default: 1000000; 10000 with LAZYCL_EXAMPLE_SMALL=1]
    #[arg(long, value_name = "N")]
    n: Option<usize>,
    /// Coordinates per point
    #[arg(long, value_name = "D", default_value_t = 16)]
    d: usize,
    /// Centroids (the first k points start as them)
    #[arg(long, value_name = "K", default_value_t = 16)]
    k: usize,
    /// Iterations [default: 20; 8 with LAZYCL_EXAMPLE_SMALL=1]
    #[arg(long, value_name = "I")]
    iters: Option<usize>,
    /// How points are assigned to centroids
    #[arg(long, value_enum, default_value_t = AssignArg::Auto)]
    assign: AssignArg,
    /// How the centroids are updated [default: the faster for the device, onehot on GPUs,
    /// scatter elsewhere]
    #[arg(long, value_enum)]
    update: Option<UpdateArg>,
}

struct Args {
    n: usize,
    d: usize,
    k: usize,
    iters: usize,
    small: bool,
    /// `None`: the faster lazy form for the shape (`Assign::for_points`).
    assign: Option<Assign>,
    /// `None`: the faster update for the device (`Update::for_device`).
    update: Option<Update>,
}

/// The arguments with their defaults filled in; a usage error exits with status 2.
fn parse_args() -> Args {
    let cli = Cli::parse();
    let small = std::env::var("LAZYCL_EXAMPLE_SMALL").is_ok_and(|v| v == "1");
    let a = Args {
        n: cli.n.unwrap_or(if small { 10_000 } else { 1_000_000 }),
        d: cli.d,
        k: cli.k,
        iters: cli.iters.unwrap_or(if small { 8 } else { 20 }),
        small,
        assign: match cli.assign {
            AssignArg::Auto => None,
            AssignArg::Broadcast => Some(Assign::Broadcast),
            AssignArg::Gemm => Some(Assign::Gemm),
            AssignArg::Kernel => Some(Assign::Kernel),
        },
        update: cli.update.map(|u| match u {
            UpdateArg::OneHot => Update::OneHot,
            UpdateArg::Scatter => Update::Scatter,
        }),
    };
    if a.k == 0 || a.d == 0 || a.iters == 0 || a.n < a.k {
        Cli::command()
            .error(
                ErrorKind::ValueValidation,
                "need k >= 1, d >= 1, iters >= 1 and n >= k",
            )
            .exit();
    }
    a
}

fn main() -> lazycl::Result<ExitCode> {
    let args = parse_args();
    let Args {
        n,
        d,
        k,
        iters,
        small,
        assign,
        update,
    } = args;
    let assign = assign.unwrap_or(Assign::for_points(d));
    let ctx = Context::new()?;
    let gpu = ctx.device().device_type == lazycl::DeviceType::Gpu;
    let update = update.unwrap_or(Update::for_device(gpu));
    println!(
        "k-means (Lloyd) of {n} x {d} f32 points, k = {k}, {iters} iterations, assignment by {}, update by {update:?}, on {} ({})",
        match assign {
            Assign::Kernel => "a #[kernel]",
            Assign::Gemm => "one matrix product + argmin",
            Assign::Broadcast => "broadcast distances + argmin",
        },
        ctx.device().name,
        ctx.device().platform_name
    );
    let t0 = Instant::now();
    let xh = make_blobs(n, d, k);
    let mut km = KMeans::new(&ctx, &xh, n, d, k, assign)?;
    km.update = update;
    let init = km.c.clone();
    println!(
        "data generated and uploaded in {:.2} s",
        t0.elapsed().as_secs_f64()
    );

    // Check (and warm-up): all iterations at the small size, the first few at the large one.
    let check_iters = if small { iters } else { iters.min(5) };
    for _ in 0..check_iters {
        km.step()?;
    }
    let c_dev = km.c.to_ndarray_dim::<ndarray::Ix2>()?;
    let labels_dev = km.labels().to_vec()?;
    let t1 = Instant::now();
    let (c_ref, labels_ref) = host_kmeans(&xh, n, d, k, check_iters);
    let mismatched = labels_dev
        .iter()
        .zip(&labels_ref)
        .filter(|(a, b)| **a as usize != **b)
        .count();
    let scale = c_ref.iter().fold(1e-12f64, |a, v| a.max(v.abs()));
    let err = c_dev
        .iter()
        .zip(c_ref.iter())
        .fold(0.0f64, |a, (g, r)| a.max((*g as f64 - r).abs()))
        / scale;
    println!(
        "host check after {check_iters} iterations ({:.2} s on the host): {mismatched} of {n} labels differ, \
         max |c - c_ref| / max |c_ref| = {err:.2e}",
        t1.elapsed().as_secs_f64()
    );
    // f32 distances against f64 ones may put a point lying on a boundary in the other
    // cluster; allow one in ten thousand. The product form loses more near boundaries
    // (|c|^2 - 2 x.c cancels terms of the size of |x|^2, as in torch's and JAX's k-means):
    // one in a thousand, and each such point moves its centroids by about 1/size.
    let (per_point, per_centroid) = match assign {
        Assign::Gemm => (1_000, 1e-3),
        _ => (10_000, 1e-4),
    };
    let ok = mismatched * per_point <= n && err <= per_centroid;

    // Warm-up of the inertia, so that every program the timed run uses is built (or
    // loaded) before the clock starts.
    km.distances().amin_axis(1).sum().item()?;

    // Timed run from the same initial centroids: nothing is read until the end.
    km.c = init;
    ctx.synchronize()?;
    let before = ctx.stats();
    let start = Instant::now();
    let mut step_kernels = 0;
    // Host time spent recording and enqueueing the steps (nothing in a step waits).
    let mut host = 0.0f64;
    for it in 0..iters {
        let s0 = ctx.stats();
        let h0 = Instant::now();
        km.step()?;
        host += h0.elapsed().as_secs_f64();
        if it == 1 {
            step_kernels = (ctx.stats() - s0).kernels_launched;
        }
    }
    // Inertia (sum of squared distances to the nearest centroid) and the centroids, read
    // once at the end.
    let inertia = km.distances().amin_axis(1).sum();
    let inertia = inertia.item()?;
    let elapsed = start.elapsed().as_secs_f64();
    let delta: Stats = ctx.stats() - before;
    let c_final = km.c.to_ndarray_dim::<ndarray::Ix2>()?;
    let per_iter_ms = elapsed * 1e3 / iters as f64;
    println!(
        "inertia {inertia:.4e} (mean squared distance {:.4})",
        inertia as f64 / n as f64
    );
    println!("centroid 0: {:?}", c_final.row(0).to_vec());
    println!(
        "{per_iter_ms:.3} ms per iteration ({:.3} ms of it the host's, enqueueing), ({iters} iterations + the inertia in {elapsed:.3} s), \
         {:.2} kernels per iteration with the inertia ({step_kernels} in a step); {} host waits, \
         {} buffers allocated, {} copies in all",
        host * 1e3 / iters as f64,
        delta.kernels_launched as f64 / iters as f64,
        delta.host_waits,
        delta.buffers_allocated,
        delta.transfers_enqueued
    );
    println!("\n{}", ctx.stats());
    if ok {
        println!("kmeans: OK");
        Ok(ExitCode::SUCCESS)
    } else {
        println!("kmeans: check FAILED");
        Ok(ExitCode::FAILURE)
    }
}
