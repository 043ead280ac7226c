//! The report's rows for views: a stencil of slices, a sum with a transpose
//! and a concatenation, each against the raw copy bandwidth measured in the same run.
// `s![1..-1]` counts from the end of the axis (ndarray's slices), not an empty range.
#![allow(clippy::reversed_empty_ranges)]

use lazycl::{s, Array, Axis, Context};

use crate::raw::R;
use crate::{lz, per_run, Report};

/// Adds the view rows: `copy` is the best raw copy bandwidth (GB/s) of this run.
pub fn rows(
    rep: &mut Report,
    ctx: &Context,
    host: &[f32],
    copy: f64,
    quick: bool,
    trials: usize,
    reps: usize,
) -> R<()> {
    let sync = || lz(ctx.synchronize());
    let n = host.len();
    let x = lz(ctx.from_slice(host))?;
    // A 3-point stencil of three shifted slices: one kernel reading `x` in place.
    let stencil = |x: &Array<f32>| &x.slice(s![2..]) - 2.0 * &x.slice(s![1..-1]) + &x.slice(s![..-2]);
    let t = per_run(trials, reps, || lz(stencil(&x).eval().map(|_| ())), sync)?;
    rep.add(
        format!("stencil of slices f32, n=2^{}", n.trailing_zeros()),
        8.0 * (n - 2) as f64 / t / 1e9,
        copy,
        "GB/s",
        "raw copy (best of 1/4 per item)",
    );
    // A matrix plus the transpose of another: two reads, one write.
    let side = if quick { 1024 } else { 16384 };
    let a = lz(ctx.from_shape_slice([side, side], &host[..side * side]))?;
    let b = lz(ctx.from_shape_slice([side, side], &host[n - side * side..]))?;
    // The same traffic without the transpose: what three streams reach on this device.
    let t = per_run(
        trials,
        reps.div_ceil(2),
        || lz((&a + &b).eval().map(|_| ())),
        sync,
    )?;
    rep.add(
        format!("a + b f32, {side}x{side} (no transpose, for scale)"),
        12.0 * (side * side) as f64 / t / 1e9,
        copy,
        "GB/s",
        "raw copy (best of 1/4 per item)",
    );
    let t = per_run(
        trials,
        reps.div_ceil(2),
        || lz((&a + &b.t()).eval().map(|_| ())),
        sync,
    )?;
    rep.add(
        format!("a + b.t() f32, {side}x{side}"),
        12.0 * (side * side) as f64 / t / 1e9,
        copy,
        "GB/s",
        "raw copy (best of 1/4 per item)",
    );
    // Four quarters joined: each element read once, written once.
    let q = n / 4;
    let parts: Vec<Array<f32>> = (0..4)
        .map(|k| x.slice(s![k * q..(k + 1) * q]).to_contiguous())
        .collect();
    lz(lazycl::eval(&parts))?;
    let refs: Vec<&Array<f32>> = parts.iter().collect();
    let t = per_run(
        trials,
        reps,
        || lz(lz(lazycl::concatenate(Axis(0), &refs))?.eval().map(|_| ())),
        sync,
    )?;
    rep.add(
        format!("concatenate of four f32 arrays, n=2^{}", n.trailing_zeros()),
        8.0 * (4 * q) as f64 / t / 1e9,
        copy,
        "GB/s",
        "raw copy (best of 1/4 per item)",
    );
    Ok(())
}
