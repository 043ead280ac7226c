//! `--nodes`: the host's cost per recorded graph node of a long elementwise chain,
//! recording and flushing apart.

use std::time::Instant;

use lazycl::{Array, Dispatch};

use super::host::dispatch_context;
use super::raw::R;
use super::{lz, median, Report};

/// The target for the host's cost of one recorded node, µs.
const TARGET_US_PER_NODE: f64 = 1.0;

/// `--nodes`: the host's cost per graph node. For each N, an N-node elementwise chain
/// (`y = y * 1.0001 + 0.5`, two operations a link, each a node with its scalar stored
/// inline and passed as a kernel argument) from 16 elements is recorded, then flushed with `eval()`; the same N runs
/// once before, so that every program is cached and the figures are the host's recording
/// and planning. Each trial is timed in two parts (record, flush) and finished outside
/// the timing; medians over the trials, on a context that flushes inline
/// (`Dispatch::Inline`). The baseline is the target, 1 µs a node:
/// the ratio reads as the fraction of it.
pub fn nodes(rep: &mut Report, quick: bool, trials: usize) -> R<()> {
    // Flushed by the caller, so that "flush" times the flush (not a hand-over).
    let ctx = &dispatch_context(Dispatch::Inline)?;
    let most = if quick { 10_000 } else { 100_000 };
    let x = lz(ctx.from_slice(&[0.5f32; 16]))?;
    let record = |n: usize| -> Array<f32> {
        let mut y = x.clone();
        for _ in 0..n / 2 {
            y = &y * 1.0001f32 + 0.5f32;
        }
        y
    };
    let mut n = 10;
    while n <= most {
        // The first flush of this length plans it (and loads or builds its few programs):
        // planning must stay linear in the graph.
        let y = record(n);
        let s0 = ctx.stats();
        let t = Instant::now();
        lz(y.eval().map(drop))?;
        let first = t.elapsed().as_secs_f64();
        let d = ctx.stats() - s0;
        drop(y);
        lz(ctx.synchronize())?;
        let (mut rec, mut flush, mut kernels, mut built) = (vec![], vec![], 0, 0);
        for _ in 0..trials.max(9) {
            let t = Instant::now();
            let y = record(n);
            let t_rec = t.elapsed().as_secs_f64();
            let s0 = ctx.stats();
            let t = Instant::now();
            lz(y.eval().map(drop))?;
            flush.push(t.elapsed().as_secs_f64());
            rec.push(t_rec);
            let d = ctx.stats() - s0;
            (kernels, built) = (d.kernels_launched, built + d.programs_built);
            drop(y);
            lz(ctx.synchronize())?;
        }
        if built != 0 {
            eprintln!("  (the {n}-op chain built {built} programs after its warm-up)");
        }
        let total: Vec<f64> = rec.iter().zip(&flush).map(|(a, b)| a + b).collect();
        let per_node = |v: Vec<f64>| median(v) * 1e6 / n as f64;
        let plural = if kernels == 1 { "" } else { "s" };
        let what = format!("{n}-op chain, n=16, {kernels} kernel{plural} a flush");
        let target = "target: 1 µs a node";
        rep.add(
            format!("host µs a node, record, {what}"),
            per_node(rec),
            TARGET_US_PER_NODE,
            "µs",
            target,
        );
        rep.add(
            format!("host µs a node, flush, {what}"),
            per_node(flush),
            TARGET_US_PER_NODE,
            "µs",
            target,
        );
        let cached = per_node(total);
        rep.add(
            format!("host µs a node, record + flush, {what}"),
            cached,
            TARGET_US_PER_NODE,
            "µs",
            target,
        );
        rep.add(
            format!(
                "host µs a node, first flush (planned; {} programs built, {} loaded), {what}",
                d.programs_built, d.programs_loaded
            ),
            first * 1e6 / n as f64,
            cached,
            "µs",
            "the same chain recorded + flushed again (replayed)",
        );
        n *= 10;
    }
    Ok(())
}
