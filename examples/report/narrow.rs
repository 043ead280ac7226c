//! The report's rows for the 16-bit floats: the fused 8-op chain over `bf16` and `f16`
//! against a raw copy of the same bytes and against the same chain over `f32` (elements
//! per second), a full `bf16` sum, softmax over 16-bit rows, and 16-bit GEMM with `f32`
//! accumulation against lazycl's own SGEMM. torch's and JAX's figures come from
//! `benches/reference/narrow_reference.py --json` (the file named by
//! `LAZYCL_NARROW_REFERENCE`; absent without it), measured in the same call.

use lazycl::{bf16, f16, Array, Context, Float};
use opencl3::memory::ClMem;

use crate::raw::{self, Raw, R};
use crate::reference::Reference;
use crate::{chain8, lz, per_run, Report};

/// The chain of `chain8` over any float type, its constants rounded to it.
fn chain8_of<T: Float>(x: &Array<T>, c: fn(f32) -> T) -> Array<T> {
    ((((((x * c(1.5) + c(2.0)) * x - c(0.25)).abs() + c(1.0)).sqrt() * c(3.0)) / c(7.0)) - x).tanh()
}

/// The best GB/s of a raw copy (one and four floats a work-item) of `bytes` bytes.
fn raw_copy(raw: &Raw, ctx: &Context, bytes: usize, trials: usize, reps: usize) -> R<f64> {
    let n = bytes / 4;
    let a = raw.buffer_f32(&vec![1.0; n])?;
    let b = raw.buffer_f32(&vec![0.0; n])?;
    let cu = ctx.device().compute_units as usize;
    let mut best = 0.0f64;
    for (src, name, items, per) in [(raw::COPY1, "copy1", n, 1usize), (raw::COPY4, "copy4", n / 4, 4)] {
        let k = raw.kernel(src, name)?;
        raw.set_mem(&k, 0, a.get())?;
        raw.set_mem(&k, 1, b.get())?;
        raw.set(&k, 2, &(items as u32))?;
        let global = match per {
            1 => items.div_ceil(256) * 256,
            _ => items.min(cu * 2048).div_ceil(256) * 256,
        };
        let t = per_run(
            trials,
            reps,
            || raw.enqueue_no_event(&k, global, Some(256)),
            || raw.finish(),
        )?;
        best = best.max(2.0 * (n * 4) as f64 / t / 1e9);
    }
    Ok(best)
}

/// Adds the 16-bit float rows.
pub fn rows(rep: &mut Report, ctx: &Context, raw: &Raw, quick: bool, trials: usize) -> R<()> {
    let refs = Reference::load("LAZYCL_NARROW_REFERENCE")?;
    let sync = || lz(ctx.synchronize());
    let log2 = if quick { 20 } else { 28 };
    let n = 1usize << log2;
    let reps = if quick { 10 } else { 5 };
    let host: Vec<f32> = (0..n).map(|i| ((i * 7919) % 1000) as f32 / 1000.0).collect();
    let copy = raw_copy(raw, ctx, 2 * n, trials, reps)?;
    let x32 = lz(ctx.from_slice(&host))?;
    let t32 = per_run(trials, reps, || lz(chain8(&x32).eval().map(drop)), sync)?;
    let xb = lz(ctx.from_slice(&host).map(|a| a.cast::<bf16>()))?;
    lz(xb.eval().map(drop))?;
    let xh = lz(ctx.from_slice(&host).map(|a| a.cast::<f16>()))?;
    lz(xh.eval().map(drop))?;
    let tb = per_run(
        trials,
        reps,
        || lz(chain8_of(&xb, bf16::from_f32).eval().map(drop)),
        sync,
    )?;
    let th = per_run(
        trials,
        reps,
        || lz(chain8_of(&xh, f16::from_f32).eval().map(drop)),
        sync,
    )?;
    let bytes = 4.0 * n as f64;
    for (short, t) in [("bf16", tb), ("f16", th)] {
        rep.add(
            format!("fused 8-op chain {short}, n=2^{log2}"),
            bytes / t / 1e9,
            copy,
            "GB/s",
            "raw copy of the same bytes",
        );
        rep.add(
            format!("fused 8-op chain {short} vs f32, n=2^{log2}"),
            n as f64 / t / 1e9,
            n as f64 / t32 / 1e9,
            "Gelem/s",
            "lazycl's chain over f32",
        );
        rep.add(
            format!("fused 8-op chain {short} vs JAX, n=2^{log2}"),
            bytes / t / 1e9,
            refs.get(&format!("jax chain8 {short} 2^28"), "gbps"),
            "GB/s",
            "JAX jit (same call)",
        );
    }
    let ts = per_run(trials, reps, || lz(xb.sum().eval().map(drop)), sync)?;
    rep.add(
        format!("sum bf16 2^{log2}"),
        2.0 * n as f64 / ts / 1e9,
        refs.get("torch sum bf16 2^28", "gbps"),
        "GB/s",
        "torch.sum (same call)",
    );
    softmax_rows(rep, ctx, &refs, quick, trials)?;
    gemm_rows(rep, ctx, &refs, quick, trials)
}

/// Softmax over 16-bit rows against torch's over the same type.
fn softmax_rows(rep: &mut Report, ctx: &Context, refs: &Reference, quick: bool, trials: usize) -> R<()> {
    let shapes: &[(usize, usize)] = if quick {
        &[(4096, 1024)]
    } else {
        &[(65536, 1024), (4096, 32768)]
    };
    let sync = || lz(ctx.synchronize());
    for &(n, d) in shapes {
        let v: Vec<f32> = (0..n * d)
            .map(|i| ((i * 7919) % 2001) as f32 / 100.0 - 10.0)
            .collect();
        let x = lz(ctx.from_shape_slice([n, d], &v))?;
        let (xb, xh) = (x.cast::<bf16>(), x.cast::<f16>());
        lz(xb.eval().map(drop))?;
        lz(xh.eval().map(drop))?;
        let tb = per_run(trials, 10, || lz(xb.softmax(1).eval().map(drop)), sync)?;
        let th = per_run(trials, 10, || lz(xh.softmax(1).eval().map(drop)), sync)?;
        for (short, t) in [("bf16", tb), ("f16", th)] {
            rep.add(
                format!("softmax {short} {n}x{d}"),
                4.0 * (n * d) as f64 / t / 1e9,
                refs.get(&format!("torch softmax {short} {n}x{d}"), "gbps"),
                "GB/s",
                "torch.softmax (same call)",
            );
        }
    }
    Ok(())
}

/// 16-bit GEMM with `f32` accumulation against lazycl's SGEMM and torch's.
fn gemm_rows(rep: &mut Report, ctx: &Context, refs: &Reference, quick: bool, trials: usize) -> R<()> {
    let n = if quick { 512 } else { 4096 };
    let sync = || lz(ctx.synchronize());
    let v: Vec<f32> = (0..n * n)
        .map(|i| ((i * 7919) % 2001) as f32 / 1000.0 - 1.0)
        .collect();
    let a = lz(ctx.from_shape_slice([n, n], &v))?;
    let b = a.t().to_contiguous();
    lz(b.eval().map(drop))?;
    let flops = 2.0 * (n as f64).powi(3);
    let t32 = per_run(trials, 10, || lz(a.matmul(&b).eval().map(drop)), sync)?;
    let (ab, bb) = (a.cast::<bf16>(), b.cast::<bf16>());
    let (ah, bh) = (a.cast::<f16>(), b.cast::<f16>());
    for arr in [&ab, &bb] {
        lz(arr.eval().map(drop))?;
    }
    for arr in [&ah, &bh] {
        lz(arr.eval().map(drop))?;
    }
    let tb = per_run(trials, 10, || lz(ab.matmul(&bb).eval().map(drop)), sync)?;
    let th = per_run(trials, 10, || lz(ah.matmul(&bh).eval().map(drop)), sync)?;
    for (short, t) in [("bf16", tb), ("f16", th)] {
        rep.add(
            format!("GEMM {short} {n}^3 (f32 accumulation)"),
            flops / t / 1e12,
            flops / t32 / 1e12,
            "TFLOP/s",
            "lazycl's SGEMM",
        );
        rep.add(
            format!("GEMM {short} {n}^3 vs cuBLAS"),
            flops / t / 1e12,
            refs.get(&format!("torch gemm {short} {n}^3"), "tflops"),
            "TFLOP/s",
            "cuBLAS (torch, tensor cores)",
        );
    }
    Ok(())
}
