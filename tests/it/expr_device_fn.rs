//! Device functions inside `expr!`, device functions mapped over arrays (`name::map`),
//! and the closure form (`expr!(|x: f32, ..| ...)` with `.apply(...)`), run on the device
//! and compared with the same functions written for the host, on seeded random inputs
//! of sizes 0, 1, 7 and 1001; and broadcasting between operands of different shapes.

use crate::common::{ctx, rng, Random};
use lazycl::prelude::*;

#[device_fn]
fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

#[device_fn]
fn lerp(a: f32, b: f32, t: f32) -> f32 {
    a + (b - a) * t
}

/// Calls another device function.
#[device_fn]
fn swish(x: f32) -> f32 {
    x * sigmoid(1.702 * x)
}

#[device_fn]
fn is_small(x: i32) -> bool {
    x > -1000 && x < 1000
}

/// A loop, which `expr!` itself cannot express.
#[device_fn]
fn steps(n: u32) -> u32 {
    let mut n = n % 1000 + 1;
    let mut c = 0;
    while n != 1 {
        n = if n % 2 == 0 { n / 2 } else { 3 * n + 1 };
        c += 1;
    }
    c
}

#[device_fn]
fn softplus(x: f64) -> f64 {
    if x > 20.0 {
        x
    } else {
        (1.0 + x.exp()).ln()
    }
}

fn h_sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}
fn h_lerp(a: f32, b: f32, t: f32) -> f32 {
    a + (b - a) * t
}
fn h_swish(x: f32) -> f32 {
    x * h_sigmoid(1.702 * x)
}
fn h_is_small(x: i32) -> bool {
    x > -1000 && x < 1000
}
fn h_steps(n: u32) -> u32 {
    let mut n = n % 1000 + 1;
    let mut c = 0;
    while n != 1 {
        n = if n.is_multiple_of(2) { n / 2 } else { 3 * n + 1 };
        c += 1;
    }
    c
}
fn h_softplus(x: f64) -> f64 {
    if x > 20.0 {
        x
    } else {
        (1.0 + x.exp()).ln()
    }
}

fn close32(a: f32, b: f32) -> bool {
    a == b || (a - b).abs() <= 2e-5 * a.abs().max(b.abs()).max(1.0)
}

fn close64(a: f64, b: f64) -> bool {
    a == b || (a - b).abs() <= 1e-12 * a.abs().max(b.abs()).max(1.0)
}

#[test]
fn device_functions_closures_and_maps_match_the_host() {
    let ctx = ctx();
    let mut rng = rng(21);
    let add2 = expr!(|x: f32, y: f32| x.mul_add(2.0, y));
    let pick = expr!(|c: bool, v: f32| -> f32 {
        if c {
            v
        } else {
            -v
        }
    });
    let scaled = expr!(|v: f64, k: i64| v * k as f64 + softplus(v));
    for len in [0usize, 1, 7, 1001] {
        let xs = f32::random_vec(&mut rng, len);
        let ys = f32::random_vec(&mut rng, len);
        let is: Vec<i32> = i32::random_vec(&mut rng, len).iter().map(|v| v % 3000).collect();
        let us = u32::random_vec(&mut rng, len);
        let bs = bool::random_vec(&mut rng, len);
        let ds = f64::random_vec(&mut rng, len);
        let ks: Vec<i64> = i64::random_vec(&mut rng, len).iter().map(|v| v % 100).collect();
        let a = 0.75f32;
        let (x, y) = (ctx.from_slice(&xs).unwrap(), ctx.from_slice(&ys).unwrap());
        let (i, u, b) = (
            ctx.from_slice(&is).unwrap(),
            ctx.from_slice(&us).unwrap(),
            ctx.from_slice(&bs).unwrap(),
        );
        let (d, k) = (ctx.from_slice(&ds).unwrap(), ctx.from_slice(&ks).unwrap());

        let f32s: Vec<Array<f32>> = vec![
            expr!(sigmoid(x) * 2.0 - y),
            expr!(lerp(x, y, 0.25) + lerp(y, x, a)),
            expr!(if is_small(i) { swish(x) } else { sigmoid(x) }),
            expr!({
                let s = sigmoid(x);
                lerp(s, 1.0 - s, y.abs().min(1.0))
            }),
            sigmoid::map(&x),
            lerp::map(&x, &y, 0.5),
            lerp::map(&x, 1.0, &y),
            swish::map(&y),
            add2.apply(&x, &y),
            add2.apply(1.5, &y),
            add2.apply(&x, a),
            pick.apply(&b, &x),
        ];
        let hosts: Vec<Box<dyn Fn(usize) -> f32>> = vec![
            Box::new(|j| h_sigmoid(xs[j]) * 2.0 - ys[j]),
            Box::new(|j| h_lerp(xs[j], ys[j], 0.25) + h_lerp(ys[j], xs[j], a)),
            Box::new(|j| {
                if h_is_small(is[j]) {
                    h_swish(xs[j])
                } else {
                    h_sigmoid(xs[j])
                }
            }),
            Box::new(|j| {
                let s = h_sigmoid(xs[j]);
                h_lerp(s, 1.0 - s, ys[j].abs().min(1.0))
            }),
            Box::new(|j| h_sigmoid(xs[j])),
            Box::new(|j| h_lerp(xs[j], ys[j], 0.5)),
            Box::new(|j| h_lerp(xs[j], 1.0, ys[j])),
            Box::new(|j| h_swish(ys[j])),
            Box::new(|j| xs[j].mul_add(2.0, ys[j])),
            Box::new(|j| 1.5f32.mul_add(2.0, ys[j])),
            Box::new(|j| xs[j].mul_add(2.0, a)),
            Box::new(|j| if bs[j] { xs[j] } else { -xs[j] }),
        ];
        let small: Array<bool> = is_small::map(&i);
        let st: Array<u32> = steps::map(&u);
        let st2: Array<u32> = expr!(steps(u) + steps(u / 2));
        let sp: Array<f64> = softplus::map(&d);
        let sc: Array<f64> = scaled.apply(&d, &k);
        lazycl::eval(&f32s).unwrap();
        lazycl::eval(&(&small, &st, &st2, &sp, &sc)).unwrap();
        for (n, (out, host)) in f32s.iter().zip(&hosts).enumerate() {
            let got = out.to_vec().unwrap();
            assert_eq!(got.len(), len);
            for (j, g) in got.iter().enumerate() {
                assert!(
                    close32(*g, host(j)),
                    "#{n} at {j} of {len}: device {g}, host {}",
                    host(j)
                );
            }
        }
        let (small, st, st2) = (
            small.to_vec().unwrap(),
            st.to_vec().unwrap(),
            st2.to_vec().unwrap(),
        );
        let (sp, sc) = (sp.to_vec().unwrap(), sc.to_vec().unwrap());
        for j in 0..len {
            assert_eq!(small[j], h_is_small(is[j]), "is_small at {j}");
            assert_eq!(st[j], h_steps(us[j]), "steps at {j}");
            assert_eq!(st2[j], h_steps(us[j]) + h_steps(us[j] / 2), "steps at {j}");
            assert!(close64(sp[j], h_softplus(ds[j])), "softplus at {j}");
            let want = ds[j] * ks[j] as f64 + h_softplus(ds[j]);
            assert!(close64(sc[j], want), "closure at {j}: {} vs {want}", sc[j]);
        }
    }
}

#[test]
fn operands_broadcast_like_numpy() {
    let ctx = ctx();
    let col = ctx.from_shape_slice([3, 1], &[1.0f32, -2.0, 3.0]).unwrap();
    let row = ctx.from_slice(&[0.5f32, 1.5, -2.5, 4.0]).unwrap();
    let s = 2.0f32;
    let z = expr!(if col > row { col * s } else { row - col });
    assert_eq!(z.shape(), &[3, 4]);
    let got = z.to_vec().unwrap();
    for r in 0..3 {
        for c in 0..4 {
            let (a, b) = ([1.0f32, -2.0, 3.0][r], [0.5f32, 1.5, -2.5, 4.0][c]);
            let want = if a > b { a * s } else { b - a };
            assert_eq!(got[r * 4 + c], want, "[{r}, {c}]");
        }
    }
    let two = ctx.zeros::<f32>([2]).unwrap();
    let err = expr!(row * two + 1.0).eval().unwrap_err().to_string();
    assert!(
        err.contains("expr!(") && err.contains("[4]") && err.contains("[2]"),
        "{err}"
    );
}
