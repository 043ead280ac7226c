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

/// Integer `/ %`, `clamp`, `signum` and float → int casts give Rust's values through the
/// helper functions of `lazycl-clc` (`lzc_div_int`, ...): here both the `expr!` template
/// and the kernel's own operators call each of them, so the fused kernel includes each
/// definition twice under one guard and compiles it once (two definitions of one name
/// would not build).
#[test]
fn an_expr_and_the_operators_around_it_share_helpers() {
    let ctx = ctx();
    let xs = [7, -7, i32::MIN, 5, 0, 40, -1, i32::MAX];
    let ys = [2, 0, -1, -3, 0, 7, 1, -1];
    let (x, y) = (ctx.from_slice(&xs).unwrap(), ctx.from_slice(&ys).unwrap());
    let div = |a: i32, b: i32| if b == 0 { 0 } else { a.wrapping_div(b) };
    let rem = |a: i32, b: i32| if b == 0 { 0 } else { a.wrapping_rem(b) };
    let before = ctx.stats();
    let e = expr!(x / y + x % y + x.clamp(-5, 5));
    let z = (&e - &x / &y + (&x % &y).clamp(-3, 3) + x.signum())
        .to_vec()
        .unwrap();
    assert_eq!((ctx.stats() - before).kernels_launched, 1);
    for i in 0..xs.len() {
        let (a, b) = (xs[i], ys[i]);
        let h = div(a, b)
            .wrapping_add(rem(a, b))
            .wrapping_add(a.clamp(-5, 5))
            .wrapping_sub(div(a, b))
            .wrapping_add(rem(a, b).clamp(-3, 3))
            .wrapping_add(a.signum());
        assert_eq!(z[i], h, "{i}: {a}, {b}");
    }

    let fs = [1.5f32, -0.0, f32::NAN, 3e9, -3e9, -0.75, f32::INFINITY];
    let f = ctx.from_slice(&fs).unwrap();
    let before = ctx.stats();
    let c = expr!(f.clamp(-1.0, 1.0) + f.signum());
    let (g, k) = ((&c + f.clamp(-1.0, 1.0) + f.signum()), expr!(f as i32));
    let (g, k) = ((g - c).to_vec().unwrap(), (k + f.cast::<i32>()).to_vec().unwrap());
    assert!((ctx.stats() - before).kernels_launched <= 2);
    for i in 0..fs.len() {
        let h = fs[i].clamp(-1.0, 1.0) + fs[i].signum();
        assert!(g[i] == h || (g[i].is_nan() && h.is_nan()), "{i}: {} vs {h}", g[i]);
        assert_eq!(k[i], (fs[i] as i32).wrapping_mul(2), "{i}");
    }
}
