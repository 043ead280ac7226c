//! Complex numbers in `#[kernel]`s, continued: the constructors, the parts `re` and
//! `im`, every method, the tests (`is_nan`, `is_finite`, `is_infinite`) and equality,
//! complex scalar arguments and a `#[device_fn]` of complex values, against `num_complex`
//! on the host.

use lazycl::prelude::*;

use crate::common::ctx;
use crate::kernel_complex::{assert_close, random_c32, random_c64, random_reals, SIZES};

/// Constructors, parts and every method, in `c32`.
#[kernel]
fn methods32(a: &[c32], w: &[c32], t: &[f32], out: &mut [c32], real: &mut [f32]) {
    let i = global_id(0);
    if i < a.len() {
        let z = a[i];
        let o = i * 13;
        out[o] = z.conj();
        out[o + 1] = z.exp();
        out[o + 2] = z.ln();
        out[o + 3] = z.sqrt();
        out[o + 4] = z.powf(t[i]);
        out[o + 5] = z.powc(w[i]);
        out[o + 6] = z.inv();
        out[o + 7] = z.scale(t[i]);
        out[o + 8] = z.unscale(t[i]);
        out[o + 9] = Complex32::from_polar(t[i], z.im);
        out[o + 10] = c32::new(z.im, t[i]);
        out[o + 11] = Complex::new(t[i], z.re) + c32::I;
        out[o + 12] = z.powf(0.0) + Complex32::from(t[i]);
        let r = i * 5;
        real[r] = z.norm();
        real[r + 1] = z.norm_sqr();
        real[r + 2] = z.arg();
        real[r + 3] = z.re;
        real[r + 4] = z.im + w[i].re;
    }
}

/// [`methods32`] in `c64`.
#[kernel]
fn methods64(a: &[c64], w: &[c64], t: &[f64], out: &mut [c64], real: &mut [f64]) {
    let i = global_id(0);
    if i < a.len() {
        let z = a[i];
        let o = i * 13;
        out[o] = z.conj();
        out[o + 1] = z.exp();
        out[o + 2] = z.ln();
        out[o + 3] = z.sqrt();
        out[o + 4] = z.powf(t[i]);
        out[o + 5] = z.powc(w[i]);
        out[o + 6] = z.inv();
        out[o + 7] = z.scale(t[i]);
        out[o + 8] = z.unscale(t[i]);
        out[o + 9] = Complex64::from_polar(t[i], z.im);
        out[o + 10] = c64::new(z.im, t[i]);
        out[o + 11] = Complex::new(t[i], z.re) + c64::I;
        out[o + 12] = z.powf(0.0) + Complex64::from(t[i]);
        let r = i * 5;
        real[r] = z.norm();
        real[r + 1] = z.norm_sqr();
        real[r + 2] = z.arg();
        real[r + 3] = z.re;
        real[r + 4] = z.im + w[i].re;
    }
}

/// The host's results of [`methods32`] for one element: the complex ones and the reals.
macro_rules! host_methods {
    ($c:ty, $z:expr, $w:expr, $t:expr) => {{
        let (z, w, t) = ($z, $w, $t);
        let complex = [
            z.conj(),
            z.exp(),
            z.ln(),
            z.sqrt(),
            z.powf(t),
            z.powc(w),
            z.inv(),
            z.scale(t),
            z.unscale(t),
            <$c>::from_polar(t, z.im),
            <$c>::new(z.im, t),
            <$c>::new(t, z.re) + <$c>::I,
            z.powf(0.0) + <$c>::from(t),
        ];
        let real = [z.norm(), z.norm_sqr(), z.arg(), z.re, z.im + w.re];
        (complex, real)
    }};
}

#[test]
fn constructors_parts_and_methods_match_num_complex() {
    let ctx = ctx();
    let (k32, k64) = (methods32::bind(&ctx).unwrap(), methods64::bind(&ctx).unwrap());
    for n in SIZES {
        let (a, w) = (random_c32(7 + n as u64, n), random_c32(8 + n as u64, n));
        let t: Vec<f32> = random_reals(9 + n as u64, n).iter().map(|&v| v as f32).collect();
        let (mut out, mut real) = (
            ctx.zeros::<c32>([13 * n]).unwrap(),
            ctx.zeros::<f32>([5 * n]).unwrap(),
        );
        let (da, dw, dt) = (
            ctx.from_slice(&a).unwrap(),
            ctx.from_slice(&w).unwrap(),
            ctx.from_slice(&t).unwrap(),
        );
        k32.global([n])
            .launch(&da, &dw, &dt, &mut out, &mut real)
            .unwrap();
        let (want, want_real): (Vec<[c32; 13]>, Vec<[f32; 5]>) =
            (0..n).map(|i| host_methods!(c32, a[i], w[i], t[i])).unzip();
        let want: Vec<c32> = want.concat();
        // (OpenCL's `float` `exp`, `log`, `pow`, `sin`, ... are within a few ulp.)
        assert_close(
            &out.to_vec().unwrap(),
            &want,
            2e-5,
            &format!("c32 methods, n = {n}"),
        );
        assert_close(
            &real.to_vec().unwrap(),
            &want_real.concat(),
            2e-6,
            &format!("c32 parts, n = {n}"),
        );

        let (a, w) = (random_c64(10 + n as u64, n), random_c64(11 + n as u64, n));
        let t = random_reals(12 + n as u64, n);
        let (mut out, mut real) = (
            ctx.zeros::<c64>([13 * n]).unwrap(),
            ctx.zeros::<f64>([5 * n]).unwrap(),
        );
        let (da, dw, dt) = (
            ctx.from_slice(&a).unwrap(),
            ctx.from_slice(&w).unwrap(),
            ctx.from_slice(&t).unwrap(),
        );
        k64.global([n])
            .launch(&da, &dw, &dt, &mut out, &mut real)
            .unwrap();
        let (want, want_real): (Vec<[c64; 13]>, Vec<[f64; 5]>) =
            (0..n).map(|i| host_methods!(c64, a[i], w[i], t[i])).unzip();
        assert_close(
            &out.to_vec().unwrap(),
            &want.concat(),
            1e-13,
            &format!("c64 methods, n = {n}"),
        );
        assert_close(
            &real.to_vec().unwrap(),
            &want_real.concat(),
            1e-15,
            &format!("c64 parts, n = {n}"),
        );
    }
}

/// `is_nan`, `is_finite`, `is_infinite`, `==` and `!=`, as bits of a flag word.
#[kernel]
fn tests64(a: &[c64], b: &[c64], flags: &mut [u32]) {
    let i = global_id(0);
    if i < a.len() {
        let z = a[i];
        flags[i] = z.is_nan() as u32
            | (z.is_finite() as u32) << 1
            | (z.is_infinite() as u32) << 2
            | ((z == b[i]) as u32) << 3
            | ((z != b[i]) as u32) << 4;
    }
}

/// [`tests64`] in `c32`.
#[kernel]
fn tests32(a: &[c32], b: &[c32], flags: &mut [u32]) {
    let i = global_id(0);
    if i < a.len() {
        let z = a[i];
        flags[i] = z.is_nan() as u32
            | (z.is_finite() as u32) << 1
            | (z.is_infinite() as u32) << 2
            | ((z == b[i]) as u32) << 3
            | ((z != b[i]) as u32) << 4;
    }
}

/// The host's flag word of [`tests64`] for `z` and `w`.
macro_rules! host_flags {
    ($z:expr, $w:expr) => {{
        let (z, w) = ($z, $w);
        u32::from(z.is_nan())
            | u32::from(z.is_finite()) << 1
            | u32::from(z.is_infinite()) << 2
            | u32::from(z == w) << 3
            | u32::from(z != w) << 4
    }};
}

#[test]
fn tests_and_equality_match_num_complex() {
    let ctx = ctx();
    let specials = [0.0, -0.0, 1.5, f64::INFINITY, f64::NEG_INFINITY, f64::NAN];
    let zs: Vec<c64> = specials
        .iter()
        .flat_map(|&re| specials.map(|im| c64::new(re, im)))
        .collect();
    // Every pair: equal ones (`0 == -0`), unequal ones, NaN (never equal).
    let (a, b): (Vec<c64>, Vec<c64>) = zs.iter().flat_map(|&x| zs.iter().map(move |&y| (x, y))).unzip();
    let n = a.len();
    let mut flags = ctx.zeros::<u32>([n]).unwrap();
    let (da, db) = (ctx.from_slice(&a).unwrap(), ctx.from_slice(&b).unwrap());
    tests64::bind(&ctx)
        .unwrap()
        .global([n])
        .launch(&da, &db, &mut flags)
        .unwrap();
    let want: Vec<u32> = (0..n).map(|i| host_flags!(a[i], b[i])).collect();
    assert_eq!(flags.to_vec().unwrap(), want, "c64");
    assert!(want.iter().any(|f| f & 8 != 0) && want.iter().any(|f| f & 16 != 0));
    let narrow = |v: &[c64]| -> Vec<c32> { v.iter().map(|z| c32::new(z.re as f32, z.im as f32)).collect() };
    let (a, b) = (narrow(&a), narrow(&b));
    let mut flags = ctx.zeros::<u32>([n]).unwrap();
    let (da, db) = (ctx.from_slice(&a).unwrap(), ctx.from_slice(&b).unwrap());
    tests32::bind(&ctx)
        .unwrap()
        .global([n])
        .launch(&da, &db, &mut flags)
        .unwrap();
    let want: Vec<u32> = (0..n).map(|i| host_flags!(a[i], b[i])).collect();
    assert_eq!(flags.to_vec().unwrap(), want, "c32");
}

/// `s * a + t` with complex scalar arguments, passed by value.
#[kernel]
fn affine32(s: c32, t: Complex32, a: &[c32], out: &mut [c32]) {
    let i = global_id(0);
    if i < a.len() {
        out[i] = s * a[i] + t;
    }
}

/// [`affine32`] in `c64` (16-byte arguments).
#[kernel]
fn affine64(s: c64, t: Complex64, a: &[c64], out: &mut [c64]) {
    let i = global_id(0);
    if i < a.len() {
        out[i] = s * a[i] + t;
    }
}

/// A complex number turned by an angle: a device function of complex values.
#[device_fn]
fn rotated(z: c64, angle: f64) -> c64 {
    z * Complex64::from_polar(1.0, angle)
}

/// [`rotated`] of each element, and its magnitude.
#[kernel]
fn rotate64(angle: f64, a: &[c64], out: &mut [c64], norms: &mut [f64]) {
    let i = global_id(0);
    if i < a.len() {
        out[i] = rotated(a[i], angle);
        norms[i] = out[i].norm();
    }
}

#[test]
fn complex_scalar_arguments_and_device_functions() {
    let ctx = ctx();
    let (k32, k64, rot) = (
        affine32::bind(&ctx).unwrap(),
        affine64::bind(&ctx).unwrap(),
        rotate64::bind(&ctx).unwrap(),
    );
    for n in SIZES {
        let a = random_c32(21 + n as u64, n);
        let da = ctx.from_slice(&a).unwrap();
        let mut out = ctx.zeros::<c32>([n]).unwrap();
        // New values build nothing new: they are arguments.
        for (s, t) in [
            (c32::new(0.5, -2.0), c32::new(1.0, 3.0)),
            (c32::new(-1.5, 0.25), c32::new(0.0, -1.0)),
        ] {
            k32.global([n]).launch(s, t, &da, &mut out).unwrap();
            let want: Vec<c32> = a.iter().map(|z| s * z + t).collect();
            assert_close(
                &out.to_vec().unwrap(),
                &want,
                2e-6,
                &format!("c32 s * a + t, n = {n}"),
            );
        }
        let a = random_c64(22 + n as u64, n);
        let da = ctx.from_slice(&a).unwrap();
        let mut out = ctx.zeros::<c64>([n]).unwrap();
        let (s, t) = (c64::new(0.3, -1.7), c64::new(-2.5, 0.125));
        k64.global([n]).launch(s, t, &da, &mut out).unwrap();
        let want: Vec<c64> = a.iter().map(|z| s * z + t).collect();
        assert_close(
            &out.to_vec().unwrap(),
            &want,
            1e-15,
            &format!("c64 s * a + t, n = {n}"),
        );
        let (mut out, mut norms) = (ctx.zeros::<c64>([n]).unwrap(), ctx.zeros::<f64>([n]).unwrap());
        rot.global([n]).launch(0.75, &da, &mut out, &mut norms).unwrap();
        let want: Vec<c64> = a.iter().map(|z| z * c64::from_polar(1.0, 0.75)).collect();
        assert_close(&out.to_vec().unwrap(), &want, 1e-15, &format!("rotated, n = {n}"));
        let want: Vec<f64> = want.iter().map(|z| z.norm()).collect();
        assert_close(
            &norms.to_vec().unwrap(),
            &want,
            1e-15,
            &format!("rotated norms, n = {n}"),
        );
    }
}
