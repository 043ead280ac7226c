//! `expr!` forms that compile: captured arrays and scalars of any element type, closures,
//! device functions (called inside and mapped), generic callers. Nothing runs (no device).
use lazycl::prelude::*;

#[device_fn]
fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

#[device_fn]
fn lerp(a: f64, b: f64, t: f64) -> f64 {
    a + (b - a) * t
}

fn forms(x: &Array<f32>, y: &Array<f32>, d: &Array<f64>, i: &Array<i32>, b: &Array<bool>, a: f32) {
    let _: Array<f32> = expr!(a * x + y);
    let _: Array<f32> = expr!((a * x + y).sqrt());
    let _: Array<f64> = expr!(d.exp() * 2.0);
    let _: Array<f32> = expr!(if x > 0.0 && y < 1.0 { x } else { y * 0.5 });
    let _: Array<bool> = expr!(x > y || !b);
    let _: Array<i32> = expr!((i << 2) / 3 % 7 ^ i);
    let _: Array<f32> = expr!(i as f32 * x);
    let _: Array<f32> = expr!({
        let t = x * 2.0;
        let u = t + 1.0;
        t * u
    });
    let _: Array<f32> = expr!(sigmoid(x) * f32::consts::PI);
    let _: Array<f64> = expr!(lerp(d, d * 2.0, 0.25));
    let _: Array<f32> = sigmoid::map(x);
    let _: Array<f64> = lerp::map(d, 1.0, 0.5);
    let f = expr!(|x: f32, y: f32| x.mul_add(2.0, y));
    let _: Array<f32> = f.apply(x, 1.5);
    let _: Array<f32> = f.apply(2.0, y);
    let g = expr!(|c: bool, v: i64| -> i64 { if c { v } else { -v } });
    let _ = g;
}

fn main() {
    let _ = forms;
    let _ = many;
    let _ = raw;
}

/// Many operands (a long tuple of element types, no lint in the generated code).
#[deny(clippy::all, warnings)]
#[allow(clippy::too_many_arguments)]
fn many(a: &Array<f32>, b: &Array<f32>, c: f32, d: f32, e: f32, f: f32, g: f32, h: f32, i: f32) -> Array<f32> {
    expr!(a + b + c + d + e + f + g + h + i)
}

/// Raw identifiers as operands and parameters.
#[device_fn]
fn raw_params(r#type: f32, r#match: f32) -> f32 {
    r#type * r#match
}

fn raw(r#type: &Array<f32>) -> Array<f32> {
    let f = expr!(|r#in: f32| r#in + 1.0);
    f.apply(expr!(r#type * 2.0) + raw_params::map(r#type, 3.0))
}
