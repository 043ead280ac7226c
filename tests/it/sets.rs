//! Sorted sets (`unique` and its counts, inverse and first positions, `union1d`,
//! `intersect1d`, `setdiff1d`) and `reduce_by_key` against host references (a stable sort
//! and a walk over its runs, in plain Rust) on random data with many duplicates, every
//! numeric type, floats with NaN, signed zeros and infinities, sizes 0, 1, odd and of
//! several sort tiles, all-equal and all-distinct inputs. Counters check the waits and
//! the doubling steps the documentation promises.

use std::cmp::Ordering;

use crate::common::{ctx, rng, Random};
use lazycl::{intersect1d, reduce_by_key, setdiff1d, union1d, Array, Context, Element, KeyReduce, Numeric};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::Rng;

/// Sizes: empty, one, odd, one sort tile's edges, several tiles.
const SIZES: [usize; 7] = [0, 1, 2, 7, 301, 4097, 13_001];

trait Key: Element + Numeric + Random {
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

fn assert_same<T: Key>(what: &str, got: &[T], want: &[T]) {
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

trait Val: Key {
    /// `op` over a run's values on the host.
    fn host(op: KeyReduce, v: &[Self]) -> Self;
    /// Whether the device's `got` is right for the host's `want` over values `v`.
    fn close(op: KeyReduce, got: Self, want: Self, v: &[Self]) -> bool;
    /// Values for `op` whose host reduction is exact or bounded.
    fn values(r: &mut StdRng, op: KeyReduce, n: usize) -> Vec<Self>;
}

macro_rules! int_val {
    ($($t:ty),*) => {$(
        impl Val for $t {
            fn host(op: KeyReduce, v: &[Self]) -> Self {
                match op {
                    KeyReduce::Sum => v.iter().fold(0, |a: $t, &b| a.wrapping_add(b)),
                    KeyReduce::Prod => v.iter().fold(1, |a: $t, &b| a.wrapping_mul(b)),
                    KeyReduce::Min => *v.iter().min().unwrap(),
                    KeyReduce::Max => *v.iter().max().unwrap(),
                }
            }
            fn close(_: KeyReduce, got: Self, want: Self, _: &[Self]) -> bool { got == want }
            fn values(r: &mut StdRng, _: KeyReduce, n: usize) -> Vec<Self> { Self::random_vec(r, n) }
        }
    )*};
}
int_val!(i32, u32, i64, u64);

macro_rules! float_val {
    ($($t:ty => $tol:expr),*) => {$(
        impl Val for $t {
            fn host(op: KeyReduce, v: &[Self]) -> Self {
                match op {
                    KeyReduce::Sum => v.iter().map(|&x| x as f64).sum::<f64>() as $t,
                    KeyReduce::Prod => v.iter().product(),
                    KeyReduce::Min => v.iter().fold(<$t>::NAN, |a, &b| a.min(b)),
                    KeyReduce::Max => v.iter().fold(<$t>::NAN, |a, &b| a.max(b)),
                }
            }
            fn close(op: KeyReduce, got: Self, want: Self, v: &[Self]) -> bool {
                match op {
                    KeyReduce::Sum => {
                        let scale: f64 = v.iter().map(|&x| (x as f64).abs()).sum();
                        ((got as f64) - (want as f64)).abs() <= $tol * scale + 1e-30
                    }
                    _ => Self::equal_nan(got, want),
                }
            }
            fn values(r: &mut StdRng, op: KeyReduce, n: usize) -> Vec<Self> {
                match op {
                    KeyReduce::Sum => Self::random_vec(r, n),
                    // Products of ±1 are exact in any order.
                    KeyReduce::Prod => (0..n).map(|_| if r.gen_bool(0.5) { 1.0 } else { -1.0 }).collect(),
                    KeyReduce::Min | KeyReduce::Max => Self::few(r, n),
                }
            }
        }
    )*};
}
float_val!(f32 => 1e-5, f64 => 1e-13);

/// Runs of consecutive equal keys (NaN equal to NaN): their key, their range.
fn host_runs<K: Key>(keys: &[K]) -> Vec<(K, std::ops::Range<usize>)> {
    let mut runs: Vec<(K, std::ops::Range<usize>)> = vec![];
    for (i, &k) in keys.iter().enumerate() {
        match runs.last_mut() {
            Some((first, range)) if K::equal_nan(*first, k) => range.end = i + 1,
            _ => runs.push((k, i..i + 1)),
        }
    }
    runs
}

const OPS: [KeyReduce; 4] = [KeyReduce::Sum, KeyReduce::Prod, KeyReduce::Min, KeyReduce::Max];

fn check_by_key<K: Key, V: Val>(seed: u64) {
    let ctx = ctx();
    let mut r = rng(seed);
    for n in SIZES {
        let mut sorted = K::few(&mut r, n);
        sorted.sort_by(|&a, &b| K::order(a, b));
        let key_sets = [
            ("unsorted", K::few(&mut r, n)),
            ("sorted", sorted),
            ("all equal", vec![K::of(3); n]),
        ];
        for (kind, keys) in key_sets {
            for op in OPS {
                let what = format!(
                    "{} keys {kind}, {} values, {op:?}, n={n}",
                    std::any::type_name::<K>(),
                    std::any::type_name::<V>()
                );
                let vals = V::values(&mut r, op, n);
                let got = reduce_by_key(
                    &ctx.from_slice(&keys).unwrap(),
                    &ctx.from_slice(&vals).unwrap(),
                    op,
                )
                .unwrap();
                let runs = host_runs(&keys);
                let want_keys: Vec<K> = runs.iter().map(|(k, _)| *k).collect();
                assert_same(&what, &got.keys.to_vec().unwrap(), &want_keys);
                let counts: Vec<u32> = runs.iter().map(|(_, r)| r.len() as u32).collect();
                assert_eq!(got.counts.to_vec().unwrap(), counts, "{what}: counts");
                let values = got.values.to_vec().unwrap();
                assert_eq!(values.len(), runs.len(), "{what}");
                for (j, (_, range)) in runs.iter().enumerate() {
                    let v = &vals[range.clone()];
                    let want = V::host(op, v);
                    assert!(
                        V::close(op, values[j], want, v),
                        "{what}: run {j} {range:?}: got {:?}, want {want:?}",
                        values[j]
                    );
                }
            }
        }
    }
}

#[test]
fn by_key_u32_f32() {
    check_by_key::<u32, f32>(21);
}
#[test]
fn by_key_f64_i64() {
    check_by_key::<f64, i64>(22);
}
#[test]
fn by_key_i32_f64() {
    check_by_key::<i32, f64>(23);
}
#[test]
fn by_key_f32_u64() {
    check_by_key::<f32, u64>(24);
}
#[test]
fn by_key_i64_u32() {
    check_by_key::<i64, u32>(25);
}
#[test]
fn by_key_u64_i32() {
    check_by_key::<u64, i32>(26);
}

/// Keys `0, 0, ..` in runs of `run` elements.
fn runs_of(ctx: &Context, n: usize, run: usize) -> Array<u32> {
    ctx.from_vec((0..n).map(|i| (i / run) as u32).collect()).unwrap()
}

#[test]
fn by_key_takes_log2_of_the_longest_run_steps_and_two_waits() {
    let ctx = ctx();
    let n = 96;
    let vals = ctx.from_vec((0..n).map(|i| i as f32).collect()).unwrap();
    let mut launched = vec![];
    for run in [1, 2, 8, 5] {
        let keys = runs_of(&ctx, n, run);
        keys.eval().unwrap();
        vals.eval().unwrap();
        let before = ctx.stats();
        let r = reduce_by_key(&keys, &vals, KeyReduce::Sum).unwrap();
        let d = ctx.stats() - before;
        assert_eq!(d.host_waits, 2, "run {run}: the number of runs and the longest");
        launched.push(d.kernels_launched);
        let want: Vec<f32> = (0..n.div_ceil(run))
            .map(|j| (j * run..(j * run + run).min(n)).sum::<usize>() as f32)
            .collect();
        assert_eq!(r.values.to_vec().unwrap(), want, "run {run}");
    }
    // Runs of 1 need no step, of 2 one, of 8 three, of 5 three.
    assert_eq!(launched[1], launched[0] + 1, "{launched:?}");
    assert_eq!(launched[2], launched[0] + 3, "{launched:?}");
    assert_eq!(launched[3], launched[0] + 3, "{launched:?}");
}

#[test]
fn by_key_refuses_bad_shapes() {
    let ctx = ctx();
    let k2 = ctx.from_shape_slice([2, 2], &[1u32, 1, 2, 2]).unwrap();
    let v = ctx.from_slice(&[1.0f32, 2.0, 3.0, 4.0]).unwrap();
    let e = reduce_by_key(&k2, &v, KeyReduce::Sum)
        .err()
        .expect("2-D keys")
        .to_string();
    assert!(e.contains("one-dimensional") && e.contains("[2, 2]"), "{e}");
    let k3 = ctx.from_slice(&[1u32, 1, 2]).unwrap();
    let e = reduce_by_key(&k3, &v, KeyReduce::Max)
        .err()
        .expect("3 keys, 4 values")
        .to_string();
    assert!(
        e.contains("reduce_by_key") && e.contains("[3]") && e.contains("[4]"),
        "{e}"
    );
}
