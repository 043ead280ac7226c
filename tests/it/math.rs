//! The special functions (`sinh cosh asinh acosh atanh cbrt ln_1p exp_m1 erf erfc lgamma
//! tgamma`) on arrays, in `expr!` and in `#[kernel]`, against the host's `libm` in `f64`
//! on random inputs from each function's domain: shapes 0, 1 and odd, `f32` and `f64`.
//! Tolerances are relative, a little above OpenCL's ulp bounds (16 ulp for `erf`,
//! `lgamma`, `tgamma`).

use crate::common::{ctx, rng};
use lazycl::prelude::*;
use rand::Rng;

/// A function: its name, the domain inputs are drawn from, the host reference, the
/// device function on arrays.
struct Special {
    name: &'static str,
    lo: f64,
    hi: f64,
    host: fn(f64) -> f64,
    on_f32: fn(&Array<f32>) -> Array<f32>,
    on_f64: fn(&Array<f64>) -> Array<f64>,
}

macro_rules! specials {
    ($($name:ident in $lo:expr, $hi:expr => $host:expr;)*) => {
        vec![$(Special {
            name: stringify!($name),
            lo: $lo,
            hi: $hi,
            host: $host,
            on_f32: |a| a.$name(),
            on_f64: |a| a.$name(),
        }),*]
    };
}

fn specials() -> Vec<Special> {
    specials! {
        sinh in -20.0, 20.0 => libm::sinh;
        cosh in -20.0, 20.0 => libm::cosh;
        asinh in -1e3, 1e3 => libm::asinh;
        acosh in 1.0, 1e3 => libm::acosh;
        atanh in -0.999, 0.999 => libm::atanh;
        cbrt in -1e6, 1e6 => libm::cbrt;
        ln_1p in -0.999, 10.0 => libm::log1p;
        exp_m1 in -20.0, 20.0 => libm::expm1;
        erf in -4.0, 4.0 => libm::erf;
        erfc in -4.0, 9.0 => libm::erfc;
        lgamma in 0.05, 30.0 => libm::lgamma;
        tgamma in 0.05, 30.0 => libm::tgamma;
    }
}

fn close(got: f64, want: f64, rel: f64) -> bool {
    got == want || (got - want).abs() <= rel * want.abs().max(1e-30) || (got - want).abs() <= 1e-30
}

#[test]
fn special_functions_on_arrays_match_the_host() {
    let c = ctx();
    let mut r = rng(21);
    for f in specials() {
        for n in [0usize, 1, 7, 1001] {
            let x: Vec<f64> = (0..n).map(|_| r.gen_range(f.lo..f.hi)).collect();
            // Near 0 too, where `ln_1p`, `exp_m1`, `erf` earn their keep.
            let x: Vec<f64> = x
                .iter()
                .enumerate()
                .map(|(i, &v)| if i % 5 == 1 && f.lo < 0.0 { v * 1e-7 } else { v })
                .collect();
            let a64 = c.from_slice(&x).unwrap();
            let got = (f.on_f64)(&a64).to_vec().unwrap();
            for (i, (&g, &v)) in got.iter().zip(&x).enumerate() {
                let want = (f.host)(v);
                assert!(
                    close(g, want, 1e-12),
                    "f64 {}({v}) = {g}, host {want} (element {i} of {n})",
                    f.name
                );
            }
            let x32: Vec<f32> = x.iter().map(|&v| v as f32).collect();
            let a32 = c.from_slice(&x32).unwrap();
            let got = (f.on_f32)(&a32).to_vec().unwrap();
            for (i, (&g, &v)) in got.iter().zip(&x32).enumerate() {
                let want = (f.host)(f64::from(v));
                if want.abs() > f64::from(f32::MAX) {
                    continue;
                }
                assert!(
                    close(f64::from(g), want, 4e-6),
                    "f32 {}({v}) = {g}, host {want} (element {i} of {n})",
                    f.name
                );
            }
        }
    }
}

#[test]
fn special_functions_in_expr_fuse_into_one_kernel() {
    let c = ctx();
    let x = c.from_slice(&[0.25f64, -1.5, 3.0, 0.0]).unwrap();
    let y = c.from_slice(&[2.5f64, 0.5, 7.0, 1.0]).unwrap();
    let before = c.stats();
    let z = expr!(x.erf() * y.lgamma() + x.ln_1p().abs().cbrt() - y.tgamma().exp_m1().ln_1p());
    let got = z.to_vec().unwrap();
    assert_eq!((c.stats() - before).kernels_launched, 1);
    let hx = [0.25f64, -1.5, 3.0, 0.0];
    let hy = [2.5f64, 0.5, 7.0, 1.0];
    for i in 0..4 {
        let (a, b) = (hx[i], hy[i]);
        let want = libm::erf(a) * libm::lgamma(b) + libm::cbrt(libm::log1p(a).abs())
            - libm::log1p(libm::expm1(libm::tgamma(b)));
        // (log1p(-1.5) is NaN, and stays NaN through the rest.)
        if want.is_nan() {
            assert!(got[i].is_nan(), "{i}: {}", got[i]);
        } else {
            assert!(close(got[i], want, 1e-12), "{i}: {} vs {want}", got[i]);
        }
    }
}

#[kernel]
fn specials_kernel(x: &[f32], out: &mut [f32]) {
    let i = global_id(0);
    if i < x.len() {
        let v = x[i];
        out[i] = v.asinh() + v.atanh() * v.erfc() - (v + 2.0).acosh() + v.sinh() * v.cosh();
    }
}

#[test]
fn special_functions_in_a_kernel_match_the_host() {
    let c = ctx();
    let hx: Vec<f32> = (0..257).map(|i| (i as f32 - 128.0) / 130.0).collect();
    let x = c.from_slice(&hx).unwrap();
    let mut out = c.zeros::<f32>([hx.len()]).unwrap();
    specials_kernel::bind(&c)
        .unwrap()
        .global(hx.len())
        .launch(&x, &mut out)
        .unwrap();
    for (i, (&g, &v)) in out.to_vec().unwrap().iter().zip(&hx).enumerate() {
        let v = f64::from(v);
        let want = libm::asinh(v) + libm::atanh(v) * libm::erfc(v) - libm::acosh(v + 2.0)
            + libm::sinh(v) * libm::cosh(v);
        assert!(
            (f64::from(g) - want).abs() <= 1e-5 * (1.0 + want.abs()),
            "{i}: {g} vs {want}"
        );
    }
}
