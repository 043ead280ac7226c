//! Bandwidth rows: the fused 8-op chain, the same chain op by op, and reductions (full
//! sums, rows and columns of several shapes) in GB/s, against raw copies and reads of
//! the same bytes.

use lazycl::{Array, Context};
use opencl3::memory::ClMem;

use crate::raw::{self, Raw, R};
use crate::{chain8, lz, per_run, Report};

/// The bandwidth rows over `host` (the elements of the largest array; `quick`: the
/// smaller matrices), each measured `reps` times a trial; returns the best raw copy's GB/s, the baseline of later rows.
pub fn rows(
    rep: &mut Report,
    ctx: &Context,
    raw: &Raw,
    host: &[f32],
    quick: bool,
    trials: usize,
    reps: usize,
) -> R<f64> {
    let n = host.len();
    let info = ctx.device();
    let a = raw.buffer_f32(host)?;
    let b = unsafe {
        opencl3::memory::Buffer::<f32>::create(
            &raw.ctx,
            opencl3::memory::CL_MEM_READ_WRITE,
            n,
            std::ptr::null_mut(),
        )
    }
    .map_err(|e| format!("{e:?}"))?;
    let c1 = raw.kernel(raw::COPY1, "copy1")?;
    raw.set_mem(&c1, 0, a.get())?;
    raw.set_mem(&c1, 1, b.get())?;
    raw.set(&c1, 2, &(n as u32))?;
    let t1 = per_run(
        trials,
        reps,
        || raw.enqueue_no_event(&c1, n.div_ceil(256) * 256, Some(256)),
        || raw.finish(),
    )?;
    let c4 = raw.kernel(raw::COPY4, "copy4")?;
    let r4 = raw.kernel(raw::READ4, "read4")?;
    let r4_out = raw.buffer_f32(&[0.0])?;
    raw.set_mem(&r4, 1, r4_out.get())?;
    raw.set_mem(&c4, 0, a.get())?;
    raw.set_mem(&c4, 1, b.get())?;
    raw.set(&c4, 2, &((n / 4) as u32))?;
    let cu = info.compute_units as usize;
    let g4 = (n / 4).min(cu * 2048).div_ceil(256) * 256;
    let t4 = per_run(
        trials,
        reps,
        || raw.enqueue_no_event(&c4, g4, Some(256)),
        || raw.finish(),
    )?;
    let hc = raw.kernel(raw::CHAIN8, "chain8")?;
    raw.set_mem(&hc, 0, a.get())?;
    raw.set_mem(&hc, 1, b.get())?;
    raw.set(&hc, 2, &((n / 4) as u32))?;
    let th = per_run(
        trials,
        reps,
        || raw.enqueue_no_event(&hc, g4, Some(256)),
        || raw.finish(),
    )?;
    let bytes = 8.0 * n as f64;
    let (g1, g4s, gh) = (bytes / t1 / 1e9, bytes / t4 / 1e9, bytes / th / 1e9);
    eprintln!("  raw copy1 {g1:.1} GB/s, copy4 {g4s:.1} GB/s, hand chain8 {gh:.1} GB/s");
    let best = g1.max(g4s);
    let x = lz(ctx.from_slice(host))?;
    let sync = || lz(ctx.synchronize());
    let tf = per_run(trials, reps, || lz(chain8(&x).eval().map(|_| ())), sync)?;
    rep.add(
        format!("fused 8-op chain f32, n=2^{}", n.trailing_zeros()),
        bytes / tf / 1e9,
        best,
        "GB/s",
        "raw copy (best of 1/4 per item)",
    );
    rep.add(
        "hand-written single chain kernel (raw)",
        gh,
        best,
        "GB/s",
        "raw copy (best of 1/4 per item)",
    );
    let op_by_op = per_run(
        trials,
        reps.div_ceil(4),
        || {
            let mut y = &x * 1.5;
            for step in 0..7 {
                lz(y.eval().map(|_| ()))?;
                y = match step {
                    0 => y + 2.0,
                    1 => y * &x,
                    2 => y - 0.25,
                    3 => y.abs(),
                    4 => y + 1.0,
                    5 => y.sqrt(),
                    _ => ((y * 3.0) / 7.0 - &x).tanh(),
                };
            }
            lz(y.eval().map(|_| ()))
        },
        sync,
    )?;
    rep.add(
        "8-op chain evaluated op by op (eval after each)",
        bytes / op_by_op / 1e9,
        best,
        "GB/s",
        "raw copy (best of 1/4 per item)",
    );

    // Reductions.
    let ts = per_run(trials, reps, || lz((&x * &x).sum().eval().map(|_| ())), sync)?;
    rep.add(
        format!("sum(x*x) f32, n=2^{}", n.trailing_zeros()),
        4.0 * n as f64 / ts / 1e9,
        best,
        "GB/s",
        "raw copy (best of 1/4 per item)",
    );
    let shapes: &[(usize, usize)] = if quick {
        &[(20000, 100), (2000, 1000), (320, 2530), (20000, 20)]
    } else {
        &[(200000, 100), (20000, 1000), (3200, 25300), (2000000, 20)]
    };
    for &(rows, cols) in shapes {
        let m = lz(ctx.from_shape_slice([rows, cols], &host[..rows * cols]))?;
        let mbuf = raw.buffer_f32(&host[..rows * cols])?;
        let v = lz(ctx.from_slice(&host[..cols]))?;
        let u = lz(ctx.from_slice(&host[..rows]))?;
        let bytes = 4.0 * (rows * cols + rows + cols) as f64;
        // The practical bandwidth at this size: a float4 copy of the matrix.
        let n4 = rows * cols / 4;
        raw.set(&c4, 2, &(n4 as u32))?;
        let g = n4.min(cu * 2048).div_ceil(256) * 256;
        let tc = per_run(
            trials,
            reps,
            || raw.enqueue_no_event(&c4, g, Some(256)),
            || raw.finish(),
        )?;
        let same = 8.0 * (n4 * 4) as f64 / tc / 1e9;
        // What one pass over the same bytes can reach: a raw read-only kernel, and a
        // lazycl full sum of the matrix.
        raw.set_mem(&r4, 0, mbuf.get())?;
        raw.set(&r4, 2, &(n4 as u32))?;
        let tr = per_run(
            trials,
            reps,
            || raw.enqueue_no_event(&r4, g, Some(256)),
            || raw.finish(),
        )?;
        let tsum = per_run(trials, reps, || lz(m.sum().eval().map(|_| ())), sync)?;
        rep.add(
            format!("m.sum(), {rows}x{cols}"),
            4.0 * (rows * cols) as f64 / tsum / 1e9,
            4.0 * (n4 * 4) as f64 / tr / 1e9,
            "GB/s",
            "raw float4 read of the matrix",
        );
        rep.add(
            format!("raw float4 read of the matrix, {rows}x{cols}"),
            4.0 * (n4 * 4) as f64 / tr / 1e9,
            same,
            "GB/s",
            "raw float4 copy of the matrix",
        );
        let t = per_run(
            trials,
            reps,
            || lz((&m * &v).sum_axis(1).eval().map(|_| ())),
            sync,
        )?;
        rep.add(
            format!("(m * v).sum_axis(1), {rows}x{cols}"),
            bytes / t / 1e9,
            same,
            "GB/s",
            "raw float4 copy of the matrix",
        );
        // The same product four times per flush: the host's planning cost is shared, so
        // this shows the kernel's own bandwidth when the host is not the limit.
        let t4 = per_run(
            trials,
            reps,
            || {
                let p: Vec<Array<f32>> = (0..4).map(|_| (&m * &v).sum_axis(1)).collect();
                lz(lazycl::eval(&p))
            },
            sync,
        )?;
        rep.add(
            format!("(m * v).sum_axis(1), {rows}x{cols}, 4 per flush"),
            4.0 * bytes / t4 / 1e9,
            same,
            "GB/s",
            "raw float4 copy of the matrix",
        );
        let ut = u.insert_axis(1);
        let t4 = per_run(
            trials,
            reps,
            || {
                let p: Vec<Array<f32>> = (0..4).map(|_| (&m * &ut).sum_axis(0)).collect();
                lz(lazycl::eval(&p))
            },
            sync,
        )?;
        rep.add(
            format!("(m * u[:, None]).sum_axis(0), {rows}x{cols}, 4 per flush"),
            4.0 * bytes / t4 / 1e9,
            same,
            "GB/s",
            "raw float4 copy of the matrix",
        );
        let t = per_run(
            trials,
            reps,
            || lz((&m * &ut).sum_axis(0).eval().map(|_| ())),
            sync,
        )?;
        rep.add(
            format!("(m * u[:, None]).sum_axis(0), {rows}x{cols}"),
            bytes / t / 1e9,
            same,
            "GB/s",
            "raw float4 copy of the matrix",
        );
    }
    Ok(best)
}
