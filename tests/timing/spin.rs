//! A kernel that keeps the device busy for a chosen time, for the tests that assert what
//! did (or did not) wait for it.

use std::time::{Duration, Instant};

use lazycl::prelude::*;

/// Writes `value` everywhere after a busy loop (one work-item per element).
#[kernel]
pub(crate) fn slow_fill(y: &mut [f32], value: f32, iters: u32) {
    let i = global_id(0);
    if i < y.len() {
        let mut v = value;
        let mut k = 0u32;
        while k < iters {
            v = v * 0.9999 + 0.0001;
            k += 1;
        }
        let mut r = value;
        if v == 1234.5678 {
            r = 0.0;
        }
        y[i] = r;
    }
}

/// Iterations of the busy loop that make one `slow_fill` of `n` elements take at least
/// `at_least` on this device.
pub(crate) fn calibrate(ctx: &Context, n: usize, at_least: Duration) -> u32 {
    let k = slow_fill::bind(ctx).unwrap();
    let mut y = ctx.zeros::<f32>(n).unwrap();
    let mut iters = 10_000u32;
    for _ in 0..14 {
        let t = Instant::now();
        k.global(n).launch(&mut y, 1.0, iters).unwrap();
        ctx.synchronize().unwrap();
        if t.elapsed() >= at_least {
            return iters;
        }
        iters = iters.saturating_mul(3);
    }
    panic!("could not make a kernel that runs for {at_least:?}");
}
