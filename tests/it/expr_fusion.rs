//! An `expr!` node is a lazy node like any other: with the operator-built nodes around it
//! it runs as one kernel, and evaluating the same `expr!` with new scalar values builds
//! no new program (scalars are kernel arguments, the template is the cache identity).

use crate::common::{ctx, rng, Random};
use lazycl::prelude::*;

#[device_fn]
fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

fn close(a: f32, b: f32) -> bool {
    a == b || (a - b).abs() <= 2e-5 * a.abs().max(b.abs()).max(1.0)
}

#[test]
fn expr_and_operators_fuse_into_one_kernel_and_new_scalars_build_nothing() {
    let ctx = ctx();
    let mut rng = rng(31);
    let n = 1001;
    let xs = f32::random_vec(&mut rng, n);
    let ys = f32::random_vec(&mut rng, n);
    let x = ctx.from_slice(&xs).unwrap();
    let y = ctx.from_slice(&ys).unwrap();
    let mut builds = Vec::new();
    for (a, c) in [(1.5f32, 0.0f32), (-0.25, 2.0), (3.0, -1.0)] {
        let before = ctx.stats();
        let u = &x * 0.5 + &y; // an operator-built input to the expr!
        let e = expr!(if u > c { a * u } else { sigmoid(x) - y });
        let z = (&e * 2.0 + &x).to_vec().unwrap(); // operator-built consumers
        let d = ctx.stats() - before;
        assert_eq!(
            d.kernels_launched, 1,
            "the expr! node and the operators around it run as one kernel: {d:?}"
        );
        builds.push(d.programs_built);
        for i in 0..n {
            let u = xs[i] * 0.5 + ys[i];
            let e = if u > c {
                a * u
            } else {
                1.0 / (1.0 + (-xs[i]).exp()) - ys[i]
            };
            let h = e * 2.0 + xs[i];
            assert!(close(z[i], h), "{i}: device {}, host {h}", z[i]);
        }
    }
    assert_eq!(
        builds[1..],
        [0, 0],
        "new scalar values build no new program: {builds:?}"
    );
}

#[test]
fn closures_and_maps_fuse_and_cache_too() {
    let ctx = ctx();
    let mut rng = rng(32);
    let xs = f32::random_vec(&mut rng, 777);
    let x = ctx.from_slice(&xs).unwrap();
    let f = expr!(|v: f32, k: f32| v * k + 1.0);
    let mut builds = Vec::new();
    for k in [2.0f32, -3.0, 0.5] {
        let before = ctx.stats();
        let z = (f.apply(sigmoid::map(&x), k) - &x).to_vec().unwrap();
        let d = ctx.stats() - before;
        assert_eq!(d.kernels_launched, 1, "{d:?}");
        builds.push(d.programs_built);
        for i in 0..xs.len() {
            let h = (1.0 / (1.0 + (-xs[i]).exp())) * k + 1.0 - xs[i];
            assert!(close(z[i], h), "{i}: device {}, host {h}", z[i]);
        }
    }
    assert_eq!(builds[1..], [0, 0], "{builds:?}");
}

#[test]
fn an_expr_feeds_a_reduction_in_one_kernel() {
    let ctx = ctx();
    let xs: Vec<f32> = (0..1000).map(|i| (i as f32 * 0.37).sin()).collect();
    let x = ctx.from_slice(&xs).unwrap();
    let before = ctx.stats();
    let s = expr!(if x > 0.0 { x } else { 0.0 }).sum().item().unwrap();
    let d = ctx.stats() - before;
    let h: f32 = xs.iter().map(|v| v.max(0.0)).sum();
    assert!((s - h).abs() <= 1e-3 * h.abs().max(1.0), "{s} vs {h}");
    assert_eq!(d.kernels_launched, 1, "{d:?}");
}
