//! Gradients through `expr!` and `#[device_fn]`: the macros write each derivative at
//! compile time (branches, `let`s, math methods, device-function calls), checked against
//! central finite differences in `f64` on random data with broadcasting, and against the
//! same expression written with array operations in `f32` and `f16`. An `expr!` node's
//! adjoint is one more fused node; what has no derivative is an error that names it.

use crate::common::{ctx, rng};
use crate::gradients::{check, weigh};
use lazycl::prelude::*;
use rand::Rng;

#[device_fn]
fn softplus(x: f64) -> f64 {
    let e = (-x.abs()).exp();
    x.max(0.0) + e.ln_1p()
}

#[device_fn]
fn blend(a: f64, b: f64, n: i32) -> f64 {
    if n > 0 {
        softplus(a) * b
    } else {
        a - b
    }
}

#[device_fn]
fn cube<T: Float>(x: T) -> T {
    x * x * x
}

#[device_fn]
fn repeated(x: f64) -> f64 {
    let mut s = 0.0;
    for _ in 0..3 {
        s += x;
    }
    s
}

#[device_fn]
fn calls_repeated(x: f64) -> f64 {
    repeated(x) * 2.0
}

#[test]
fn expr_derivatives_match_finite_differences() {
    let shapes: &[&[usize]] = &[&[3, 4], &[4]];
    check("arithmetic and math", shapes, (-0.9, 0.9), &|p| {
        let (x, y) = (&p[0], &p[1]);
        weigh(&expr!(
            (x * 2.0 + y).sin() * x.exp() + (x * x + 1.0).ln() - x.tanh() * y.cos()
                + x.atan() / (y * y + 2.0).sqrt()
                + x.erf()
                + x.powi(3) * 0.1
                + (x.abs() + 0.5).powf(y + 1.5)
                + x % (y.abs() + 1.0)
        ))
    });
    check("lets and branches", shapes, (-0.9, 0.9), &|p| {
        let (x, y) = (&p[0], &p[1]);
        weigh(&expr!({
            let t = x * y;
            let t = t * t + x;
            if t > 0.1 {
                (t + 1.0).sqrt()
            } else if t < -0.3 {
                -t * 0.5
            } else {
                t.exp() * y
            }
        }))
    });
    check("selections", shapes, (-0.9, 0.9), &|p| {
        let (x, y) = (&p[0], &p[1]);
        weigh(&expr!(
            x.max(y)
                + x.min(0.3) * 2.0
                + x.clamp(-0.5, y + 1.0)
                + x.hypot(y)
                + x.atan2(y + 2.0)
                + x.mul_add(y, x)
                + (x * 3.0).abs()
                + x.copysign(y)
                + x.floor()
        ))
    });
    check("inverse and hyperbolic functions", &[&[7]], (-0.9, 0.9), &|p| {
        let x = &p[0];
        weigh(&expr!(
            (x * 0.5).asin()
                + (x * 0.5).acos()
                + (x * 0.5).atanh()
                + (x * x + 1.5).acosh()
                + x.asinh()
                + x.sinh()
                + x.cosh()
                + (x * x + 1.0).cbrt()
                + (x + 3.0).log2()
                + (x + 3.0).log10()
                + x.exp2()
                + x.exp_m1()
                + (x * x).ln_1p()
                + x.erfc()
                + x.tan()
        ))
    });
}

#[test]
fn device_function_derivatives_match_finite_differences() {
    let shapes: &[&[usize]] = &[&[2, 5], &[5]];
    check("device functions in expr!", shapes, (-1.5, 1.5), &|p| {
        let (x, y) = (&p[0], &p[1]);
        weigh(&expr!(
            blend(x, y, 2) + blend(y, x, 0) * softplus(x * y) + cube(x) + blend(x, x * y, 1)
        ))
    });
    check("a device function's map", shapes, (-1.5, 1.5), &|p| {
        let (x, y) = (&p[0], &p[1]);
        weigh(&(blend::map(x, y, 1i32) + softplus::map(x)))
    });
    check("the closure form", shapes, (-1.5, 1.5), &|p| {
        let f = expr!(|a: f64, b: f64| a * b.sin() + softplus(a - b));
        weigh(&f.apply(&p[0], &p[1]))
    });
    check("host scalars are constants", &[&[6]], (-1.5, 1.5), &|p| {
        let (x, s) = (&p[0], 0.75f64);
        weigh(&expr!(x * s + (x * s).sin()))
    });
}

/// The gradient of one expression written with `expr!` and with array operations, in a
/// narrower type: the two derivatives agree to the type's precision.
#[test]
fn expr_gradients_equal_the_array_operations_gradients() {
    let ctx = ctx();
    let mut r = rng(53);
    let xs: Vec<f32> = (0..257).map(|_| r.gen_range(-2.0..2.0)).collect();
    let ys: Vec<f32> = (0..257).map(|_| r.gen_range(0.5..2.0)).collect();
    let x = ctx.from_slice(&xs).unwrap();
    let y = ctx.from_slice(&ys).unwrap();
    let by_expr = expr!((x * y).tanh() + x.max(0.0) * y.ln() + cube(x) * 0.1)
        .sum()
        .grad(&[&x, &y])
        .unwrap();
    let by_ops = ((&x * &y).tanh() + x.max(0.0f32) * y.ln() + &x * &x * &x * 0.1)
        .sum()
        .grad(&[&x, &y])
        .unwrap();
    for (a, b) in by_expr.iter().zip(&by_ops) {
        let (a, b) = (a.to_vec().unwrap(), b.to_vec().unwrap());
        for (p, q) in a.iter().zip(&b) {
            assert!((p - q).abs() <= 1e-5 * q.abs().max(1.0), "{p} against {q}");
        }
    }
    // f16: the derivative is written for the 16-bit type too, exact to its precision.
    let xh = x.cast::<f16>();
    let yh = y.cast::<f16>();
    let gh = expr!((xh * yh).tanh() + xh * 0.5).sum().grad(&[&xh]).unwrap()[0]
        .cast::<f32>()
        .to_vec()
        .unwrap();
    let x16: Vec<f32> = xh.cast::<f32>().to_vec().unwrap();
    let y16: Vec<f32> = yh.cast::<f32>().to_vec().unwrap();
    for i in 0..gh.len() {
        let t = (x16[i] * y16[i]).tanh();
        let want = y16[i] * (1.0 - t * t) + 0.5;
        assert!(
            (gh[i] - want).abs() <= 0.02 * want.abs().max(1.0),
            "{} against {want}",
            gh[i]
        );
    }
}

#[test]
fn an_expr_adjoint_is_one_fused_node() {
    let ctx = ctx();
    let x = ctx.from_slice(&[0.5f32, -1.0, 2.0, 0.25]).unwrap();
    let y = ctx.from_slice(&[1.5f32, 2.0, -0.5, 3.0]).unwrap();
    let g = expr!((x * y).sin() + x * x).sum().grad(&[&x]).unwrap();
    let update = &x - &g[0] * 0.1;
    let before = ctx.stats();
    let got = update.to_vec().unwrap();
    let d = ctx.stats() - before;
    assert_eq!(
        d.kernels_launched, 1,
        "the derivative and the update are one kernel"
    );
    let xs = x.to_vec().unwrap();
    let ys = y.to_vec().unwrap();
    for i in 0..4 {
        let want = xs[i] - 0.1 * ((xs[i] * ys[i]).cos() * ys[i] + 2.0 * xs[i]);
        assert!((got[i] - want).abs() < 1e-5, "{} against {want}", got[i]);
    }
}

#[test]
fn what_has_no_derivative_is_an_error_naming_it() {
    let ctx = ctx();
    let x = ctx.from_slice(&[0.5f64, 1.5]).unwrap();
    let e = expr!(repeated(x) + x).sum().grad(&[&x]).unwrap_err().to_string();
    assert!(e.contains("expr!(repeated(x) + x)"), "{e}");
    assert!(e.contains("`repeated` has no derivative"), "{e}");
    assert!(e.contains("loops"), "{e}");
    assert!(e.contains("gradients_expr.rs"), "the user's line: {e}");
    let e = expr!(calls_repeated(x))
        .sum()
        .grad(&[&x])
        .unwrap_err()
        .to_string();
    assert!(e.contains("`calls_repeated` has no derivative"), "{e}");
    let e = expr!(x.lgamma()).sum().grad(&[&x]).unwrap_err().to_string();
    assert!(e.contains("digamma"), "{e}");
    let e = repeated::map(&x).sum().grad(&[&x]).unwrap_err().to_string();
    assert!(e.contains("loops"), "{e}");
    // Integer results and operands pass nothing; the gradient of the rest is there.
    let k = ctx.from_slice(&[2i32, 3]).unwrap();
    let g = expr!(x * (k as f64) + ((x * 4.0) as i32) as f64)
        .sum()
        .grad(&[&x])
        .unwrap();
    assert_eq!(g[0].to_vec().unwrap(), vec![2.0, 3.0]);
}

#[device_fn]
fn widened(x: f32, y: f64) -> f64 {
    (x as f64) * y.sin()
}

#[test]
fn a_device_function_of_mixed_float_types_differentiates_in_each() {
    let ctx = ctx();
    let x = ctx.from_slice(&[0.5f32, -1.25, 2.0]).unwrap();
    let y = ctx.from_slice(&[0.3f64, 1.1, -0.7]).unwrap();
    let xs = x.to_vec().unwrap();
    let ys = y.to_vec().unwrap();
    // d/dy through the f64 result; d/dx through an f32 operand of an f64 function.
    let g = expr!(widened(x, y) * 2.0).sum().grad(&[&y]).unwrap();
    let got = g[0].to_vec().unwrap();
    for i in 0..3 {
        let want = 2.0 * xs[i] as f64 * ys[i].cos();
        assert!((got[i] - want).abs() < 1e-12, "{} against {want}", got[i]);
    }
    let gx = expr!(widened(x * 3.0, y) as f32).sum().grad(&[&x]).unwrap();
    let got = gx[0].to_vec().unwrap();
    for i in 0..3 {
        let want = 3.0 * ys[i].sin() as f32;
        assert!((got[i] - want).abs() < 1e-6, "{} against {want}", got[i]);
    }
}
