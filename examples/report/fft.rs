//! The report's rows for Fourier transforms (`--fft`): batched 1-D `c32` transforms of
//! lengths 256 to 2^20 (radix-friendly, and lengths of 5s and of a prime), a 2-D 4096² one,
//! a windowed power spectrum and a convolution by transforms, each against a copy of the
//! same array in the same run (the memory's ceiling: a transform reads and writes its data
//! once per pass). torch.fft's (cuFFT's) figures for the same definitions come from
//! `benches/reference/fft_reference.py` in the same call.

use lazycl::prelude::*;

use crate::raw::R;
use crate::{lz, per_run, Report};

/// Elements of every transform's data: 2^24 `c32` (128 MiB), 2^18 with `--quick`.
fn total(quick: bool) -> usize {
    if quick {
        1 << 18
    } else {
        1 << 24
    }
}

/// Deterministic values in [-1, 1).
fn values(n: usize, seed: usize) -> Vec<f32> {
    (0..n)
        .map(|i| ((i * 7919 + seed * 104_729) % 2000) as f32 / 1000.0 - 1.0)
        .collect()
}

fn complex_data(ctx: &Context, shape: &[usize]) -> R<Array<c32>> {
    let n: usize = shape.iter().product();
    let (re, im) = (values(n, 1), values(n, 2));
    let re = lz(ctx.from_shape_slice(shape, &re))?;
    let im = lz(ctx.from_shape_slice(shape, &im))?;
    let z = re.complex(&im);
    lz(z.eval())?;
    Ok(z)
}

/// Milliseconds per call of `f`, which records and evaluates one result.
fn ms(ctx: &Context, trials: usize, reps: usize, mut f: impl FnMut() -> R<()>) -> R<f64> {
    Ok(per_run(trials, reps, &mut f, || lz(ctx.synchronize()))? * 1e3)
}

pub(crate) fn rows(rep: &mut Report, ctx: &Context, quick: bool, trials: usize) -> R<()> {
    let reps = if quick { 2 } else { 10 };
    let copy = "a copy of the same array (same run)";
    let total = total(quick);
    let mut lengths = vec![256usize, 1024, 4096, 16384, 1 << 16, 1 << 20, 1000, 1009];
    if quick {
        lengths.retain(|&n| n <= 4096);
    }
    for n in lengths {
        let batch = (total / n).max(1);
        let x = complex_data(ctx, &[batch, n])?;
        let t = ms(ctx, trials, reps, || lz(x.fft(1).eval().map(drop)))?;
        let c = ms(ctx, trials, reps, || lz(x.to_contiguous().eval().map(drop)))?;
        rep.add(format!("fft c32 n={n} x {batch}"), t, c, "ms", copy);
    }
    let side = if quick { 512 } else { 4096 };
    let x = complex_data(ctx, &[side, side])?;
    let t = ms(ctx, trials, reps, || lz(x.fft2().eval().map(drop)))?;
    let c = ms(ctx, trials, reps, || lz(x.to_contiguous().eval().map(drop)))?;
    rep.add(format!("fft2 c32 {side}x{side}"), t, c, "ms", copy);

    // A windowed power spectrum of real rows: the window and the conversion in the first
    // pass's loads, the magnitude in the last pass's stores.
    let n = 4096;
    let batch = total / n;
    let x = lz(ctx.from_shape_slice([batch, n], &values(batch * n, 3)))?;
    let window: Vec<f32> = (0..n)
        .map(|k| 0.5 - 0.5 * (2.0 * std::f32::consts::PI * k as f32 / n as f32).cos())
        .collect();
    let w = lz(ctx.from_slice(&window))?;
    let t = ms(ctx, trials, reps, || {
        lz((&x * &w).cast::<c32>().fft(1).norm_sqr().eval().map(drop))
    })?;
    let c = ms(ctx, trials, reps, || lz(x.to_contiguous().eval().map(drop)))?;
    rep.add(
        format!("power spectrum |fft(x w)|^2 f32 n={n} x {batch}"),
        t,
        c,
        "ms",
        copy,
    );

    // The same from the real transform's half: one pass of half the points.
    let t = ms(ctx, trials, reps, || {
        lz((&x * &w).rfft(1).norm_sqr().eval().map(drop))
    })?;
    rep.add(
        format!("power spectrum |rfft(x w)|^2 f32 n={n} x {batch}"),
        t,
        c,
        "ms",
        copy,
    );

    // A circular convolution of real rows by their transforms.
    let y = lz(ctx.from_shape_slice([batch, n], &values(batch * n, 4)))?;
    let t = ms(ctx, trials, reps, || {
        lz((x.rfft(1) * y.rfft(1)).irfft(1, n).eval().map(drop))
    })?;
    rep.add(
        format!("convolution irfft(rfft(a) rfft(b)) f32 n={n} x {batch}"),
        t,
        c,
        "ms",
        copy,
    );
    Ok(())
}
