//! Property test of views: random chains of slicing (steps of either sign, indices,
//! new axes), transposes, permutations, swaps, flips, inserted and removed axes,
//! squeezes, broadcasts, concatenations, stacks, pads and tiles, mixed with elementwise
//! operations, reductions, regions set in place and materialization points, on lazy and
//! materialized arrays
//! alike, compared with the same chain applied by ndarray on the host. f32, f64 and i32;
//! shapes with 0- and 1-sized axes and odd extents.
//!
//! Cases per run: `LAZYCL_VIEW_CASES` (default 150; each case checks one chain of up to
//! eight steps). Floats are compared with a tolerance scaled by the sum of magnitudes;
//! integers exactly.

use crate::common::{ctx, rng, Random};
use lazycl::{Array, Context, Element};
use ndarray::{ArrayD, Axis, IxDyn, SliceInfoElem};
use rand::rngs::StdRng;
use rand::Rng;

pub(crate) trait Num: Element + Random + lazycl::Numeric + std::fmt::Debug {
    const FLOAT: bool;
    fn small(v: i8) -> Self;
    fn to_f64(self) -> f64;
    fn h_add(a: Self, b: Self) -> Self;
    fn h_mul(a: Self, b: Self) -> Self;
}

macro_rules! num {
    ($t:ty, $float:expr, $add:expr, $mul:expr) => {
        impl Num for $t {
            const FLOAT: bool = $float;
            fn small(v: i8) -> Self {
                v as $t
            }
            fn to_f64(self) -> f64 {
                self as f64
            }
            fn h_add(a: Self, b: Self) -> Self {
                $add(a, b)
            }
            fn h_mul(a: Self, b: Self) -> Self {
                $mul(a, b)
            }
        }
    };
}
num!(f32, true, |a: f32, b| a + b, |a: f32, b| a * b);
num!(f64, true, |a: f64, b| a + b, |a: f64, b| a * b);
num!(i32, false, i32::wrapping_add, i32::wrapping_mul);

/// One value of the chain on both sides.
pub(crate) struct Pair<T: Element> {
    pub(crate) dev: Array<T>,
    pub(crate) host: ArrayD<T>,
    /// The largest magnitude of any element (for float tolerances).
    pub(crate) bound: f64,
}

pub(crate) fn random_shape(r: &mut StdRng) -> Vec<usize> {
    let rank = r.gen_range(1..=4);
    (0..rank)
        .map(|_| match r.gen_range(0..10) {
            0 => 0,
            1 | 2 => 1,
            _ => r.gen_range(2..=7),
        })
        .collect()
}

pub(crate) fn upload<T: Num>(ctx: &Context, r: &mut StdRng, shape: Vec<usize>) -> Pair<T> {
    let n: usize = shape.iter().product();
    let data: Vec<T> = T::random_vec(r, n)
        .into_iter()
        .map(|v| {
            if T::FLOAT {
                T::small((v.to_f64() / 4.0) as i8)
            } else {
                v
            }
        })
        .collect();
    let host = ArrayD::from_shape_vec(IxDyn(&shape), data).unwrap();
    let bound = host.iter().map(|v| v.to_f64().abs()).fold(0.0, f64::max);
    Pair {
        dev: ctx.array(&host).unwrap(),
        host,
        bound,
    }
}

/// A random `s![]` for `shape`, within range (ndarray would panic otherwise).
fn random_slice(r: &mut StdRng, shape: &[usize]) -> Vec<SliceInfoElem> {
    let mut info = Vec::new();
    for &n in shape {
        if r.gen_bool(0.1) {
            info.push(SliceInfoElem::NewAxis);
        }
        let n = n as isize;
        let elem = match r.gen_range(0..6) {
            0 if n > 0 => SliceInfoElem::Index(r.gen_range(-n..n)),
            1 => SliceInfoElem::from(..),
            _ => {
                let bound = |r: &mut StdRng| {
                    let i = r.gen_range(0..=n);
                    if r.gen_bool(0.3) && i > 0 {
                        i - n
                    } else {
                        i
                    }
                };
                let start = bound(r);
                let end = if r.gen_bool(0.3) { None } else { Some(bound(r)) };
                let step = [1, 1, 2, 3, -1, -2][r.gen_range(0..6)];
                SliceInfoElem::Slice { start, end, step }
            }
        };
        info.push(elem);
    }
    info
}

fn permutation(r: &mut StdRng, n: usize) -> Vec<usize> {
    let mut p: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        p.swap(i, r.gen_range(0..=i));
    }
    p
}

/// A host pad of `a` by `widths` with `value`.
fn host_pad<T: Element>(a: &ArrayD<T>, widths: &[(usize, usize)], value: T) -> ArrayD<T> {
    let shape: Vec<usize> = a.shape().iter().zip(widths).map(|(n, w)| n + w.0 + w.1).collect();
    let mut out = ArrayD::from_elem(IxDyn(&shape), value);
    let region: Vec<SliceInfoElem> = a
        .shape()
        .iter()
        .zip(widths)
        .map(|(&n, w)| SliceInfoElem::from(w.0..w.0 + n))
        .collect();
    out.slice_mut(region.as_slice()).assign(a);
    out
}

/// One random step of the chain: a view, a region, an elementwise op, a reduction or a
/// materialization.
pub(crate) fn step<T: Num>(r: &mut StdRng, a: Pair<T>) -> Pair<T> {
    let rank = a.host.ndim();
    let bound = a.bound;
    let same = |dev: Array<T>, host: ArrayD<T>| Pair { dev, host, bound };
    match r.gen_range(0..14) {
        0 | 1 => {
            let info = random_slice(r, a.host.shape());
            same(a.dev.slice(&info), a.host.slice(info.as_slice()).to_owned())
        }
        2 => same(a.dev.t(), a.host.t().to_owned()),
        3 => {
            let p = permutation(r, rank);
            same(a.dev.permuted_axes(&p), a.host.clone().permuted_axes(IxDyn(&p)))
        }
        4 if rank > 0 => {
            let k = r.gen_range(0..rank);
            let mut h = a.host.clone();
            h.invert_axis(Axis(k));
            same(a.dev.flip(Axis(k)), h)
        }
        5 => {
            let k = r.gen_range(0..=rank);
            same(a.dev.insert_axis(Axis(k)), a.host.clone().insert_axis(Axis(k)))
        }
        6 if rank > 0 => {
            let k = r.gen_range(0..rank);
            if a.host.shape()[k] == 0 {
                return a;
            }
            same(
                a.dev.remove_axis(Axis(k)),
                a.host.index_axis(Axis(k), 0).to_owned(),
            )
        }
        7 => {
            let mut h = a.host.clone();
            while let Some(k) = h.shape().iter().rposition(|&n| n == 1) {
                h = h.index_axis_move(Axis(k), 0);
            }
            same(a.dev.squeeze(), h)
        }
        8 if rank > 0 => {
            // Concatenate with a flipped copy, or stack with itself times two.
            let k = r.gen_range(0..rank);
            let mut flipped = a.host.clone();
            flipped.invert_axis(Axis(k));
            if r.gen_bool(0.5) {
                let dev = lazycl::concatenate(Axis(k), &[&a.dev, &a.dev.flip(Axis(k))]).unwrap();
                let host = ndarray::concatenate(Axis(k), &[a.host.view(), flipped.view()]).unwrap();
                same(dev, host)
            } else {
                let doubled = &a.dev * T::small(2);
                let dev = lazycl::stack(Axis(k), &[&a.dev, &doubled]).unwrap();
                let h2 = a.host.mapv(|v| T::h_mul(v, T::small(2)));
                let host = ndarray::stack(Axis(k), &[a.host.view(), h2.view()]).unwrap();
                Pair {
                    dev,
                    host,
                    bound: bound * 2.0,
                }
            }
        }
        9 => {
            let widths: Vec<(usize, usize)> = (0..rank)
                .map(|_| (r.gen_range(0..3), r.gen_range(0..3)))
                .collect();
            let v = T::small(r.gen_range(-5..5));
            Pair {
                dev: a.dev.pad(&widths, v),
                host: host_pad(&a.host, &widths, v),
                bound: bound.max(5.0),
            }
        }
        10 => {
            // An elementwise op of the value with a reversed view of itself.
            let rev = a.dev.slice(vec![
                SliceInfoElem::Slice {
                    start: 0,
                    end: None,
                    step: -1
                };
                rank
            ]);
            let mut hrev = a.host.clone();
            for k in 0..rank {
                hrev.invert_axis(Axis(k));
            }
            let host = ndarray::Zip::from(&a.host)
                .and(&hrev)
                .map_collect(|&x, &y| T::h_add(x, T::h_mul(y, T::small(3))));
            Pair {
                dev: &a.dev + &rev * T::small(3),
                host,
                bound: bound * 4.0,
            }
        }
        11 if rank > 0 && !a.host.is_empty() => {
            let k = r.gen_range(0..rank);
            let n = a.host.shape()[k] as f64;
            let host = a.host.fold_axis(Axis(k), T::small(0), |s, x| T::h_add(*s, *x));
            Pair {
                dev: a.dev.sum_axis(k),
                host,
                bound: bound * n,
            }
        }
        12 => {
            a.dev.eval().unwrap();
            a
        }
        13 => {
            // A region of a copy set in place: to a constant, or to itself scaled and
            // reversed along its first axis (a value that reads the array it is stored
            // into).
            let info: Vec<SliceInfoElem> = random_slice(r, a.host.shape())
                .into_iter()
                .filter(|e| !matches!(e, SliceInfoElem::NewAxis))
                .collect();
            let mut dev = a.dev.clone();
            let mut host = a.host.clone();
            if r.gen_bool(0.5) {
                let v = T::small(r.gen_range(-5..5));
                dev.slice_mut(&info).fill(v).unwrap();
                host.slice_mut(info.as_slice()).fill(v);
                return Pair {
                    dev,
                    host,
                    bound: bound.max(5.0),
                };
            }
            let region = dev.slice(&info);
            let value = if region.ndim() > 0 {
                region.flip(Axis(0)) * T::small(2)
            } else {
                region * T::small(2)
            };
            dev.slice_mut(&info).assign(&value).unwrap();
            let mut h = host.slice(info.as_slice()).to_owned();
            if h.ndim() > 0 {
                h.invert_axis(Axis(0));
            }
            host.slice_mut(info.as_slice())
                .assign(&h.mapv(|v| T::h_mul(v, T::small(2))));
            Pair {
                dev,
                host,
                bound: bound * 2.0,
            }
        }
        _ => a,
    }
}

pub(crate) fn check<T: Num>(case: u64, got: &ArrayD<T>, want: &ArrayD<T>, bound: f64) {
    assert_eq!(got.shape(), want.shape(), "case {case}: shape");
    let tol = if T::FLOAT { 1e-5 * (bound + 1.0) * 8.0 } else { 0.0 };
    for (i, (g, w)) in got.iter().zip(want.iter()).enumerate() {
        let (g, w) = (g.to_f64(), w.to_f64());
        assert!(
            (g - w).abs() <= tol,
            "case {case}: element {i}: got {g}, want {w} (tol {tol})"
        );
    }
}

pub(crate) fn run<T: Num>(ctx: &Context, seed: u64, cases: u64) {
    for case in 0..cases {
        let mut r = rng(seed * 100_000 + case);
        let shape = random_shape(&mut r);
        let mut v: Pair<T> = upload(ctx, &mut r, shape);
        if r.gen_bool(0.3) {
            v.dev = &v.dev * T::small(1);
        }
        let steps = r.gen_range(1..=8);
        for _ in 0..steps {
            if v.host.len() > 4096 || v.host.ndim() > 6 {
                break;
            }
            v = step(&mut r, v);
        }
        let got = v.dev.to_ndarray().unwrap_or_else(|e| panic!("case {case}: {e}"));
        check(case, &got, &v.host, v.bound);
    }
}

fn cases() -> u64 {
    std::env::var("LAZYCL_VIEW_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(150)
}

#[test]
fn random_view_chains_match_ndarray_f32() {
    run::<f32>(&ctx(), 1, cases());
}

#[test]
fn random_view_chains_match_ndarray_f64() {
    run::<f64>(&ctx(), 2, cases() / 3);
}

#[test]
fn random_view_chains_match_ndarray_i32() {
    run::<i32>(&ctx(), 3, cases() / 2);
}

/// The same chains where transposed reads are staged through local memory in tiles (the
/// GPU layout), on any device.
#[test]
fn random_view_chains_match_ndarray_with_tiles() {
    let tuning = lazycl::Tuning {
        tiles_anywhere: true,
        ..Default::default()
    };
    let ctx = crate::common::builder().tuning(tuning).build().unwrap();
    run::<f32>(&ctx, 4, cases() / 3);
}
