//! `expr!` over complex arrays and scalars (`c32`, `c64`), against `num_complex` on the
//! host, on random data of several lengths: operators, complex numbers beside reals (the
//! closure form names their types; the expression form finds them where the operands are
//! independent), constructors, parts and methods, equality, fusion with the nodes around
//! it, functions generic over the element kinds, and gradients, which complex values
//! refuse with an error.

use lazycl::prelude::*;

use crate::common::ctx;
use crate::kernel_complex::{assert_close, random_c32, random_c64, random_reals, SIZES};

#[test]
fn operators_with_arrays_and_complex_scalars() {
    let ctx = ctx();
    for n in SIZES {
        let (ha, hb) = (random_c32(31 + n as u64, n), random_c32(32 + n as u64, n));
        let (a, b) = (ctx.from_slice(&ha).unwrap(), ctx.from_slice(&hb).unwrap());
        let (s, t) = (c32::new(0.5, -1.5), c32::new(-2.0, 0.25));
        let got = expr!(a * b + a / b - a * s + t).to_vec().unwrap();
        let want: Vec<c32> = (0..n)
            .map(|i| ha[i] * hb[i] + ha[i] / hb[i] - ha[i] * s + t)
            .collect();
        assert_close(&got, &want, 2e-6, &format!("c32 operators, n = {n}"));
        // A float literal beside a complex number is a real of its parts' type.
        let got = expr!(-a * 2.0 + 1.5 - b / 4.0).to_vec().unwrap();
        let want: Vec<c32> = (0..n).map(|i| -ha[i] * 2.0 + 1.5 - hb[i] / 4.0).collect();
        assert_close(&got, &want, 2e-6, &format!("c32 with literals, n = {n}"));

        let (ha, hb) = (random_c64(33 + n as u64, n), random_c64(34 + n as u64, n));
        let (a, b) = (ctx.from_slice(&ha).unwrap(), ctx.from_slice(&hb).unwrap());
        let s = c64::new(0.75, 1.25);
        let got = expr!((a - b) * (a + s) / b).to_vec().unwrap();
        let want: Vec<c64> = (0..n).map(|i| (ha[i] - hb[i]) * (ha[i] + s) / hb[i]).collect();
        assert_close(&got, &want, 1e-15, &format!("c64 operators, n = {n}"));
        let eq = expr!(a == b).to_vec().unwrap();
        let ne = expr!(a != a).to_vec().unwrap();
        assert!(eq.iter().zip(&ha).zip(&hb).all(|((e, x), y)| *e == (x == y)));
        assert!(ne.iter().all(|e| !e), "z != z of numbers");
    }
    // Equal and unequal elements, exactly.
    let ha = [
        c64::new(1.0, 2.0),
        c64::new(0.0, -0.0),
        c64::new(f64::NAN, 0.0),
        c64::new(3.0, 1.0),
    ];
    let hb = [
        c64::new(1.0, 2.0),
        c64::new(-0.0, 0.0),
        c64::new(f64::NAN, 0.0),
        c64::new(3.0, -1.0),
    ];
    let (a, b) = (ctx.from_slice(&ha).unwrap(), ctx.from_slice(&hb).unwrap());
    assert_eq!(expr!(a == b).to_vec().unwrap(), [true, true, false, false]);
    assert_eq!(expr!(a != b).to_vec().unwrap(), [false, false, true, true]);
}

#[test]
fn complex_numbers_beside_reals() {
    let ctx = ctx();
    // The closure form gives the types: a complex operand beside a real one.
    let mixed32 = expr!(|z: c32, x: f32| z * x + x / z - x + (x - z) * 0.5);
    let mixed64 = expr!(|z: c64, x: f64| z / x + x * z + (z - x) + x + z);
    for n in SIZES {
        let hz = random_c32(35 + n as u64, n);
        let hx: Vec<f32> = random_reals(36 + n as u64, n).iter().map(|&v| v as f32).collect();
        let (z, x) = (ctx.from_slice(&hz).unwrap(), ctx.from_slice(&hx).unwrap());
        let got = mixed32.apply(&z, &x).to_vec().unwrap();
        let want: Vec<c32> = (0..n)
            .map(|i| hz[i] * hx[i] + hx[i] / hz[i] - hx[i] + (hx[i] - hz[i]) * 0.5)
            .collect();
        assert_close(&got, &want, 2e-6, &format!("c32 with f32, n = {n}"));
        // A host scalar of the parts' type, and a complex host scalar.
        let got = mixed32.apply(&z, 2.5f32).to_vec().unwrap();
        let want: Vec<c32> = (0..n)
            .map(|i| hz[i] * 2.5 + 2.5 / hz[i] - 2.5 + (2.5 - hz[i]) * 0.5)
            .collect();
        assert_close(&got, &want, 2e-6, &format!("c32 with a scalar, n = {n}"));
        let s = c32::new(1.0, -1.0);
        let got = expr!(|z: c32, x: f32, s: c32| z * s + x)
            .apply(&z, &x, s)
            .to_vec()
            .unwrap();
        let want: Vec<c32> = (0..n).map(|i| hz[i] * s + hx[i]).collect();
        assert_close(&got, &want, 2e-6, &format!("c32 closure scalar, n = {n}"));
        // Independent operands of the expression form: a part beside a real.
        let got = expr!(z.re * x + z.norm() - x / z.im).to_vec().unwrap();
        let want: Vec<f32> = (0..n)
            .map(|i| hz[i].re * hx[i] + hz[i].norm() - hx[i] / hz[i].im)
            .collect();
        assert_close(&got, &want, 2e-6, &format!("c32 parts with f32, n = {n}"));

        let hz = random_c64(37 + n as u64, n);
        let hx = random_reals(38 + n as u64, n);
        let (z, x) = (ctx.from_slice(&hz).unwrap(), ctx.from_slice(&hx).unwrap());
        let got = mixed64.apply(&z, &x).to_vec().unwrap();
        let want: Vec<c64> = (0..n)
            .map(|i| hz[i] / hx[i] + hx[i] * hz[i] + (hz[i] - hx[i]) + hx[i] + hz[i])
            .collect();
        assert_close(&got, &want, 1e-15, &format!("c64 with f64, n = {n}"));
        let got = expr!(z.scale(x) + z.unscale(x)).to_vec().unwrap();
        let want: Vec<c64> = (0..n)
            .map(|i| hz[i].scale(hx[i]) + hz[i].unscale(hx[i]))
            .collect();
        assert_close(&got, &want, 1e-15, &format!("c64 scale, n = {n}"));
    }
}

#[test]
fn constructors_parts_and_methods() {
    let ctx = ctx();
    for n in SIZES {
        let (hz, hw) = (random_c64(39 + n as u64, n), random_c64(40 + n as u64, n));
        let (z, w) = (ctx.from_slice(&hz).unwrap(), ctx.from_slice(&hw).unwrap());
        let got = expr!(z.conj().exp() + z.sqrt().ln() - z.inv()).to_vec().unwrap();
        let want: Vec<c64> = hz
            .iter()
            .map(|z| z.conj().exp() + z.sqrt().ln() - z.inv())
            .collect();
        assert_close(&got, &want, 1e-13, &format!("c64 methods, n = {n}"));
        let got = expr!(z.powf(1.5) + z.powc(w) + z.powf(0.0)).to_vec().unwrap();
        let want: Vec<c64> = (0..n)
            .map(|i| hz[i].powf(1.5) + hz[i].powc(hw[i]) + hz[i].powf(0.0))
            .collect();
        assert_close(&got, &want, 1e-13, &format!("c64 powers, n = {n}"));
        let got = expr!(z.norm() + z.arg() * z.norm_sqr() - z.re / z.im)
            .to_vec()
            .unwrap();
        let want: Vec<f64> = hz
            .iter()
            .map(|z| z.norm() + z.arg() * z.norm_sqr() - z.re / z.im)
            .collect();
        assert_close(&got, &want, 1e-15, &format!("c64 reals, n = {n}"));

        let hx: Vec<f32> = random_reals(41 + n as u64, n).iter().map(|&v| v as f32).collect();
        let hy: Vec<f32> = random_reals(42 + n as u64, n).iter().map(|&v| v as f32).collect();
        let (x, y) = (ctx.from_slice(&hx).unwrap(), ctx.from_slice(&hy).unwrap());
        let made = expr!(c32::new(x, y) * Complex32::from_polar(y, x) + Complex::new(y, 1.0))
            .to_vec()
            .unwrap();
        let want: Vec<c32> = (0..n)
            .map(|i| c32::new(hx[i], hy[i]) * c32::from_polar(hy[i], hx[i]) + c32::new(hy[i], 1.0))
            .collect();
        assert_close(&made, &want, 2e-5, &format!("c32 constructors, n = {n}"));
        let hz = random_c32(43 + n as u64, n);
        let z = ctx.from_slice(&hz).unwrap();
        let got = expr!(z.exp().scale(0.5) * c32::I + z.sqrt() / z.conj())
            .to_vec()
            .unwrap();
        let want: Vec<c32> = hz
            .iter()
            .map(|z| z.exp().scale(0.5) * c32::I + z.sqrt() / z.conj())
            .collect();
        assert_close(&got, &want, 2e-5, &format!("c32 methods, n = {n}"));
    }
    // The tests, on edge values.
    let zs = [
        c32::new(1.0, 2.0),
        c32::new(f32::NAN, 0.0),
        c32::new(0.0, f32::INFINITY),
        c32::new(f32::NEG_INFINITY, f32::NAN),
    ];
    let z = ctx.from_slice(&zs).unwrap();
    assert_eq!(expr!(z.is_nan()).to_vec().unwrap(), zs.map(|z| z.is_nan()));
    assert_eq!(expr!(z.is_finite()).to_vec().unwrap(), zs.map(|z| z.is_finite()));
    assert_eq!(
        expr!(z.is_infinite()).to_vec().unwrap(),
        zs.map(|z| z.is_infinite())
    );
    assert_eq!(
        expr!(z.is_nan() || z.re > 0.0).to_vec().unwrap(),
        zs.map(|z| z.is_nan() || z.re > 0.0)
    );
}

#[test]
fn complex_expressions_fuse_with_the_nodes_around_them() {
    let ctx = ctx();
    let (ha, hb) = (random_c64(44, 1001), random_c64(45, 1001));
    let (a, b) = (ctx.from_slice(&ha).unwrap(), ctx.from_slice(&hb).unwrap());
    a.eval().unwrap();
    b.eval().unwrap();
    let before = ctx.stats();
    let p = expr!(a * b);
    let q = &expr!(p.conj() + a) * 2.0;
    let got = q.to_vec().unwrap();
    assert_eq!((ctx.stats() - before).kernels_launched, 1, "one fused kernel");
    let want: Vec<c64> = (0..ha.len())
        .map(|i| ((ha[i] * hb[i]).conj() + ha[i]) * 2.0)
        .collect();
    assert_close(&got, &want, 1e-15, "fused");
}

/// `a * x + y` for the numeric and complex types: one impl generic over `Arithmetic`.
fn axpy<T: lazycl::Arithmetic>(a: T, x: &Array<T>, y: &Array<T>) -> Array<T> {
    expr!(a * x + y)
}

/// A square root scaled, for the float and complex types (`Inexact`).
fn scaled_root<T: lazycl::Inexact>(x: &Array<T>) -> Array<T> {
    expr!(x.sqrt() * 2.0)
}

/// The conjugate doubled, for the complex types (`ComplexFloat`).
fn doubled_conj<T: lazycl::ComplexFloat>(z: &Array<T>) -> Array<T> {
    expr!(z.conj() * 2.0)
}

/// A cast every real type has and no complex one: over `T: Element`, a complex `T`
/// records an error.
fn as_u32<T: lazycl::Element>(x: &Array<T>) -> Array<u32> {
    expr!(x as u32)
}

#[test]
fn generic_functions_take_complex_types() {
    let ctx = ctx();
    let (hx, hy) = (random_c32(46, 7), random_c32(47, 7));
    let (x, y) = (ctx.from_slice(&hx).unwrap(), ctx.from_slice(&hy).unwrap());
    let a = c32::new(0.5, 2.0);
    let want: Vec<c32> = (0..7).map(|i| a * hx[i] + hy[i]).collect();
    assert_close(&axpy(a, &x, &y).to_vec().unwrap(), &want, 2e-6, "axpy c32");
    let r = ctx.from_slice(&[1.0f32, 2.0, 3.0]).unwrap();
    assert_eq!(axpy(2.0, &r, &r).to_vec().unwrap(), [3.0, 6.0, 9.0]);
    let want: Vec<c32> = hx.iter().map(|z| z.sqrt() * 2.0).collect();
    assert_close(&scaled_root(&x).to_vec().unwrap(), &want, 2e-6, "root c32");
    let roots = [2.0f32, 2.0 * 2f32.sqrt(), 2.0 * 3f32.sqrt()];
    assert_close(&scaled_root(&r).to_vec().unwrap(), &roots, 2e-6, "root f32");
    let want: Vec<c32> = hx.iter().map(|z| z.conj() * 2.0).collect();
    assert_close(&doubled_conj(&x).to_vec().unwrap(), &want, 0.0, "conj c32");
    let z64 = ctx.from_slice(&[c64::new(1.0, -2.0)]).unwrap();
    assert_eq!(doubled_conj(&z64).to_vec().unwrap(), [c64::new(2.0, 4.0)]);
    assert_eq!(as_u32(&r).to_vec().unwrap(), [1, 2, 3]);
    let e = as_u32(&x).to_vec().unwrap_err().to_string();
    assert!(e.contains("expr!(x as u32)") && e.contains("(c32)"), "{e}");
}

#[test]
fn gradients_refuse_complex_values() {
    let ctx = ctx();
    let z = ctx.from_slice(&random_c64(48, 5)).unwrap();
    let x = ctx.from_slice(&random_reals(49, 5)).unwrap();
    // Through a complex value: no derivative, an error naming the expression.
    let e = expr!(|z: c64, x: f64| (z * x).re)
        .apply(&z, &x)
        .sum()
        .grad(&[&x])
        .unwrap_err()
        .to_string();
    assert!(e.contains("complex"), "{e}");
    let e = expr!(|z: c64, x: f64| (z * x).norm())
        .apply(&z, &x)
        .sum()
        .grad(&[&x])
        .unwrap_err();
    assert!(e.to_string().contains("no derivative"), "{e}");
    // A real path beside a complex constant: the derivative is there.
    let g = expr!(|z: c64, x: f64| x * z.norm())
        .apply(&z, &x)
        .sum()
        .grad(&[&x])
        .unwrap();
    let want: Vec<f64> = z.to_vec().unwrap().iter().map(|z| z.norm()).collect();
    assert_close(&g[0].to_vec().unwrap(), &want, 1e-15, "d(x |z|)/dx");
}
