//! The distributed checks `make test` runs under `mpirun -np 2 --oversubscribe` (feature
//! `mpi`): sums, means, extrema, column sums, `Xᵀ r`, a halo stencil and a gather over the
//! ranks, each against the same computation on the whole array in one process (rank 0,
//! a plain context). Exits non-zero on a mismatch, on every rank.
//!
//! `--expect-init-error`: `World::init` must fail on every rank (run with a rank whose
//! `LAZYCL_DEVICE` names no device); exits 0 when it did, 1 when it did not.
//!
//! ```text
//! cargo build --features mpi --example dist_check
//! mpirun -np 2 --oversubscribe target/debug/examples/dist_check
//! ```

use std::process::ExitCode;

use lazycl::dist::World;
use lazycl::prelude::*;

/// Row `i` of the test matrix (`d` columns): the same on every rank and in one process.
fn row(i: usize, d: usize) -> Vec<f32> {
    (0..d)
        .map(|j| {
            let mut z = (i as u64) << 20 | j as u64;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d049bb133111eb);
            ((z >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        })
        .collect()
}

fn main() -> ExitCode {
    if std::env::args().any(|a| a == "--expect-init-error") {
        return match World::init() {
            Err(e) => {
                println!("every rank got the error: {e}");
                ExitCode::SUCCESS
            }
            Ok(w) => {
                eprintln!(
                    "rank {}: World::init succeeded where a rank has no device",
                    w.rank()
                );
                ExitCode::FAILURE
            }
        };
    }
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("dist_check failed: {e}");
            ExitCode::FAILURE
        }
    }
}

/// `close` of every rank, agreed: a mismatch on one rank fails every rank (a rank that
/// gave up alone would leave the others waiting in the next collective).
fn agree(world: &World, what: &str, got: &[f32], want: &[f32], tol: f32) -> Result<()> {
    let mine = close(what, got, want, tol);
    let failed = world.allreduce_sum(&[u32::from(mine.is_err())])[0];
    match (mine, failed) {
        (Err(e), _) => Err(e),
        (Ok(()), 0) => Ok(()),
        (Ok(()), n) => Err(Error::InvalidShape(format!(
            "{what}: {n} other rank(s) found a mismatch"
        ))),
    }
}

fn close(what: &str, got: &[f32], want: &[f32], tol: f32) -> Result<()> {
    if got.len() != want.len() {
        return Err(Error::InvalidShape(format!(
            "{what}: {} values against {}",
            got.len(),
            want.len()
        )));
    }
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        if (g - w).abs() > tol * w.abs().max(1.0) {
            return Err(Error::InvalidShape(format!(
                "{what}: element {k}: {g} against {w}"
            )));
        }
    }
    Ok(())
}

fn run() -> Result<()> {
    let world = World::init()?;
    let (rank, size) = (world.rank(), world.size());
    let (n, d) = (1001, 7);
    // Uneven shares: rank r takes its rows in order.
    let share = |r: usize| n / size + usize::from(r < n % size);
    let first: usize = (0..rank).map(share).sum();
    let mine: Vec<f32> = (first..first + share(rank)).flat_map(|i| row(i, d)).collect();
    let ctx = world.ctx();
    let x = world.rows(ctx.from_shape_slice([share(rank), d], &mine)?)?;
    if x.offset() != first || x.shape() != [n, d] {
        return Err(Error::InvalidShape(format!(
            "rank {rank}: offset {} shape {:?}",
            x.offset(),
            x.shape()
        )));
    }
    let r = x.map(|a| (a.sum_axis(1) * 0.5).tanh())?;

    // Every rank computes the whole once, in one process, for reference.
    let all: Vec<f32> = (0..n).flat_map(|i| row(i, d)).collect();
    let whole = ctx.from_shape_slice([n, d], &all)?;
    let whole_r = (whole.sum_axis(1) * 0.5).tanh();

    agree(&world, "sum", &[x.sum()?], &[whole.sum().item()?], 1e-4)?;
    let sq = x.map(|a| a * a)?;
    agree(
        &world,
        "sum of squares",
        &[sq.sum()?],
        &[(&whole * &whole).sum().item()?],
        1e-4,
    )?;
    agree(&world, "amax", &[x.amax()?], &[whole.amax().item()?], 0.0)?;
    agree(&world, "amin", &[x.amin()?], &[whole.amin().item()?], 0.0)?;
    agree(
        &world,
        "mean (sum / count)",
        &[x.sum()? / (n * d) as f32],
        &[whole.mean().item()?],
        1e-4,
    )?;
    agree(
        &world,
        "sum_axis0",
        &x.sum_axis0()?.to_vec()?,
        &whole.sum_axis(0).to_vec()?,
        1e-4,
    )?;
    agree(
        &world,
        "X^T r",
        &x.t_matmul(&r)?.to_vec()?,
        &whole.t().matmul(&whole_r).to_vec()?,
        1e-4,
    )?;

    // A 3-point stencil along the rows, each rank its own rows of the interior.
    let halo = x.halo(1, 1)?;
    let ext = &halo.rows;
    let m = ext.shape()[0];
    let local = &ext.slice(s![2..m, ..]) - 2.0 * &ext.slice(s![1..m - 1, ..]) + &ext.slice(s![..m - 2, ..]);
    let got = local.to_vec()?;
    let lo = first + 1 - halo.before; // the global row of local's first row, plus one
    let want_all =
        &whole.slice(s![2.., ..]) - 2.0 * &whole.slice(s![1..n - 1, ..]) + &whole.slice(s![..n - 2, ..]);
    let want_rows = want_all.slice(s![lo - 1..lo - 1 + got.len() / d, ..]).to_vec()?;
    agree(&world, "halo stencil", &got, &want_rows, 1e-5)?;

    let gathered = x.map(|a| a * 2.0)?.to_ndarray()?;
    let doubled = (&whole * 2.0).to_vec()?;
    let (got, want): (Vec<f32>, &[f32]) = match (rank, gathered) {
        (0, Some(g)) => (g.iter().copied().collect(), &doubled),
        (0, None) => (Vec::new(), &doubled),
        (_, Some(g)) => (g.iter().copied().collect(), &[]),
        (_, None) => (Vec::new(), &[]),
    };
    agree(
        &world,
        "gather (all on rank 0, nothing elsewhere)",
        &got,
        want,
        0.0,
    )?;
    world.barrier();
    println!(
        "rank {rank} of {size}: sums, means, extrema, column sums, X^T r, halo stencil and gather match"
    );
    Ok(())
}
