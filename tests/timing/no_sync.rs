//! The measured lesson: a scalar operand must never synchronize. With a long kernel in
//! flight, recording and enqueuing `2.0 * &x`, `x.lt(0.0)` and `&x / 3.0` returns at once
//! (a generous bound here; the tight figures are in the report bench).

// A binary of its own with queues.rs, not a module of tests/it: see tests/timing/main.rs.

use std::time::{Duration, Instant};

use crate::common::ctx;
use crate::exclusive;
use lazycl::prelude::*;

#[kernel]
fn spin(x: &mut [f32], iters: u32) {
    let i = global_id(0);
    if i < x.len() {
        let mut v = x[i];
        let mut k = 0u32;
        while k < iters {
            v = v * 0.9999 + 0.0001;
            k += 1;
        }
        x[i] = v;
    }
}

#[test]
fn scalars_after_a_long_kernel_do_not_wait() {
    let _one = exclusive();
    let ctx = ctx();
    let k = spin::bind(&ctx).unwrap();
    let mut busy = ctx.full(256, 1.0f32).unwrap();
    let x = ctx
        .from_vec((0..4096).map(|i| i as f32 - 2048.0).collect())
        .unwrap();
    // Build everything first: this is about waiting, not compiling.
    lazycl::eval(&(&(2.0 * &x), &x.lt(0.0), &(&x / 3.0))).unwrap();
    (2.0 * &x).eval().unwrap();
    x.lt(0.0).eval().unwrap();
    (&x / 3.0).eval().unwrap();
    // Calibrate the long kernel to take at least ~300 ms.
    let mut iters = 20_000u32;
    let mut took = Duration::ZERO;
    for _ in 0..12 {
        let t = Instant::now();
        k.global(256).launch(&mut busy, iters).unwrap();
        ctx.synchronize().unwrap();
        took = t.elapsed();
        if took >= Duration::from_millis(300) {
            break;
        }
        iters = iters.saturating_mul(4);
    }
    assert!(
        took >= Duration::from_millis(300),
        "could not make a long kernel ({took:?})"
    );

    k.global(256).launch(&mut busy, iters).unwrap();
    let before = ctx.stats();
    let t = Instant::now();
    let a = 2.0 * &x;
    a.eval().unwrap();
    let b = x.lt(0.0);
    b.eval().unwrap();
    let c = &x / 3.0;
    c.eval().unwrap();
    let host = t.elapsed();
    let d = ctx.stats() - before;
    assert_eq!(d.host_waits, 0, "{d}");
    assert_eq!(d.bytes_uploaded, 0, "scalars are kernel arguments");
    assert!(
        host < took / 4,
        "three scalar ops took {host:?} of host time next to a {took:?} kernel"
    );
    assert_eq!(a.to_vec().unwrap()[0], -4096.0);
    assert!(b.to_vec().unwrap()[0]);
    assert_eq!(c.to_vec().unwrap()[3], (3.0 - 2048.0) / 3.0);
}
