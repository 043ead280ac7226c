//! Scans (`cumsum`, `cumprod` and their exclusive forms) against host references on
//! random data: every numeric type, every axis, shapes with 0 and 1 and odd sizes, rows
//! short enough for one work-item per row and long enough for many tiles with a
//! look-back; producers fused into the scan's loads.

use crate::common::{ctx, rng, Random};
use lazycl::{Array, Axis, Context, Element, Numeric};
use ndarray::{ArrayD, IxDyn};

/// Host scan of `a` along `axis` by `f` from `identity` (inclusive or exclusive).
fn host_scan<T: Copy>(
    a: &ArrayD<T>,
    axis: usize,
    exclusive: bool,
    identity: T,
    f: impl Fn(T, T) -> T,
) -> ArrayD<T> {
    let mut out = a.clone();
    for mut lane in out.lanes_mut(ndarray::Axis(axis)) {
        let mut acc = identity;
        for x in lane.iter_mut() {
            let v = *x;
            if exclusive {
                *x = acc;
                acc = f(acc, v);
            } else {
                acc = f(acc, v);
                *x = acc;
            }
        }
    }
    out
}

/// Compares a device scan with the host's, exactly for integers; floats within a
/// tolerance scaled by the length scanned and the magnitudes summed.
trait Check: Element + Numeric + Random + PartialEq + std::fmt::Debug {
    fn sum(a: Self, b: Self) -> Self;
    fn mul(a: Self, b: Self) -> Self;
    fn zero() -> Self;
    fn one() -> Self;
    /// Small random values, so that long products stay finite.
    fn small(r: &mut rand::rngs::StdRng, n: usize) -> Vec<Self>;
    fn close(got: &[Self], want: &[Self], scale: &[f64], what: &str);
    fn magnitude(x: Self) -> f64;
}

macro_rules! int_check {
    ($($t:ty),*) => {$(
        impl Check for $t {
            fn sum(a: Self, b: Self) -> Self { a.wrapping_add(b) }
            fn mul(a: Self, b: Self) -> Self { a.wrapping_mul(b) }
            fn zero() -> Self { 0 }
            fn one() -> Self { 1 }
            fn small(r: &mut rand::rngs::StdRng, n: usize) -> Vec<Self> {
                <$t>::random_vec(r, n).into_iter().map(|v| v % 7).collect()
            }
            fn close(got: &[Self], want: &[Self], _: &[f64], what: &str) {
                assert_eq!(got, want, "{what}");
            }
            fn magnitude(_: Self) -> f64 { 0.0 }
        }
    )*};
}
int_check!(i32, u32, i64, u64);

macro_rules! float_check {
    ($($t:ty),*) => {$(
        impl Check for $t {
            fn sum(a: Self, b: Self) -> Self { a + b }
            fn mul(a: Self, b: Self) -> Self { a * b }
            fn zero() -> Self { 0.0 }
            fn one() -> Self { 1.0 }
            fn small(r: &mut rand::rngs::StdRng, n: usize) -> Vec<Self> {
                <$t>::random_vec(r, n).into_iter().map(|v| 1.0 + v / 2000.0).collect()
            }
            fn close(got: &[Self], want: &[Self], scale: &[f64], what: &str) {
                assert_eq!(got.len(), want.len(), "{what}");
                for (i, (g, w)) in got.iter().zip(want).enumerate() {
                    let tol = 4.0 * <$t>::EPSILON as f64 * scale[i] + 1e-30;
                    assert!(((*g as f64) - (*w as f64)).abs() <= tol, "{what}: element {i}: {g} vs {w} (tolerance {tol})");
                }
            }
            fn magnitude(x: Self) -> f64 { (x as f64).abs() }
        }
    )*};
}
float_check!(f32, f64);

/// The tolerance scale of a float scan: the length scanned so far times the running sum
/// of magnitudes (for a product, of the running products).
fn scales<T: Check>(want: &ArrayD<T>, a: &ArrayD<T>, axis: usize) -> Vec<f64> {
    let len = a.shape()[axis] as f64;
    let mags = host_scan(&a.mapv(|x| T::magnitude(x)), axis, false, 0.0, |p, q| p + q);
    mags.iter()
        .zip(want.iter())
        .map(|(m, w)| len * (m + T::magnitude(*w)))
        .collect()
}

fn check_scans<T: Check>(c: &Context, shape: &[usize], seed: u64) {
    let n: usize = shape.iter().product();
    let mut r = rng(seed);
    let sums = ArrayD::from_shape_vec(IxDyn(shape), T::random_vec(&mut r, n)).unwrap();
    let prods = ArrayD::from_shape_vec(IxDyn(shape), T::small(&mut r, n)).unwrap();
    let a = c.array(&sums).unwrap();
    let p = c.array(&prods).unwrap();
    for axis in 0..shape.len() {
        for exclusive in [false, true] {
            let what = format!(
                "{} {shape:?} axis {axis} exclusive {exclusive}",
                std::any::type_name::<T>()
            );
            let want = host_scan(&sums, axis, exclusive, T::zero(), T::sum);
            let got = match exclusive {
                false => a.cumsum(Axis(axis)).cast::<T>(),
                true => a.cumsum_exclusive(Axis(axis)).cast::<T>(),
            };
            let got = got.to_ndarray().unwrap();
            assert_eq!(got.shape(), shape, "{what}");
            T::close(
                got.as_slice().unwrap(),
                want.as_slice().unwrap(),
                &scales(&want, &sums, axis),
                &format!("cumsum {what}"),
            );
            let want = host_scan(&prods, axis, exclusive, T::one(), T::mul);
            let got = match exclusive {
                false => p.cumprod(Axis(axis)).cast::<T>(),
                true => p.cumprod_exclusive(Axis(axis)).cast::<T>(),
            };
            let got = got.to_ndarray().unwrap();
            T::close(
                got.as_slice().unwrap(),
                want.as_slice().unwrap(),
                &scales(&want, &prods, axis),
                &format!("cumprod {what}"),
            );
        }
    }
}

/// Shapes for one work-item per row (short rows, inner axes) and for tiles: a row of
/// 10,007 elements spans three tiles of f32 (4,096 each) and several more of f64.
const SHAPES: &[&[usize]] = &[
    &[0],
    &[1],
    &[7],
    &[3, 0, 2],
    &[5, 1, 3],
    &[17, 33],
    &[2, 10_007],
    &[3, 300, 2],
];

#[test]
fn cumsum_and_cumprod_match_the_host_for_every_type_axis_and_shape() {
    let c = ctx();
    for (i, shape) in SHAPES.iter().enumerate() {
        let seed = 100 + i as u64;
        check_scans::<f32>(&c, shape, seed);
        check_scans::<i32>(&c, shape, seed);
        check_scans::<u64>(&c, shape, seed);
    }
}

#[test]
fn cumsum_of_other_types_matches_the_host() {
    let c = ctx();
    for (i, shape) in [&[1usize][..], &[4, 9], &[1, 9_000]].iter().enumerate() {
        check_scans::<f64>(&c, shape, 200 + i as u64);
        check_scans::<u32>(&c, shape, 200 + i as u64);
        check_scans::<i64>(&c, shape, 200 + i as u64);
    }
}

/// A lazy operand is computed in the scan's loads: one kernel, no array of the operand;
/// an elementwise consumer of the scan reads it (a second kernel).
#[test]
fn a_scan_of_a_lazy_expression_reads_its_inputs_once() {
    let c = ctx();
    for n in [50usize, 5_000] {
        let mut r = rng(7);
        let hx = f32::random_vec(&mut r, n);
        let hy = f32::random_vec(&mut r, n);
        let x = c.from_slice(&hx).unwrap();
        let y = c.from_slice(&hy).unwrap();
        let scan = (&x * 2.0 - &y).cumsum(0);
        scan.eval().unwrap();
        let before = c.stats();
        let scan = (&x * 2.0 - &y).cumsum(0);
        scan.eval().unwrap();
        let d = c.stats() - before;
        assert_eq!(d.kernels_launched, 1, "{d}");
        // The output, and the tiles' status, totals and prefixes: never the operand.
        assert_eq!(d.buffers_allocated + d.buffers_reused, 4, "{d}");
        let got = scan.to_vec().unwrap();
        let mut acc = 0.0f64;
        for (i, g) in got.iter().enumerate() {
            acc += 2.0 * hx[i] as f64 - hy[i] as f64;
            assert!(
                (*g as f64 - acc).abs() <= 1e-3 * (1.0 + i as f64),
                "{i}: {g} vs {acc}"
            );
        }
        let plan = (&x * 2.0 - &y).cumsum(0).explain().unwrap();
        assert!(plan.contains("Sum scan of 1 rows of"), "{plan}");
        let doubled = (&scan * 0.5).to_vec().unwrap();
        assert_eq!(doubled[n - 1], got[n - 1] * 0.5);
    }
}

#[test]
fn a_scan_along_a_bad_axis_is_an_error_naming_it() {
    let c = ctx();
    let a: Array<f32> = c.zeros([2, 3]).unwrap();
    let e = a.cumsum(Axis(2)).to_vec().unwrap_err().to_string();
    assert!(
        e.contains("cumsum") && e.contains("axis 2") && e.contains("[2, 3]"),
        "{e}"
    );
    let s = c.scalar(1.0f32).unwrap();
    let e = s.cumprod(0).to_vec().unwrap_err().to_string();
    assert!(e.contains("cumprod") && e.contains("axis 0"), "{e}");
}

/// `want` and `got` within a tolerance scaled by the running magnitude.
fn close_f64(got: &[f64], want: &[f64], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= 1e-9 * (1.0 + w.abs() + i as f64),
            "{what} {i}: {g} vs {w}"
        );
    }
}

#[test]
fn elementwise_consumers_of_a_scan_run_in_its_store() {
    let c = ctx();
    let mut r = rng(9);
    // Rows spanning tiles (a look-back), rows sharing tiles, and columns (serial).
    for (shape, axis) in [
        (vec![20_000usize], 0usize),
        (vec![37, 300], 1),
        (vec![300, 37], 0),
    ] {
        let n: usize = shape.iter().product();
        let hx = f64::random_vec(&mut r, n);
        let hy = f64::random_vec(&mut r, n);
        let x = c.from_shape_slice(shape.clone(), &hx).unwrap();
        let y = c.from_shape_slice(shape.clone(), &hy).unwrap();
        let host = ArrayD::from_shape_vec(IxDyn(&shape), hx.clone()).unwrap();
        let scanned = host_scan(&host, axis, false, 0.0, |a, b| a + b);
        let yy = ArrayD::from_shape_vec(IxDyn(&shape), hy.clone()).unwrap();
        let want: Vec<f64> = (&scanned * 2.0 - &yy).iter().copied().collect();
        let what = format!("{shape:?} axis {axis}");
        // Warm the programs, then count.
        (x.cumsum(Axis(axis)) * 2.0 - &y).eval().unwrap();
        let before = c.stats();
        let z = x.cumsum(Axis(axis)) * 2.0 - &y;
        z.eval().unwrap();
        let d = c.stats() - before;
        assert_eq!(
            d.kernels_launched, 1,
            "{what}: one kernel, the scan never stored: {d}"
        );
        let plan = (x.cumsum(Axis(axis)) * 2.0 - &y).explain().unwrap();
        assert!(plan.contains("its consumers computed in its store"), "{plan}");
        assert!(plan.contains("1 outputs"), "{plan}");
        close_f64(&z.to_vec().unwrap(), &want, &what);
        // The scan itself wanted too: stored by the same kernel.
        let s = x.cumsum(Axis(axis));
        let z = &s * 2.0 - &y;
        let before = c.stats();
        lazycl::eval(&(&s, &z)).unwrap();
        let d = c.stats() - before;
        assert_eq!(d.kernels_launched, 1, "{what}: {d}");
        close_f64(&z.to_vec().unwrap(), &want, &what);
        close_f64(
            &s.to_vec().unwrap(),
            scanned.as_standard_layout().as_slice().unwrap(),
            &what,
        );
        // A consumer of another type, and one through a view (which cannot join).
        let as_i = x.cumsum(Axis(axis)).lt(0.0).cast::<i32>().sum().item().unwrap();
        let negative = scanned.iter().filter(|v| **v < 0.0).count() as i32;
        assert_eq!(as_i, negative, "{what}");
        let flipped = x.cumsum(Axis(axis)).flip(Axis(axis)) + 1.0;
        let mut want_flip = scanned.clone();
        want_flip.invert_axis(ndarray::Axis(axis));
        let want_flip: Vec<f64> = want_flip.iter().map(|v| v + 1.0).collect();
        close_f64(&flipped.to_vec().unwrap(), &want_flip, &format!("{what} flipped"));
    }
}
