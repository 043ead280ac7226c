//! No false waits: lazy operations right after a long kernel on the same queue return
//! before it ends, and a small result read while a long kernel runs on another queue
//! waits for its own kernel only; each against the long kernel's duration.

use std::time::Instant;

use lazycl::{Context, Dims, Kernel, KernelArg, LaunchOptions};

use crate::raw::R;
use crate::{calibrate_spin, lz, Report, SPIN};

/// The rows, over the first elements of `host`.
pub fn rows(rep: &mut Report, ctx: &Context, host: &[f32]) -> R<()> {
    let info = ctx.device();
    let spin = lz(Kernel::bind(ctx, &SPIN))?;
    let items = (info.compute_units as usize * 256).max(256);
    let buf = lz(ctx.full(items, 1.0f32))?;
    let b = lz(buf.kernel_arg())?;
    let target = 0.080;
    let (iters, spin_time) = calibrate_spin(target, |iters| {
        lz(spin.launch(
            Dims::from(items),
            None,
            &[b.mem(), KernelArg::Scalar(lazycl::Element::to_arg_bits(iters))],
        ))?;
        lz(ctx.synchronize())
    })?;
    let x = lz(ctx.from_slice(&host[..1 << 16]))?;
    // Build the three kernels first: this row is about waiting, not compiling.
    lz((2.0 * &x).eval().map(|_| ()))?;
    lz(x.lt(0.0).eval().map(|_| ()))?;
    lz((&x / 3.0).eval().map(|_| ()))?;
    lz(ctx.synchronize())?;
    let mut worst: f64 = 0.0;
    for _ in 0..3 {
        lz(spin.launch(
            Dims::from(items),
            None,
            &[b.mem(), KernelArg::Scalar(lazycl::Element::to_arg_bits(iters))],
        ))?;
        let t = Instant::now();
        let y = 2.0 * &x;
        lz(y.eval().map(|_| ()))?;
        let m = x.lt(0.0);
        lz(m.eval().map(|_| ()))?;
        let z = &x / 3.0;
        lz(z.eval().map(|_| ()))?;
        worst = worst.max(t.elapsed().as_secs_f64() / 3.0);
        lz(ctx.synchronize())?;
    }
    rep.add(
        "host time of `2.0 * &x` + eval after a long kernel (worst of 3)",
        worst * 1e6,
        spin_time * 1e6,
        "µs",
        "the long kernel's duration",
    );

    // A read of a small result while a long kernel runs on another queue: it waits
    // for the result's own kernel only. The long kernel is one work-item, so that it
    // keeps one core of a CPU device busy, not all of them.
    let slow_q = lz(ctx.new_queue())?;
    let mut busy = lz(ctx.full(1, 1.0f32))?;
    let small = lz(ctx.from_slice(&host[..256]))?;
    lz((&small * 3.0 + 1.0).to_vec().map(drop))?;
    let on_slow_q = LaunchOptions {
        queue: Some(&slow_q),
        ..LaunchOptions::new(Dims::from(1))
    };
    let mut spin_one = |iters: u32| -> R<()> {
        let ba = lz(busy.kernel_arg_mut())?;
        let args = [ba.mem(), KernelArg::Scalar(lazycl::Element::to_arg_bits(iters))];
        lz(spin.submit(&on_slow_q, &args, &[&ba], false).map(drop))
    };
    let (iters, spin_time) = calibrate_spin(target, |iters| {
        spin_one(iters)?;
        lz(ctx.synchronize())
    })?;
    let mut worst: f64 = 0.0;
    for _ in 0..3 {
        spin_one(iters)?;
        let t = Instant::now();
        let v = lz((&small * 3.0 + 1.0).to_vec())?;
        worst = worst.max(t.elapsed().as_secs_f64());
        if v[0] != host[0] * 3.0 + 1.0 {
            return Err("the small result is wrong".into());
        }
        lz(ctx.synchronize())?;
    }
    rep.add(
        "host time to compute + read a small result while a long kernel runs on another queue (worst of 3)",
        worst * 1e6,
        spin_time * 1e6,
        "µs",
        "the long kernel's duration",
    );
    Ok(())
}
