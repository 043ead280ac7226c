//! Complex numbers (`c32`, `c64`: `num_complex::Complex32`/`Complex64`) in `#[kernel]`s,
//! against `num_complex` on the host, on random data of several lengths: the operators of
//! two complex numbers and of a complex number with a real of its parts' type, and
//! compound assignments; the helpers the other complex tests share. (Constructors,
//! parts, methods, complex scalar arguments and device functions are
//! `kernel_complex_methods`; `expr!` with complex operands is `expr_complex`.)

use lazycl::prelude::*;
use rand::distributions::{Distribution, Uniform};

use crate::common::{ctx, rng};

/// The sizes every test runs: empty, one, odd, larger than a work-group.
pub const SIZES: [usize; 4] = [0, 1, 7, 1001];

/// Random reals with magnitudes in `[0.25, 3]`, either sign: never zero, never a tiny
/// divisor.
pub fn random_reals(seed: u64, n: usize) -> Vec<f64> {
    let mut r = rng(seed);
    let (m, s) = (Uniform::new(0.25f64, 3.0), Uniform::new(0u8, 2));
    (0..n)
        .map(|_| m.sample(&mut r) * if s.sample(&mut r) == 0 { -1.0 } else { 1.0 })
        .collect()
}

/// Random `c64`s, each part as [`random_reals`].
pub fn random_c64(seed: u64, n: usize) -> Vec<c64> {
    let (re, im) = (random_reals(seed, n), random_reals(seed ^ 0x5eed, n));
    re.into_iter().zip(im).map(|(a, b)| c64::new(a, b)).collect()
}

/// Random `c32`s, each part as [`random_reals`].
pub fn random_c32(seed: u64, n: usize) -> Vec<c32> {
    random_c64(seed, n)
        .into_iter()
        .map(|z| c32::new(z.re as f32, z.im as f32))
        .collect()
}

/// A complex result as a `c64`.
pub trait Wide: Copy + std::fmt::Debug {
    fn wide(self) -> c64;
}
impl Wide for c32 {
    fn wide(self) -> c64 {
        c64::new(self.re as f64, self.im as f64)
    }
}
impl Wide for c64 {
    fn wide(self) -> c64 {
        self
    }
}
impl Wide for f32 {
    fn wide(self) -> c64 {
        c64::new(self as f64, 0.0)
    }
}
impl Wide for f64 {
    fn wide(self) -> c64 {
        c64::new(self, 0.0)
    }
}

/// Whether `got` is `want` within `tol` of the larger of `|want|` and 1 (a rounding of
/// either part is relative to the whole number); where `want` is not finite, each part
/// the same infinity or NaN, or a finite part within `tol`.
fn close(got: c64, want: c64, tol: f64) -> bool {
    if want.is_finite() && got.is_finite() {
        return (got - want).norm() <= tol * want.norm().max(1.0);
    }
    let part = |g: f64, w: f64| match (g.is_finite(), w.is_finite()) {
        (true, true) => (g - w).abs() <= tol * w.abs().max(1.0),
        _ => (g.is_nan() && w.is_nan()) || g == w,
    };
    part(got.re, want.re) && part(got.im, want.im)
}

/// Each of `got` is its `want` (see [`close`]).
pub fn assert_close<G: Wide, W: Wide>(got: &[G], want: &[W], tol: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let (g, w) = (g.wide(), w.wide());
        assert!(close(g, w, tol), "{what}[{i}]: got {g:?}, want {w:?}");
    }
}

/// Every operator of two complex numbers and of a complex number with a real, sixteen
/// results per element.
#[kernel]
fn operators32(a: &[c32], b: &[c32], x: &[f32], out: &mut [c32]) {
    let i = global_id(0);
    if i < a.len() {
        let (p, q, r) = (a[i], b[i], x[i]);
        let o = i * 16;
        out[o] = p + q;
        out[o + 1] = p - q;
        out[o + 2] = p * q;
        out[o + 3] = p / q;
        out[o + 4] = -p;
        out[o + 5] = p * r;
        out[o + 6] = r * p;
        out[o + 7] = p + r;
        out[o + 8] = r + p;
        out[o + 9] = p - r;
        out[o + 10] = r - p;
        out[o + 11] = p / r;
        out[o + 12] = r / p;
        out[o + 13] = p * 2.0;
        out[o + 14] = p / 4.0 + 0.5;
        out[o + 15] = 1.5 - p;
    }
}

/// [`operators32`] in `c64`, the types spelled as `num-complex` does.
#[kernel]
fn operators64(a: &[Complex64], b: &[Complex<f64>], x: &[f64], out: &mut [num_complex::Complex64]) {
    let i = global_id(0);
    if i < a.len() {
        let (p, q, r) = (a[i], b[i], x[i]);
        let o = i * 16;
        out[o] = p + q;
        out[o + 1] = p - q;
        out[o + 2] = p * q;
        out[o + 3] = p / q;
        out[o + 4] = -p;
        out[o + 5] = p * r;
        out[o + 6] = r * p;
        out[o + 7] = p + r;
        out[o + 8] = r + p;
        out[o + 9] = p - r;
        out[o + 10] = r - p;
        out[o + 11] = p / r;
        out[o + 12] = r / p;
        out[o + 13] = p * 2.0;
        out[o + 14] = p / 4.0 + 0.5;
        out[o + 15] = 1.5 - p;
    }
}

/// The host's sixteen results of [`operators32`] for one element.
macro_rules! host_operators {
    ($p:expr, $q:expr, $r:expr) => {{
        let (p, q, r) = ($p, $q, $r);
        [
            p + q,
            p - q,
            p * q,
            p / q,
            -p,
            p * r,
            r * p,
            p + r,
            r + p,
            p - r,
            r - p,
            p / r,
            r / p,
            p * 2.0,
            p / 4.0 + 0.5,
            1.5 - p,
        ]
    }};
}

#[test]
fn operators_match_num_complex() {
    let ctx = ctx();
    let (k32, k64) = (operators32::bind(&ctx).unwrap(), operators64::bind(&ctx).unwrap());
    for n in SIZES {
        let (a, b) = (random_c32(1 + n as u64, n), random_c32(2 + n as u64, n));
        let x: Vec<f32> = random_reals(3 + n as u64, n).iter().map(|&v| v as f32).collect();
        let mut out = ctx.zeros::<c32>([16 * n]).unwrap();
        let (da, db, dx) = (
            ctx.from_slice(&a).unwrap(),
            ctx.from_slice(&b).unwrap(),
            ctx.from_slice(&x).unwrap(),
        );
        k32.global([n]).launch(&da, &db, &dx, &mut out).unwrap();
        let want: Vec<c32> = (0..n).flat_map(|i| host_operators!(a[i], b[i], x[i])).collect();
        assert_close(
            &out.to_vec().unwrap(),
            &want,
            2e-6,
            &format!("c32 operators, n = {n}"),
        );

        let (a, b) = (random_c64(4 + n as u64, n), random_c64(5 + n as u64, n));
        let x = random_reals(6 + n as u64, n);
        let mut out = ctx.zeros::<c64>([16 * n]).unwrap();
        let (da, db, dx) = (
            ctx.from_slice(&a).unwrap(),
            ctx.from_slice(&b).unwrap(),
            ctx.from_slice(&x).unwrap(),
        );
        k64.global([n]).launch(&da, &db, &dx, &mut out).unwrap();
        let want: Vec<c64> = (0..n).flat_map(|i| host_operators!(a[i], b[i], x[i])).collect();
        assert_close(
            &out.to_vec().unwrap(),
            &want,
            1e-15,
            &format!("c64 operators, n = {n}"),
        );
    }
}

/// A real beside a complex number changes only what `num-complex` changes: infinities
/// and zeros in the other part stay (no `inf * 0` NaN), and `x - z` of a zero imaginary
/// part is `+0`.
#[test]
fn reals_beside_complex_numbers_keep_their_edge_values_exactly() {
    let ctx = ctx();
    let k = operators64::bind(&ctx).unwrap();
    let specials = [0.0, -0.0, 1.0, -2.5, f64::INFINITY, f64::NEG_INFINITY];
    let a: Vec<c64> = specials
        .iter()
        .flat_map(|&re| specials.map(|im| c64::new(re, im)))
        .collect();
    let n = a.len();
    let b = vec![c64::new(1.0, 0.5); n];
    let x: Vec<f64> = (0..n).map(|i| [2.0, -0.5, 3.0][i % 3]).collect();
    let mut out = ctx.zeros::<c64>([16 * n]).unwrap();
    let (da, db, dx) = (
        ctx.from_slice(&a).unwrap(),
        ctx.from_slice(&b).unwrap(),
        ctx.from_slice(&x).unwrap(),
    );
    k.global([n]).launch(&da, &db, &dx, &mut out).unwrap();
    let got = out.to_vec().unwrap();
    let same = |g: f64, w: f64| (g.is_nan() && w.is_nan()) || g.to_bits() == w.to_bits();
    for i in 0..n {
        let want = host_operators!(a[i], b[i], x[i]);
        // The operations with a real operand: `p * r` to `r - p`, and `p * 2.0`.
        for o in [5, 6, 7, 8, 9, 10, 13] {
            let (g, w) = (got[i * 16 + o], want[o]);
            assert!(
                same(g.re, w.re) && same(g.im, w.im),
                "operation {o} of {:?} and {}: got {g:?}, want {w:?}",
                a[i],
                x[i]
            );
        }
    }
}

/// Compound assignments to a complex variable, a part of one, and a slice element.
#[kernel]
fn compound32(a: &[c32], b: &[c32], x: &[f32], out: &mut [c32], acc: &mut [c32]) {
    let i = global_id(0);
    if i < a.len() {
        let mut z = a[i];
        z += b[i];
        z -= x[i];
        z *= b[i];
        z *= 2.0;
        z /= b[i];
        z /= x[i];
        z += 1.0;
        z -= c32::new(0.5, 0.25);
        z.re += x[i];
        z.im = z.im * 0.5;
        out[i] = z;
        acc[i] *= a[i];
        acc[i] += x[i];
        acc[i] /= b[i];
        acc[i] -= 2.0;
    }
}

/// [`compound32`] in `c64`.
#[kernel]
fn compound64(a: &[c64], b: &[c64], x: &[f64], out: &mut [c64], acc: &mut [c64]) {
    let i = global_id(0);
    if i < a.len() {
        let mut z = a[i];
        z += b[i];
        z -= x[i];
        z *= b[i];
        z *= 2.0;
        z /= b[i];
        z /= x[i];
        z += 1.0;
        z -= c64::new(0.5, 0.25);
        z.re += x[i];
        z.im = z.im * 0.5;
        out[i] = z;
        acc[i] *= a[i];
        acc[i] += x[i];
        acc[i] /= b[i];
        acc[i] -= 2.0;
    }
}

/// The host's `(out, acc)` of [`compound32`] for one element, `acc` starting at `c`.
macro_rules! host_compound {
    ($c:ty, $a:expr, $b:expr, $x:expr, $acc:expr) => {{
        let (a, b, x) = ($a, $b, $x);
        let mut z = a;
        z += b;
        z -= x;
        z *= b;
        z *= 2.0;
        z /= b;
        z /= x;
        z += 1.0;
        z -= <$c>::new(0.5, 0.25);
        z.re += x;
        z.im *= 0.5;
        let mut acc = $acc;
        acc *= a;
        acc += x;
        acc /= b;
        acc -= 2.0;
        (z, acc)
    }};
}

#[test]
fn compound_assignments_match_num_complex() {
    let ctx = ctx();
    let (k32, k64) = (compound32::bind(&ctx).unwrap(), compound64::bind(&ctx).unwrap());
    for n in SIZES {
        let (a, b, c) = (
            random_c32(13 + n as u64, n),
            random_c32(14 + n as u64, n),
            random_c32(15 + n as u64, n),
        );
        let x: Vec<f32> = random_reals(16 + n as u64, n).iter().map(|&v| v as f32).collect();
        let (mut out, mut acc) = (ctx.zeros::<c32>([n]).unwrap(), ctx.from_slice(&c).unwrap());
        let (da, db, dx) = (
            ctx.from_slice(&a).unwrap(),
            ctx.from_slice(&b).unwrap(),
            ctx.from_slice(&x).unwrap(),
        );
        k32.global([n]).launch(&da, &db, &dx, &mut out, &mut acc).unwrap();
        let (want, want_acc): (Vec<c32>, Vec<c32>) = (0..n)
            .map(|i| host_compound!(c32, a[i], b[i], x[i], c[i]))
            .unzip();
        assert_close(
            &out.to_vec().unwrap(),
            &want,
            2e-6,
            &format!("c32 z op= .., n = {n}"),
        );
        assert_close(
            &acc.to_vec().unwrap(),
            &want_acc,
            2e-6,
            &format!("c32 a[i] op= .., n = {n}"),
        );

        let (a, b, c) = (
            random_c64(17 + n as u64, n),
            random_c64(18 + n as u64, n),
            random_c64(19 + n as u64, n),
        );
        let x = random_reals(20 + n as u64, n);
        let (mut out, mut acc) = (ctx.zeros::<c64>([n]).unwrap(), ctx.from_slice(&c).unwrap());
        let (da, db, dx) = (
            ctx.from_slice(&a).unwrap(),
            ctx.from_slice(&b).unwrap(),
            ctx.from_slice(&x).unwrap(),
        );
        k64.global([n]).launch(&da, &db, &dx, &mut out, &mut acc).unwrap();
        let (want, want_acc): (Vec<c64>, Vec<c64>) = (0..n)
            .map(|i| host_compound!(c64, a[i], b[i], x[i], c[i]))
            .unzip();
        assert_close(
            &out.to_vec().unwrap(),
            &want,
            1e-15,
            &format!("c64 z op= .., n = {n}"),
        );
        assert_close(
            &acc.to_vec().unwrap(),
            &want_acc,
            1e-15,
            &format!("c64 a[i] op= .., n = {n}"),
        );
    }
}
