//! Sorted sets (`unique` and its counts, inverse and first positions, `union1d`,
//! `intersect1d`, `setdiff1d`) against host references (a stable sort
//! and a walk over its runs, in plain Rust) on random data with many duplicates, every
//! numeric type, floats with NaN, signed zeros and infinities, sizes 0, 1, odd and of
//! several sort tiles, all-equal and all-distinct inputs. A counter checks the one wait
//! the documentation promises. The key types' host order serves `sets_by_key` too.

use std::cmp::Ordering;

use crate::common::{ctx, rng, Random};
use lazycl::{intersect1d, setdiff1d, union1d, Element, Numeric};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::Rng;

/// Sizes: empty, one, odd, one sort tile's edges, several tiles.
pub(crate) const SIZES: [usize; 7] = [0, 1, 2, 7, 301, 4097, 13_001];

pub(crate) trait Key: Element + Numeric + Random {
    /// The sort's order: NaN last, `-0.0 < +0.0`.
    fn order(a: Self, b: Self) -> Ordering;
    /// Equal as `unique` counts: `==`, or both NaN.
    fn equal_nan(a: Self, b: Self) -> bool;
    /// Equal as results: the same bits, or both NaN.
    fn same(a: Self, b: Self) -> bool;
    /// Random values from a few, so that many are equal.
    fn few(r: &mut StdRng, n: usize) -> Vec<Self>;
    /// `i` as a key (distinct for distinct `i` below 2^24).
    fn of(i: usize) -> Self;
}

macro_rules! int_key {
    ($($t:ty),*) => {$(
        impl Key for $t {
            fn order(a: Self, b: Self) -> Ordering { a.cmp(&b) }
            fn equal_nan(a: Self, b: Self) -> bool { a == b }
            fn same(a: Self, b: Self) -> bool { a == b }
            fn few(r: &mut StdRng, n: usize) -> Vec<Self> {
                let pool = [<$t>::MIN, <$t>::MAX, 0 as $t, 1 as $t, 5 as $t, 6 as $t, <$t>::MAX / 2];
                (0..n).map(|_| pool[r.gen_range(0..pool.len())]).collect()
            }
            fn of(i: usize) -> Self { i as $t }
        }
    )*};
}
int_key!(i32, u32, i64, u64);

macro_rules! float_key {
    ($($t:ty),*) => {$(
        impl Key for $t {
            fn order(a: Self, b: Self) -> Ordering {
                match (a.is_nan(), b.is_nan()) {
                    (true, true) => Ordering::Equal,
                    (x, y) if x != y => x.cmp(&y),
                    _ => a.total_cmp(&b),
                }
            }
            fn equal_nan(a: Self, b: Self) -> bool { a == b || (a.is_nan() && b.is_nan()) }
            fn same(a: Self, b: Self) -> bool { a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()) }
            fn few(r: &mut StdRng, n: usize) -> Vec<Self> {
                let pool = [<$t>::NAN, -<$t>::NAN, <$t>::INFINITY, <$t>::NEG_INFINITY, 0.0, -0.0,
                            1.5, -1.5, <$t>::MIN_POSITIVE / 4.0, <$t>::MAX, <$t>::MIN, 7.25];
                (0..n).map(|_| pool[r.gen_range(0..pool.len())]).collect()
            }
            fn of(i: usize) -> Self { i as $t - 1000.5 }
        }
    )*};
}
float_key!(f32, f64);

/// What `unique_all` answers, on the host.
struct HostUnique<T> {
    values: Vec<T>,
    indices: Vec<u32>,
    inverse: Vec<u32>,
    counts: Vec<u32>,
}

/// `unique_all` by a stable sort of the positions and a walk over its runs.
fn host_unique<T: Key>(x: &[T]) -> HostUnique<T> {
    let mut order: Vec<usize> = (0..x.len()).collect();
    order.sort_by(|&i, &j| T::order(x[i], x[j]));
    let mut h = HostUnique {
        values: vec![],
        indices: vec![],
        inverse: vec![0; x.len()],
        counts: vec![],
    };
    for (k, &i) in order.iter().enumerate() {
        if k == 0 || !T::equal_nan(x[order[k - 1]], x[i]) {
            h.values.push(x[i]);
            h.indices.push(i as u32);
            h.counts.push(0);
        }
        *h.counts.last_mut().unwrap() += 1;
        h.inverse[i] = (h.values.len() - 1) as u32;
    }
    h
}

pub(crate) fn assert_same<T: Key>(what: &str, got: &[T], want: &[T]) {
    assert_eq!(
        got.len(),
        want.len(),
        "{what}: lengths; got {got:?}, want {want:?}"
    );
    for (k, (&g, &w)) in got.iter().zip(want).enumerate() {
        assert!(T::same(g, w), "{what}: element {k}: got {g:?}, want {w:?}");
    }
}

/// The inputs of one size: few values, random (mostly distinct), all equal, all distinct.
fn inputs<T: Key>(r: &mut StdRng, n: usize) -> Vec<(&'static str, Vec<T>)> {
    let mut distinct: Vec<T> = (0..n).map(T::of).collect();
    distinct.shuffle(r);
    let one = T::few(r, 1).first().copied().unwrap_or_default();
    vec![
        ("few", T::few(r, n)),
        ("random", T::random_vec(r, n)),
        ("all equal", vec![one; n]),
        ("all distinct", distinct),
    ]
}

fn check_unique<T: Key>(seed: u64) {
    let ctx = ctx();
    let mut r = rng(seed);
    for n in SIZES {
        for (kind, x) in inputs::<T>(&mut r, n) {
            let what = format!("{} {kind} n={n}", std::any::type_name::<T>());
            let h = host_unique(&x);
            let a = ctx.from_slice(&x).unwrap();
            assert_same(&what, &a.unique().unwrap().to_vec().unwrap(), &h.values);
            let c = a.unique_counts().unwrap();
            assert_same(&what, &c.values.to_vec().unwrap(), &h.values);
            assert_eq!(c.counts.to_vec().unwrap(), h.counts, "{what}: counts");
            let u = a.unique_all().unwrap();
            assert_same(&what, &u.values.to_vec().unwrap(), &h.values);
            assert_eq!(u.indices.to_vec().unwrap(), h.indices, "{what}: first positions");
            assert_eq!(u.inverse.to_vec().unwrap(), h.inverse, "{what}: inverse");
            assert_eq!(u.counts.to_vec().unwrap(), h.counts, "{what}: counts");
            let total: u64 = u.counts.to_vec().unwrap().iter().map(|&c| c as u64).sum();
            assert_eq!(total, n as u64, "{what}: the counts add up to n");
            if n > 0 {
                let back = u.values.take(0, &u.inverse).to_vec().unwrap();
                for (k, (&g, &w)) in back.iter().zip(&x).enumerate() {
                    assert!(
                        T::equal_nan(g, w),
                        "{what}: values.take(inverse) at {k}: {g:?} for {w:?}"
                    );
                }
            }
        }
    }
}

#[test]
fn unique_i32() {
    check_unique::<i32>(1);
}
#[test]
fn unique_u32() {
    check_unique::<u32>(2);
}
#[test]
fn unique_i64() {
    check_unique::<i64>(3);
}
#[test]
fn unique_u64() {
    check_unique::<u64>(4);
}
#[test]
fn unique_f32() {
    check_unique::<f32>(5);
}
#[test]
fn unique_f64() {
    check_unique::<f64>(6);
}

#[test]
fn unique_keeps_one_nan_and_one_zero() {
    let ctx = ctx();
    let a = ctx
        .from_slice(&[f32::NAN, 0.0, 2.0, -f32::NAN, -0.0, 0.0, f32::NAN])
        .unwrap();
    let u = a.unique_counts().unwrap();
    let v = u.values.to_vec().unwrap();
    assert_eq!(v.len(), 3, "{v:?}");
    assert_eq!(
        v[0].to_bits(),
        (-0.0f32).to_bits(),
        "-0.0 and +0.0 are one value, kept as -0.0"
    );
    assert_eq!(v[1], 2.0);
    assert!(v[2].is_nan(), "one NaN for all, last");
    assert_eq!(u.counts.to_vec().unwrap(), [3, 1, 3]);
}

#[test]
fn unique_inverse_has_the_input_shape() {
    let ctx = ctx();
    let x: Vec<i32> = (0..24).map(|i| (i * 7) % 5).collect();
    let a = ctx.from_shape_slice([2, 3, 4], &x).unwrap();
    let u = a.unique_inverse().unwrap();
    assert_eq!(u.values.to_vec().unwrap(), [0, 1, 2, 3, 4]);
    assert_eq!(u.inverse.shape(), [2, 3, 4]);
    assert_eq!(u.values.take(0, &u.inverse).to_vec().unwrap(), x);
    let s = ctx.scalar(5u64).unwrap();
    let u = s.unique_inverse().unwrap();
    assert_eq!(u.values.to_vec().unwrap(), [5]);
    assert_eq!(u.inverse.shape(), [] as [usize; 0]);
    assert_eq!(u.inverse.item().unwrap(), 0);
}

#[test]
fn unique_waits_once_for_its_length() {
    let ctx = ctx();
    let a = ctx.from_slice(&T1).unwrap();
    a.eval().unwrap();
    for all in [false, true] {
        let before = ctx.stats();
        let values = if all {
            a.unique_all().unwrap().values
        } else {
            a.unique().unwrap()
        };
        assert_eq!((ctx.stats() - before).host_waits, 1, "unique_all: {all}");
        assert_eq!(values.to_vec().unwrap(), [1, 2, 3]);
    }
}
const T1: [u32; 6] = [3, 1, 2, 3, 1, 1];

/// numpy's set functions on the host: `union1d`, `intersect1d`, `setdiff1d`.
fn host_sets<T: Key>(a: &[T], b: &[T]) -> [Vec<T>; 3] {
    let ab: Vec<T> = a.iter().chain(b).copied().collect();
    let union = host_unique(&ab).values;
    let ua = host_unique(a).values;
    let ub = host_unique(b).values;
    let meet = |v: T| ub.iter().copied().find(|&w| w == v);
    let inter = ua
        .iter()
        .filter_map(|&v| meet(v).map(|w| if T::order(w, v) == Ordering::Less { w } else { v }))
        .collect();
    let diff = ua.iter().copied().filter(|&v| meet(v).is_none()).collect();
    [union, inter, diff]
}

fn check_sets<T: Key>(seed: u64) {
    let ctx = ctx();
    let mut r = rng(seed);
    for (na, nb) in [(0, 0), (0, 5), (6, 0), (1, 1), (7, 13), (301, 300), (4097, 999)] {
        let xs = [
            (T::few(&mut r, na), T::few(&mut r, nb)),
            (T::random_vec(&mut r, na), T::random_vec(&mut r, nb)),
            (
                (0..na).map(T::of).collect(),
                (0..nb).map(|i| T::of(2 * i)).collect(),
            ),
        ];
        for (k, (x, y)) in xs.iter().enumerate() {
            let what = format!("{} case {k} sizes {na} and {nb}", std::any::type_name::<T>());
            let [union, inter, diff] = host_sets(x, y);
            let (a, b) = (ctx.from_slice(x).unwrap(), ctx.from_slice(y).unwrap());
            assert_same(
                &format!("union1d {what}"),
                &union1d(&a, &b).unwrap().to_vec().unwrap(),
                &union,
            );
            assert_same(
                &format!("intersect1d {what}"),
                &intersect1d(&a, &b).unwrap().to_vec().unwrap(),
                &inter,
            );
            assert_same(
                &format!("setdiff1d {what}"),
                &setdiff1d(&a, &b).unwrap().to_vec().unwrap(),
                &diff,
            );
        }
    }
}

#[test]
fn sets_i32() {
    check_sets::<i32>(11);
}
#[test]
fn sets_u64() {
    check_sets::<u64>(12);
}
#[test]
fn sets_f32() {
    check_sets::<f32>(13);
}
#[test]
fn sets_f64() {
    check_sets::<f64>(14);
}

#[test]
fn sets_compare_floats_as_numpy() {
    let ctx = ctx();
    let a = ctx.from_slice(&[f64::NAN, 0.0, 1.0, 2.0]).unwrap();
    let b = ctx.from_slice(&[-0.0, f64::NAN, 2.0]).unwrap();
    let inter = intersect1d(&a, &b).unwrap().to_vec().unwrap();
    assert_eq!(inter.len(), 2, "a NaN meets nothing: {inter:?}");
    assert_eq!(inter[0].to_bits(), (-0.0f64).to_bits());
    assert_eq!(inter[1], 2.0);
    let diff = setdiff1d(&a, &b).unwrap().to_vec().unwrap();
    assert_eq!(diff.len(), 2, "{diff:?}");
    assert_eq!(diff[0], 1.0);
    assert!(diff[1].is_nan(), "a NaN stays in a difference");
    let union = union1d(&a, &b).unwrap().to_vec().unwrap();
    assert_eq!(union.len(), 4, "one zero, one NaN: {union:?}");
    // +0.0 of the first set against -0.0 of the second, the second sorted first.
    let p = ctx.from_slice(&[0.0f32, 3.0]).unwrap();
    let m = ctx.from_slice(&[-0.0f32]).unwrap();
    assert_eq!(setdiff1d(&p, &m).unwrap().to_vec().unwrap(), [3.0]);
    assert_eq!(setdiff1d(&m, &p).unwrap().to_vec().unwrap(), [] as [f32; 0]);
}
