//! Sorting (`sort`, `argsort`, `topk`, `sort_by_key`) against a host stable sort on random
//! data: every numeric type, rows of 0, 1 and odd lengths, rows that fit one tile (the
//! local sort) and rows of several tiles (the radix passes and their look-back), several
//! rows at once, every axis, floats with NaN, signed zeros and infinities. Argsorts are
//! compared exactly, so a sort that is not stable fails.

use std::cmp::Ordering;

use crate::common::{ctx, rng, Random};
use lazycl::{sort_by_key, Array, Axis, Context, Element, Error, Numeric};
use ndarray::{ArrayD, IxDyn};
use rand::Rng;

/// Lengths of rows: empty, one, odd, the largest local tile's edges, several tiles.
const LENGTHS: [usize; 8] = [0, 1, 2, 7, 300, 4096, 4097, 13_001];

pub(crate) trait Key: Element + Numeric + Random + std::fmt::Debug {
    /// The order of a stable ascending sort: NaN last, all NaNs equal, `-0.0 < +0.0`.
    fn order(a: Self, b: Self) -> Ordering;
    /// Equal as results: the same bits, or both NaN.
    fn same(a: Self, b: Self) -> bool;
    /// Random values from a few, so that rows hold many equal keys.
    fn few(r: &mut rand::rngs::StdRng, n: usize) -> Vec<Self>;
}

macro_rules! int_key {
    ($($t:ty),*) => {$(
        impl Key for $t {
            fn order(a: Self, b: Self) -> Ordering { a.cmp(&b) }
            fn same(a: Self, b: Self) -> bool { a == b }
            fn few(r: &mut rand::rngs::StdRng, n: usize) -> Vec<Self> {
                let pool = [<$t>::MIN, <$t>::MAX, 0 as $t, 1 as $t, 5 as $t, <$t>::MAX / 2];
                (0..n).map(|_| pool[r.gen_range(0..pool.len())]).collect()
            }
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
            fn same(a: Self, b: Self) -> bool { a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()) }
            fn few(r: &mut rand::rngs::StdRng, n: usize) -> Vec<Self> {
                let pool = [<$t>::NAN, -<$t>::NAN, <$t>::INFINITY, <$t>::NEG_INFINITY, 0.0, -0.0,
                            1.5, -1.5, <$t>::MIN_POSITIVE / 4.0, <$t>::MAX, <$t>::MIN];
                (0..n).map(|_| pool[r.gen_range(0..pool.len())]).collect()
            }
        }
    )*};
}
float_key!(f32, f64);

/// The host's stable argsort of each lane along `axis` (ascending, or descending by the
/// reversed order, still stable).
pub(crate) fn host_argsort<T: Key>(a: &ArrayD<T>, axis: usize, descending: bool) -> ArrayD<u32> {
    let mut out = ArrayD::<u32>::zeros(a.raw_dim());
    for (lane, mut dst) in a
        .lanes(ndarray::Axis(axis))
        .into_iter()
        .zip(out.lanes_mut(ndarray::Axis(axis)))
    {
        let v: Vec<T> = lane.iter().copied().collect();
        let mut ix: Vec<u32> = (0..v.len() as u32).collect();
        ix.sort_by(|&i, &j| {
            let o = T::order(v[i as usize], v[j as usize]);
            if descending {
                o.reverse()
            } else {
                o
            }
        });
        for (d, i) in dst.iter_mut().zip(ix) {
            *d = i;
        }
    }
    out
}

/// `a`'s elements along `axis` in the order `ix` gives.
pub(crate) fn gather<T: Copy>(a: &ArrayD<T>, axis: usize, ix: &ArrayD<u32>) -> ArrayD<T> {
    let mut out = a.clone();
    for ((lane, ixs), mut dst) in a
        .lanes(ndarray::Axis(axis))
        .into_iter()
        .zip(ix.lanes(ndarray::Axis(axis)))
        .zip(out.lanes_mut(ndarray::Axis(axis)))
    {
        for (d, &i) in dst.iter_mut().zip(ixs.iter()) {
            *d = lane[i as usize];
        }
    }
    out
}

pub(crate) fn assert_same<T: Key>(got: &[T], want: &[T], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    if let Some(i) = (0..got.len()).find(|&i| !T::same(got[i], want[i])) {
        panic!("{what}: element {i} is {:?}, the host has {:?}", got[i], want[i]);
    }
}

/// Sorts and argsorts `host` along `axis` on the device and checks both exactly.
fn check_sort<T: Key>(c: &Context, host: &ArrayD<T>, axis: usize, what: &str) {
    let a = c.array(host).unwrap();
    let want_ix = host_argsort(host, axis, false);
    let got_ix = a.argsort_axis(axis).unwrap();
    assert_eq!(got_ix.shape(), host.shape(), "{what}: argsort shape");
    assert_eq!(got_ix.to_ndarray().unwrap(), want_ix, "{what}: argsort");
    let want = gather(host, axis, &want_ix);
    let got = a.sort_axis(axis).unwrap().to_ndarray().unwrap();
    assert_same(
        got.as_standard_layout().as_slice().unwrap(),
        want.as_standard_layout().as_slice().unwrap(),
        &format!("{what}: sort"),
    );
}

fn every_length<T: Key>(seed: u64) {
    let c = ctx();
    let mut r = rng(seed);
    for &len in &LENGTHS {
        for few in [false, true] {
            let v = if few {
                T::few(&mut r, len)
            } else {
                T::random_vec(&mut r, len)
            };
            let host = ArrayD::from_shape_vec(IxDyn(&[len]), v).unwrap();
            check_sort(&c, &host, 0, &format!("{:?} len {len} few {few}", T::DTYPE));
        }
    }
    // Several rows: of one tile each, and of several tiles each (a look-back per row).
    for shape in [[33usize, 129], [3, 9000]] {
        let v = T::few(&mut r, shape[0] * shape[1]);
        let host = ArrayD::from_shape_vec(IxDyn(&shape), v).unwrap();
        check_sort(&c, &host, 1, &format!("{:?} shape {shape:?}", T::DTYPE));
    }
}

#[test]
fn sorts_i32_rows_of_every_length() {
    every_length::<i32>(1);
}

#[test]
fn sorts_u32_rows_of_every_length() {
    every_length::<u32>(2);
}

#[test]
fn sorts_f32_rows_of_every_length() {
    every_length::<f32>(3);
}

#[test]
fn sorts_i64_rows_of_every_length() {
    every_length::<i64>(4);
}

#[test]
fn sorts_u64_rows_of_every_length() {
    every_length::<u64>(5);
}

#[test]
fn sorts_f64_rows_of_every_length() {
    every_length::<f64>(6);
}

#[test]
fn floats_sort_nan_last_and_negative_zero_first() {
    let c = ctx();
    let v = [
        f32::NAN,
        0.0,
        -0.0,
        f32::INFINITY,
        -f32::NAN,
        -1.0,
        f32::NEG_INFINITY,
        0.0,
        -0.0,
    ];
    let a = c.from_slice(&v).unwrap();
    let got = a.sort().unwrap().to_vec().unwrap();
    let want = [
        f32::NEG_INFINITY,
        -1.0,
        -0.0,
        -0.0,
        0.0,
        0.0,
        f32::INFINITY,
        f32::NAN,
        f32::NAN,
    ];
    assert_same(&got, &want, "specials");
    assert_eq!(
        a.argsort().unwrap().to_vec().unwrap(),
        vec![6, 5, 2, 8, 1, 7, 3, 0, 4]
    );
}

#[test]
fn sorts_along_every_axis() {
    let c = ctx();
    let mut r = rng(7);
    let host = ArrayD::from_shape_vec(IxDyn(&[5, 6, 7]), f32::few(&mut r, 210)).unwrap();
    let ints = ArrayD::from_shape_vec(IxDyn(&[4, 3000, 2]), i64::random_vec(&mut r, 24_000)).unwrap();
    for axis in 0..3 {
        check_sort(&c, &host, axis, &format!("f32 [5, 6, 7] axis {axis}"));
        check_sort(&c, &ints, axis, &format!("i64 [4, 3000, 2] axis {axis}"));
    }
}

#[test]
fn a_lazy_operand_is_computed_then_sorted() {
    let c = ctx();
    let mut r = rng(8);
    let v = f64::random_vec(&mut r, 5000);
    let a = c.from_slice(&v).unwrap();
    let got = (&a * -2.0 + 1.0).sort().unwrap().to_vec().unwrap();
    let mut want: Vec<f64> = v.iter().map(|x| x * -2.0 + 1.0).collect();
    want.sort_by(|a, b| a.total_cmp(b));
    assert_same(&got, &want, "lazy operand");
    // The sorted array feeds lazy consumers like any other.
    let s = a.sort().unwrap();
    let first = s.slice(lazycl::s![..3]).to_vec().unwrap();
    let mut sorted = v.clone();
    sorted.sort_by(|a, b| a.total_cmp(b));
    assert_eq!(first, sorted[..3].to_vec());
}

#[test]
fn a_sort_never_waits() {
    let c = ctx();
    let a = c.from_slice(&f32::random_vec(&mut rng(9), 20_000)).unwrap();
    let b = c.from_slice(&f32::random_vec(&mut rng(10), 100)).unwrap();
    let before = c.stats();
    let s = a.sort().unwrap();
    let i = b.argsort().unwrap();
    let t = a.topk(5).unwrap();
    let d = c.stats() - before;
    assert_eq!(d.host_waits, 0, "{d:?}");
    drop((s, i, t));
}

#[test]
fn topk_is_a_stable_descending_sort_cut_at_k() {
    let c = ctx();
    let mut r = rng(11);
    for shape in [vec![10usize], vec![4, 5000], vec![37, 3]] {
        let n: usize = shape.iter().product();
        let host = ArrayD::from_shape_vec(IxDyn(&shape), f32::few(&mut r, n)).unwrap();
        let ints = ArrayD::from_shape_vec(IxDyn(&shape), i32::random_vec(&mut r, n)).unwrap();
        let last = shape.len() - 1;
        for k in [0, 1, shape[last]] {
            let want_ix = host_argsort(&host, last, true);
            let want_ix = want_ix.slice_axis(ndarray::Axis(last), (0..k).into()).to_owned();
            let want = gather(&host, last, &host_argsort(&host, last, true));
            let want = want.slice_axis(ndarray::Axis(last), (0..k).into()).to_owned();
            let top = c.array(&host).unwrap().topk(k).unwrap();
            assert_eq!(top.indices.to_ndarray().unwrap(), want_ix, "f32 {shape:?} k {k}");
            let got = top.values.to_ndarray().unwrap();
            assert_same(
                &got.iter().copied().collect::<Vec<_>>(),
                &want.iter().copied().collect::<Vec<_>>(),
                "topk",
            );
            let top = c.array(&ints).unwrap().topk(k).unwrap();
            let want_ix = host_argsort(&ints, last, true);
            let want = gather(&ints, last, &want_ix);
            let want = want.slice_axis(ndarray::Axis(last), (0..k).into()).to_owned();
            assert_eq!(top.values.to_ndarray().unwrap(), want, "i32 {shape:?} k {k}");
        }
    }
    // Along the first axis.
    let host = ArrayD::from_shape_vec(IxDyn(&[9, 4]), i64::few(&mut r, 36)).unwrap();
    let top = c.array(&host).unwrap().topk_axis(2, Axis(0)).unwrap();
    let want_ix = host_argsort(&host, 0, true);
    assert_eq!(
        top.indices.to_ndarray().unwrap(),
        want_ix.slice_axis(ndarray::Axis(0), (0..2).into()).to_owned()
    );
}

#[test]
fn sort_by_key_moves_values_of_every_size() {
    let c = ctx();
    let mut r = rng(12);
    for shape in [vec![0usize], vec![1000], vec![3, 6000]] {
        let n: usize = shape.iter().product();
        let keys = ArrayD::from_shape_vec(IxDyn(&shape), u32::few(&mut r, n)).unwrap();
        let last = shape.len() - 1;
        let ix = host_argsort(&keys, last, false);
        let k = c.array(&keys).unwrap();
        let wide = ArrayD::from_shape_vec(IxDyn(&shape), f64::random_vec(&mut r, n)).unwrap();
        let s = sort_by_key(&k, &c.array(&wide).unwrap()).unwrap();
        assert_eq!(
            s.keys.to_ndarray().unwrap(),
            gather(&keys, last, &ix),
            "{shape:?} keys"
        );
        assert_eq!(
            s.values.to_ndarray().unwrap(),
            gather(&wide, last, &ix),
            "{shape:?} f64 values"
        );
        let flags = ArrayD::from_shape_vec(IxDyn(&shape), bool::random_vec(&mut r, n)).unwrap();
        let s = sort_by_key(&k, &c.array(&flags).unwrap()).unwrap();
        assert_eq!(
            s.values.to_ndarray().unwrap(),
            gather(&flags, last, &ix),
            "{shape:?} bool values"
        );
        let ints = ArrayD::from_shape_vec(IxDyn(&shape), i32::random_vec(&mut r, n)).unwrap();
        let s = sort_by_key(&k, &c.array(&ints).unwrap()).unwrap();
        assert_eq!(
            s.values.to_ndarray().unwrap(),
            gather(&ints, last, &ix),
            "{shape:?} i32 values"
        );
    }
}

#[test]
fn bad_sorts_are_errors() {
    let c = ctx();
    let a = c
        .from_shape_slice([2, 3], &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])
        .unwrap();
    let msg = |e: Error| e.to_string();
    let e = msg(a.sort_axis(2).err().unwrap());
    assert!(
        e.contains("sort_axis: axis 2 is out of range for an array of shape [2, 3]"),
        "{e}"
    );
    let e = msg(a.topk(4).err().unwrap());
    assert!(e.contains("k = 4") && e.contains("[2, 3]"), "{e}");
    let e = msg(c.scalar(1.0f32).unwrap().sort().err().unwrap());
    assert!(e.contains("zero-dimensional"), "{e}");
    let b: Array<i32> = c.from_slice(&[1, 2]).unwrap();
    let e = msg(sort_by_key(&a, &b).err().unwrap());
    assert!(
        e.contains("sort_by_key") && e.contains("[2, 3]") && e.contains("[2]"),
        "{e}"
    );
    // The operand's own failure is the error.
    let bad = &a + &c.from_slice(&[1.0f32, 2.0]).unwrap();
    let e = msg(bad.argsort().err().unwrap());
    assert!(e.contains("[2, 3]") && e.contains("[2]"), "{e}");
}
