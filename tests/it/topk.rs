//! `topk` and `bottomk` against a host stable sort cut at `k`, exactly (values and
//! positions): every numeric type, rows with many equal keys, NaN, signed zeros and
//! infinities, `k` from 0 to the row's length on both sides of the selection's largest
//! `k` (256 on a device with 48 KiB of local memory or more, PoCL's included), rows of
//! 1, odd and 65,536 elements (one row split into parts, and many rows), every axis.
//! Counters show which path ran: a small `k` launches selection kernels and no sort's.

use crate::common::{builder, ctx, rng, Random};
use crate::sort::{assert_same, gather, host_argsort, Key};
use lazycl::{Array, Axis, Context, Error, TopK, Tuning};
use ndarray::{ArrayD, IxDyn};

/// The largest `k` selected on the test device (above it the axis is sorted).
const SELECTED_K: usize = 256;

/// The host's first `k` along `axis`: positions and values, largest first if `largest`.
fn host_first_k<T: Key>(host: &ArrayD<T>, axis: usize, k: usize, largest: bool) -> (ArrayD<u32>, ArrayD<T>) {
    let ix = host_argsort(host, axis, largest);
    let vals = gather(host, axis, &ix);
    let range = ndarray::Slice::from(0..k);
    (
        ix.slice_axis(ndarray::Axis(axis), range).to_owned(),
        vals.slice_axis(ndarray::Axis(axis), range).to_owned(),
    )
}

/// Checks `got` against the host's first `k` of `host` along `axis`.
fn check<T: Key>(got: TopK<T>, host: &ArrayD<T>, axis: usize, k: usize, largest: bool, what: &str) {
    let (want_ix, want) = host_first_k(host, axis, k, largest);
    let ix = got.indices.to_ndarray().unwrap();
    assert_eq!(ix.shape(), want_ix.shape(), "{what}: shape");
    assert_eq!(ix, want_ix, "{what}: indices");
    let vals = got.values.to_ndarray().unwrap();
    assert_eq!(vals.shape(), want.shape(), "{what}: values' shape");
    assert_same(
        vals.as_standard_layout().as_slice().unwrap(),
        want.as_standard_layout().as_slice().unwrap(),
        &format!("{what}: values"),
    );
}

/// Both orders of `host` along `axis` for each `k` (those up to the axis's length).
fn check_ks<T: Key>(c: &Context, host: &ArrayD<T>, axis: isize, ks: &[usize], what: &str) {
    let a = c.array(host).unwrap();
    let ax = axis.rem_euclid(host.ndim() as isize) as usize;
    for &k in ks.iter().filter(|&&k| k <= host.shape()[ax]) {
        let what = format!("{what} {:?} axis {axis} k {k}", T::DTYPE);
        check(
            a.topk_axis(k, axis).unwrap(),
            host,
            ax,
            k,
            true,
            &format!("topk {what}"),
        );
        check(
            a.bottomk_axis(k, axis).unwrap(),
            host,
            ax,
            k,
            false,
            &format!("bottomk {what}"),
        );
    }
}

fn every_k<T: Key>(seed: u64) {
    let c = ctx();
    let mut r = rng(seed);
    for len in [1usize, 2, 7, 300, 1001] {
        let ks = [0, 1, 2, 16, 255, SELECTED_K, SELECTED_K + 1, len];
        for few in [true, false] {
            let n = 3 * len;
            let v = if few {
                T::few(&mut r, n)
            } else {
                T::random_vec(&mut r, n)
            };
            let host = ArrayD::from_shape_vec(IxDyn(&[3, len]), v).unwrap();
            check_ks(&c, &host, -1, &ks, &format!("[3, {len}] few {few}"));
        }
    }
    // One row of 65,536 (split into parts) and a few (a group each, or two parts).
    for rows in [1usize, 3] {
        let host = ArrayD::from_shape_vec(IxDyn(&[rows, 65_536]), T::few(&mut r, rows * 65_536)).unwrap();
        check_ks(&c, &host, 1, &[1, 16, SELECTED_K], &format!("[{rows}, 65536]"));
    }
}

#[test]
fn selects_i32_like_a_stable_sort() {
    every_k::<i32>(21);
}

#[test]
fn selects_u32_like_a_stable_sort() {
    every_k::<u32>(22);
}

#[test]
fn selects_i64_like_a_stable_sort() {
    every_k::<i64>(23);
}

#[test]
fn selects_u64_like_a_stable_sort() {
    every_k::<u64>(24);
}

#[test]
fn selects_f32_like_a_stable_sort() {
    every_k::<f32>(25);
}

#[test]
fn selects_f64_like_a_stable_sort() {
    every_k::<f64>(26);
}

#[test]
fn selects_along_every_axis() {
    let c = ctx();
    let mut r = rng(27);
    let host = ArrayD::from_shape_vec(IxDyn(&[5, 6, 7]), f32::few(&mut r, 210)).unwrap();
    let ints = ArrayD::from_shape_vec(IxDyn(&[3, 2000, 2]), i64::few(&mut r, 12_000)).unwrap();
    for axis in [0isize, 1, 2, -1, -2, -3] {
        check_ks(&c, &host, axis, &[1, 3, 5], "[5, 6, 7]");
        check_ks(&c, &ints, axis, &[1, 2, 16], "[3, 2000, 2]");
    }
    // The default axis is the last.
    let a = c.array(&host).unwrap();
    check(a.bottomk(4).unwrap(), &host, 2, 4, false, "bottomk");
    check(a.topk(4).unwrap(), &host, 2, 4, true, "topk");
}

#[test]
fn signed_zeros_infinities_and_nan_take_the_sorts_order() {
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
    let low = a.bottomk(9).unwrap();
    assert_eq!(low.indices.to_vec().unwrap(), vec![6, 5, 2, 8, 1, 7, 3, 0, 4]);
    // NaN only where fewer than k others: the six smallest hold none.
    let low = a.bottomk(6).unwrap();
    assert_same(
        &low.values.to_vec().unwrap(),
        &[f32::NEG_INFINITY, -1.0, -0.0, -0.0, 0.0, 0.0],
        "bottomk",
    );
    let high = a.topk(4).unwrap();
    assert_eq!(high.indices.to_vec().unwrap(), vec![0, 4, 3, 1]);
    assert_same(
        &high.values.to_vec().unwrap(),
        &[f32::NAN, f32::NAN, f32::INFINITY, 0.0],
        "topk",
    );
    assert!(high.values.to_vec().unwrap()[3].is_sign_positive());
}

/// The change in `c`'s counters while `f` runs.
fn counted(c: &Context, f: impl FnOnce()) -> lazycl::Stats {
    let before = c.stats();
    f();
    c.stats() - before
}

#[test]
fn a_small_k_launches_no_sort_kernel_and_never_waits() {
    let c = ctx();
    let mut r = rng(28);
    let host = ArrayD::from_shape_vec(IxDyn(&[64, 5000]), f32::random_vec(&mut r, 320_000)).unwrap();
    let a = c.array(&host).unwrap();
    for k in [1, 16, SELECTED_K] {
        let mut keep = None;
        let d = counted(&c, || keep = Some(a.bottomk(k).unwrap()));
        assert_eq!(d.sort_kernels_launched, 0, "k {k}: {d:?}");
        assert_eq!(d.select_kernels_launched, 1, "k {k}: {d:?}");
        assert_eq!(d.host_waits, 0, "k {k}: {d:?}");
        check(keep.unwrap(), &host, 1, k, false, &format!("k {k}"));
    }
    // One long row: its parts, then their candidates.
    let row = c.from_slice(&f32::random_vec(&mut r, 65_536)).unwrap();
    let d = counted(&c, || drop(row.topk(16).unwrap()));
    assert_eq!(
        (d.sort_kernels_launched, d.select_kernels_launched),
        (0, 2),
        "{d:?}"
    );
    // Above the selection's k, and with the switch on, the whole axis is sorted.
    let d = counted(&c, || drop(a.topk(SELECTED_K + 1).unwrap()));
    assert!(
        d.sort_kernels_launched >= 1 && d.select_kernels_launched == 0,
        "{d:?}"
    );
    let sorting = builder()
        .tuning(Tuning {
            topk_by_sort: true,
            ..Tuning::default()
        })
        .build()
        .unwrap();
    let b = sorting.array(&host).unwrap();
    let mut keep = None;
    let d = counted(&sorting, || keep = Some(b.bottomk(16).unwrap()));
    assert!(
        d.sort_kernels_launched >= 1 && d.select_kernels_launched == 0,
        "{d:?}"
    );
    check(keep.unwrap(), &host, 1, 16, false, "sorted");
}

#[test]
fn a_lazy_operand_is_computed_then_selected() {
    let c = ctx();
    let mut r = rng(29);
    let v = f64::random_vec(&mut r, 4000);
    let a = c.from_shape_slice([4, 1000], &v).unwrap();
    let got = (&a * -2.0 + 1.0).bottomk(3).unwrap();
    let host = ArrayD::from_shape_vec(IxDyn(&[4, 1000]), v.iter().map(|x| x * -2.0 + 1.0).collect()).unwrap();
    check(got, &host, 1, 3, false, "lazy");
    // The results feed lazy consumers like any other array.
    let top = a.topk(2).unwrap();
    let sum: Vec<f64> = (&top.values * 2.0).to_vec().unwrap();
    let (_, want) = host_first_k(&ArrayD::from_shape_vec(IxDyn(&[4, 1000]), v).unwrap(), 1, 2, true);
    assert_eq!(sum, want.iter().map(|x| x * 2.0).collect::<Vec<_>>());
}

#[test]
fn bad_selections_are_errors() {
    let c = ctx();
    let a = c
        .from_shape_slice([2, 3], &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])
        .unwrap();
    let msg = |e: Error| e.to_string();
    let e = msg(a.bottomk(4).err().unwrap());
    assert!(
        e.contains("bottomk") && e.contains("k = 4") && e.contains("[2, 3]"),
        "{e}"
    );
    let e = msg(a.bottomk_axis(3, Axis(0)).err().unwrap());
    assert!(
        e.contains("bottomk_axis") && e.contains("k = 3") && e.contains("axis 0"),
        "{e}"
    );
    let e = msg(a.bottomk_axis(1, -3).err().unwrap());
    assert!(
        e.contains("bottomk_axis") && e.contains("-3") && e.contains("[2, 3]"),
        "{e}"
    );
    let e = msg(c.scalar(1.0f32).unwrap().bottomk(0).err().unwrap());
    assert!(e.contains("zero-dimensional"), "{e}");
    // The operand's own failure is the error, even for k = 0.
    let bad: Array<f32> = &a + &c.from_slice(&[1.0f32, 2.0]).unwrap();
    let e = msg(bad.bottomk(0).err().unwrap());
    assert!(e.contains("[2, 3]") && e.contains("[2]"), "{e}");
    // An empty axis has only k = 0.
    let empty = c.zeros::<i32>([3, 0]).unwrap();
    let t = empty.topk(0).unwrap();
    assert_eq!(t.values.shape(), &[3, 0]);
    assert!(empty.topk(1).is_err());
}
