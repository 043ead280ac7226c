//! Property test of views: random chains of slicing (steps of either sign, indices,
//! new axes), transposes, permutations, swaps, flips, inserted and removed axes,
//! squeezes, broadcasts, concatenations, stacks, pads and tiles, mixed with elementwise
//! operations, reductions, regions set in place and materialization points, on lazy and
//! materialized arrays
//! alike, compared with the same chain applied by ndarray on the host. f32, f64 and i32,
//! and the narrow types f16, bf16, u8 and i16; shapes with 0- and 1-sized axes and odd
//! extents.
//!
//! Cases per run: `LAZYCL_VIEW_CASES` (default 150 for f32; each case checks one chain of
//! up to eight steps; the other types run a fraction of it, the narrow ones a seventh, since
//! each of their chains builds programs of its own). The chains are proptest inputs with a
//! fixed seed: a failing chain shrinks to a minimal one (fewer steps, simpler kinds, a
//! smaller shape), which the failure shows.
//!
//! Integers (the narrow ones too) are compared exactly: every step wraps on the host as on
//! the device (`wrapping_add`, `wrapping_mul`, a sum cast back to the type). Floats start
//! as small integers and are compared with a tolerance scaled by `bound`, the largest
//! magnitude any value of the chain can reach (each step scales it as it scales values:
//! times 4 for `x + 3 * y`, times the extent for a sum). For `f32` and `f64`, whose host
//! reference computes in the type itself, that is `8e-5 * (bound + 1)`. The 16-bit floats
//! are computed in `f32` and rounded to 16 bits where a kernel stores them, which depends
//! on how the chain was split into kernels; their host reference computes in `f64`
//! (exact: every value is an integer far below 2^53) and the tolerance adds one rounding
//! per step: a rounding moves a value of magnitude at most `bound` by at most
//! `u * bound` (`u` = 2^-11 for f16's 11 significant bits, 2^-8 for bf16's 8), and the
//! later steps scale that error at most as they scale `bound` (a sort moves no value
//! further than the largest error), so the result is within `u * bound * steps` plus the
//! `f32` term above. An `f16` chain stops before a step that could take a value past the
//! largest finite `f16` ([`Num::LIMIT`], [`within_limit`]).

use crate::common::{cases, check_property, ctx, rng, Random};
use lazycl::{Array, Context, Element};
use ndarray::{ArrayD, Axis, IxDyn, SliceInfoElem};
use proptest::prelude::*;
use rand::rngs::StdRng;
use rand::Rng;

pub(crate) trait Num: Element + Random + lazycl::Numeric + std::fmt::Debug {
    /// The host reference's element type: the type itself, or `f64` for the 16-bit floats
    /// (exact for every value of a chain, where the host's `f16` would round each step).
    type Host: Copy + std::fmt::Debug + 'static;
    const FLOAT: bool;
    /// The relative error of one rounding to the stored type beyond the compute type's
    /// own: the unit roundoff of a 16-bit float (stored narrower than it is computed),
    /// 0 for the types computed in their own width.
    const ROUNDING: f64;
    /// The largest magnitude a chain's value may reach (the largest finite `f16`; no limit
    /// for the others).
    const LIMIT: f64;
    fn small(v: i8) -> Self;
    fn to_f64(self) -> f64;
    /// A device value on the host.
    fn host(v: Self) -> Self::Host;
    fn host_f64(h: Self::Host) -> f64;
    fn h_add(a: Self::Host, b: Self::Host) -> Self::Host;
    fn h_mul(a: Self::Host, b: Self::Host) -> Self::Host;
    /// `small(v)` on the host.
    fn h_small(v: i8) -> Self::Host {
        Self::host(Self::small(v))
    }
}

macro_rules! num {
    ($t:ty, $float:expr, $add:expr, $mul:expr) => {
        impl Num for $t {
            type Host = $t;
            const FLOAT: bool = $float;
            const ROUNDING: f64 = 0.0;
            const LIMIT: f64 = f64::INFINITY;
            fn small(v: i8) -> Self {
                v as $t
            }
            fn to_f64(self) -> f64 {
                self as f64
            }
            fn host(v: Self) -> Self {
                v
            }
            fn host_f64(h: Self) -> f64 {
                h as f64
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
num!(u8, false, u8::wrapping_add, u8::wrapping_mul);
num!(i16, false, i16::wrapping_add, i16::wrapping_mul);

/// A 16-bit float with `$bits` significant bits, its largest magnitude `$limit`.
macro_rules! half_num {
    ($t:ty, $bits:expr, $limit:expr) => {
        impl Num for $t {
            type Host = f64;
            const FLOAT: bool = true;
            const ROUNDING: f64 = 1.0 / (1u64 << $bits) as f64;
            const LIMIT: f64 = $limit;
            fn small(v: i8) -> Self {
                <$t>::from_f32(f32::from(v))
            }
            fn to_f64(self) -> f64 {
                <$t>::to_f64(self)
            }
            fn host(v: Self) -> f64 {
                v.to_f64()
            }
            fn host_f64(h: f64) -> f64 {
                h
            }
            fn h_add(a: f64, b: f64) -> f64 {
                a + b
            }
            fn h_mul(a: f64, b: f64) -> f64 {
                a * b
            }
        }
    };
}
half_num!(lazycl::f16, 11, 65504.0);
half_num!(lazycl::bf16, 8, f64::INFINITY);

/// One value of the chain on both sides.
pub(crate) struct Pair<T: Num> {
    pub(crate) dev: Array<T>,
    pub(crate) host: ArrayD<T::Host>,
    /// The largest magnitude of any element (for float tolerances).
    pub(crate) bound: f64,
}

/// An extent of a random shape: mostly 2 to 7, often 1, sometimes 0 (shrinks toward 1).
pub(crate) fn extent() -> impl Strategy<Value = usize> + Clone {
    prop_oneof![2 => Just(1usize), 7 => 2..=7usize, 1 => Just(0usize)]
}

/// One step of a chain: its kind (the arm of `step` it takes, where it applies) and the
/// seed of its own random choices (axes, slices, pad widths, values).
#[derive(Clone, Debug)]
pub(crate) struct Step {
    pub(crate) kind: u32,
    pub(crate) seed: u64,
}

/// A chain: the first value's shape and the seed of its data, whether it starts lazy (the
/// upload times one) or materialized, and its steps.
#[derive(Clone, Debug)]
pub(crate) struct Chain {
    pub(crate) shape: Vec<usize>,
    pub(crate) seed: u64,
    pub(crate) lazy: bool,
    pub(crate) steps: Vec<Step>,
}

/// Chains of rank 1 to 4 with 1 to `max_steps` steps of the kinds `0..kinds`. A failing
/// chain shrinks toward fewer steps, lower kinds and a smaller shape.
pub(crate) fn chains(kinds: u32, max_steps: usize) -> impl Strategy<Value = Chain> {
    let step = (0..kinds, any::<u64>()).prop_map(|(kind, seed)| Step { kind, seed });
    (
        prop::collection::vec(extent(), 1..=4),
        any::<u64>(),
        prop::bool::weighted(0.3),
        prop::collection::vec(step, 1..=max_steps),
    )
        .prop_map(|(shape, seed, lazy, steps)| Chain {
            shape,
            seed,
            lazy,
            steps,
        })
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
    let dev = ArrayD::from_shape_vec(IxDyn(&shape), data).unwrap();
    let host = dev.mapv(T::host);
    let bound = host.iter().map(|&v| T::host_f64(v).abs()).fold(0.0, f64::max);
    Pair {
        dev: ctx.array(&dev).unwrap(),
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
fn host_pad<H: Copy>(a: &ArrayD<H>, widths: &[(usize, usize)], value: H) -> ArrayD<H> {
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

/// The kinds of [`step`].
pub(crate) const KINDS: u32 = 14;

/// One step of the chain, of kind `kind` (below [`KINDS`]): a view, a region, an
/// elementwise op, a reduction or a materialization.
pub(crate) fn step<T: Num>(kind: u32, r: &mut StdRng, a: Pair<T>) -> Pair<T> {
    let rank = a.host.ndim();
    let bound = a.bound;
    let same = |dev: Array<T>, host: ArrayD<T::Host>| Pair { dev, host, bound };
    match kind {
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
                let h2 = a.host.mapv(|v| T::h_mul(v, T::h_small(2)));
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
                host: host_pad(&a.host, &widths, T::host(v)),
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
                .map_collect(|&x, &y| T::h_add(x, T::h_mul(y, T::h_small(3))));
            Pair {
                dev: &a.dev + &rev * T::small(3),
                host,
                bound: bound * 4.0,
            }
        }
        11 if rank > 0 && !a.host.is_empty() => {
            let k = r.gen_range(0..rank);
            let n = a.host.shape()[k] as f64;
            let host = a.host.fold_axis(Axis(k), T::h_small(0), |s, x| T::h_add(*s, *x));
            Pair {
                dev: a.dev.sum_axis(k).cast::<T>(),
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
                host.slice_mut(info.as_slice()).fill(T::host(v));
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
                .assign(&h.mapv(|v| T::h_mul(v, T::h_small(2))));
            Pair {
                dev,
                host,
                bound: bound * 2.0,
            }
        }
        _ => a,
    }
}

/// Compares the device's result with the host's: exactly for integers; for floats within
/// `8e-5 * (bound + 1)`, and for the 16-bit floats one rounding more per step of the
/// `steps` the chain took (the module doc says why).
pub(crate) fn check<T: Num>(got: &ArrayD<T>, want: &ArrayD<T::Host>, bound: f64, steps: usize) {
    assert_eq!(got.shape(), want.shape(), "shape");
    let tol = if T::FLOAT {
        1e-5 * (bound + 1.0) * 8.0 + T::ROUNDING * bound * steps as f64
    } else {
        0.0
    };
    for (i, (g, w)) in got.iter().zip(want.iter()).enumerate() {
        let (g, w) = (g.to_f64(), T::host_f64(*w));
        assert!((g - w).abs() <= tol, "element {i}: got {g}, want {w} (tol {tol})");
    }
}

/// Whether a step may start from a value of magnitude up to `bound` in an array of
/// `shape`: no step takes a value past `growth` times the largest of 4 and the longest
/// axis (a sum along it; `x + 3 * y` scales by 4), which must stay within [`Num::LIMIT`].
pub(crate) fn within_limit<T: Num>(bound: f64, shape: &[usize], growth: f64) -> bool {
    let longest = shape.iter().copied().max().unwrap_or(1).max(4);
    T::LIMIT.is_infinite() || bound * growth * longest as f64 <= T::LIMIT
}

/// Applies `chain` on the device and on the host, and compares the results.
pub(crate) fn run_chain<T: Num>(ctx: &Context, chain: &Chain) {
    let mut r = rng(chain.seed);
    let mut v: Pair<T> = upload(ctx, &mut r, chain.shape.clone());
    if chain.lazy {
        v.dev = &v.dev * T::small(1);
    }
    let mut steps = 0;
    for s in &chain.steps {
        if v.host.len() > 4096 || v.host.ndim() > 6 || !within_limit::<T>(v.bound, v.host.shape(), 1.0) {
            break;
        }
        v = step(s.kind, &mut rng(s.seed), v);
        steps += 1;
    }
    let got = v.dev.to_ndarray().unwrap_or_else(|e| panic!("{e}"));
    check(&got, &v.host, v.bound, steps);
}

/// `cases` random chains of up to eight steps (proptest, seeded by `seed`).
pub(crate) fn run<T: Num>(ctx: &Context, seed: u64, cases: u32) {
    check_property(seed, cases, chains(KINDS, 8), |chain| run_chain::<T>(ctx, &chain));
}

fn view_cases() -> u32 {
    cases("LAZYCL_VIEW_CASES", 150)
}

#[test]
fn random_view_chains_match_ndarray_f32() {
    run::<f32>(&ctx(), 1, view_cases());
}

#[test]
fn random_view_chains_match_ndarray_f64() {
    run::<f64>(&ctx(), 2, view_cases() / 3);
}

#[test]
fn random_view_chains_match_ndarray_i32() {
    run::<i32>(&ctx(), 3, view_cases() / 2);
}

#[test]
fn random_view_chains_match_ndarray_f16() {
    run::<lazycl::f16>(&ctx(), 21, view_cases() / 7);
}

#[test]
fn random_view_chains_match_ndarray_bf16() {
    run::<lazycl::bf16>(&ctx(), 22, view_cases() / 7);
}

#[test]
fn random_view_chains_match_ndarray_u8() {
    run::<u8>(&ctx(), 23, view_cases() / 7);
}

#[test]
fn random_view_chains_match_ndarray_i16() {
    run::<i16>(&ctx(), 24, view_cases() / 7);
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
    run::<f32>(&ctx, 4, view_cases() / 3);
}
