//! `take` (gather along an axis) against a host reference: element and index types,
//! every axis, index arrays of several shapes (0 and 1 elements, 2-D), out-of-range and
//! negative indices (clamped, as numpy's `mode='clip'`); fused into its consumers.

use crate::common::{ctx, rng, Random};
use lazycl::{s, Array, Axis, Context, Element, Integer};
use ndarray::{ArrayD, IxDyn};
use rand::Rng;

/// numpy's `take(data, idx, axis, mode='clip')` on the host.
fn host_take<T: Copy>(data: &ArrayD<T>, axis: usize, idx: &[i64], idx_shape: &[usize]) -> ArrayD<T> {
    let n = data.shape()[axis] as i64;
    let shape: Vec<usize> = data.shape()[..axis]
        .iter()
        .chain(idx_shape)
        .chain(&data.shape()[axis + 1..])
        .copied()
        .collect();
    let picked = idx_shape.len();
    ArrayD::from_shape_fn(IxDyn(&shape), |at| {
        let at: Vec<usize> = (0..shape.len()).map(|k| at[k]).collect();
        let flat = at[axis..axis + picked]
            .iter()
            .zip(idx_shape)
            .fold(0, |f, (&i, &d)| f * d + i);
        let i = idx[flat].clamp(0, n - 1) as usize;
        let mut src: Vec<usize> = at[..axis].to_vec();
        src.push(i);
        src.extend(&at[axis + picked..]);
        data[IxDyn(&src)]
    })
}

/// Random indices in `-3..n + 3` (some outside the axis), as type `I`.
fn indices<I: Integer + TryFrom<i64>>(
    r: &mut rand::rngs::StdRng,
    n: usize,
    count: usize,
) -> (Vec<I>, Vec<i64>) {
    let signed = I::DTYPE.is_signed();
    let lo = if signed { -3 } else { 0 };
    let raw: Vec<i64> = (0..count).map(|_| r.gen_range(lo..n as i64 + 3)).collect();
    let typed = raw
        .iter()
        .map(|&v| I::try_from(v).ok().expect("an index of the type"))
        .collect();
    (typed, raw)
}

fn check<T: Element + Random, I: Integer + TryFrom<i64>>(
    c: &Context,
    shape: &[usize],
    idx_shape: &[usize],
    seed: u64,
) {
    let mut r = rng(seed);
    let n: usize = shape.iter().product();
    let host = ArrayD::from_shape_vec(IxDyn(shape), T::random_vec(&mut r, n)).unwrap();
    let a = c.array(&host).unwrap();
    for axis in 0..shape.len() {
        if shape[axis] == 0 {
            continue;
        }
        let count = idx_shape.iter().product();
        let (typed, raw) = indices::<I>(&mut r, shape[axis], count);
        let idx: Array<I> = c.from_shape_slice(idx_shape.to_vec(), &typed).unwrap();
        let got = a.take(Axis(axis), &idx).to_ndarray().unwrap();
        let want = host_take(&host, axis, &raw, idx_shape);
        assert_eq!(
            got,
            want,
            "{} by {}: shape {shape:?}, axis {axis}, indices {raw:?}",
            std::any::type_name::<T>(),
            std::any::type_name::<I>()
        );
    }
}

#[test]
fn take_matches_the_host_for_every_type_axis_and_index_shape() {
    let c = ctx();
    let shapes: &[&[usize]] = &[&[1], &[7], &[5, 3], &[4, 1, 6], &[3, 0, 2]];
    let index_shapes: &[&[usize]] = &[&[0], &[1], &[5], &[2, 3]];
    for (i, shape) in shapes.iter().enumerate() {
        for (j, idx_shape) in index_shapes.iter().enumerate() {
            let seed = (10 * i + j) as u64;
            check::<f32, u32>(&c, shape, idx_shape, seed);
            check::<i64, i64>(&c, shape, idx_shape, seed);
        }
    }
    for shape in [&[9usize][..], &[4, 5]] {
        check::<f64, i32>(&c, shape, &[6], 1);
        check::<u32, u64>(&c, shape, &[6], 2);
        check::<bool, u32>(&c, shape, &[3, 2], 3);
        check::<i32, i64>(&c, shape, &[1, 1], 4);
    }
}

/// A `take` is computed in the kernel of the elementwise work that reads it; lazy
/// indices too. A lazy data array is computed first (it is read through the index).
#[test]
fn take_feeding_elementwise_work_is_one_kernel() {
    let c = ctx();
    let mut r = rng(5);
    let ha = f32::random_vec(&mut r, 40 * 3);
    let hb = f32::random_vec(&mut r, 3);
    let a = c.from_shape_slice([40, 3], &ha).unwrap();
    let b = c.from_slice(&hb).unwrap();
    let hi: Vec<u32> = vec![39, 0, 7, 7, 100, 12];
    let i = c.from_slice(&hi).unwrap();
    let want = |scale: f32, shift: u32| -> Vec<f32> {
        hi.iter()
            .flat_map(|&k| {
                let row = ((k + shift) as usize).min(39);
                (0..3).map(move |j| (row, j))
            })
            .map(|(row, j)| ha[row * 3 + j] * scale + hb[j])
            .collect()
    };
    let before = c.stats();
    let got = (a.take(0, &i) * 2.0 + &b).to_vec().unwrap();
    let d = c.stats() - before;
    assert_eq!(d.kernels_launched, 1, "{d}");
    assert_eq!(got, want(2.0, 0));
    let before = c.stats();
    let got = (a.take(0, &(&i + 1u32)) * 3.0 + &b).to_vec().unwrap();
    let d = c.stats() - before;
    assert_eq!(d.kernels_launched, 1, "lazy indices in the same kernel: {d}");
    assert_eq!(got, want(3.0, 1));
    let before = c.stats();
    let got = ((&a * 2.0).take(0, &i) + &b).to_vec().unwrap();
    let d = c.stats() - before;
    assert_eq!(d.kernels_launched, 2, "lazy data computed first: {d}");
    assert_eq!(got, want(2.0, 0));
}

/// `take` read by reductions, scans, products, views and replayed flushes.
#[test]
fn take_inside_other_kernels_matches_the_host() {
    let c = ctx();
    let mut r = rng(6);
    let (n, d) = (30, 4);
    let ha: Vec<f32> = f32::random_vec(&mut r, n * d).iter().map(|v| v / 100.0).collect();
    let a = c.from_shape_slice([n, d], &ha).unwrap();
    let host = ArrayD::from_shape_vec(IxDyn(&[n, d]), ha.clone()).unwrap();
    let raw: Vec<i64> = vec![3, 29, 0, 3, 17];
    let idx = c.from_slice(&raw).unwrap();
    let picked = host_take(&host, 0, &raw, &[5]);
    let close = |got: Vec<f32>, want: Vec<f32>, what: &str| {
        assert_eq!(got.len(), want.len(), "{what}");
        for (g, w) in got.iter().zip(&want) {
            assert!((g - w).abs() <= 1e-5 * (1.0 + w.abs()), "{what}: {g} vs {w}");
        }
    };
    let sums = a.take(0, &idx).sum_axis(Axis(0)).to_vec().unwrap();
    close(
        sums,
        picked.sum_axis(ndarray::Axis(0)).iter().copied().collect(),
        "sum",
    );
    let scan = a.take(0, &idx).cumsum(Axis(0)).to_vec().unwrap();
    let mut want = picked.clone();
    want.accumulate_axis_inplace(ndarray::Axis(0), |&p, x| *x += p);
    close(scan, want.iter().copied().collect(), "cumsum");
    let w = c
        .from_shape_slice([d, 2], &[1.0f32, 0.5, -1.0, 2.0, 0.25, 0.0, 3.0, -2.0])
        .unwrap();
    let prod = a.take(0, &idx).matmul(&w).to_vec().unwrap();
    let hw = ndarray::arr2(&[[1.0f32, 0.5], [-1.0, 2.0], [0.25, 0.0], [3.0, -2.0]]);
    let picked2 = picked.clone().into_dimensionality::<ndarray::Ix2>().unwrap();
    close(prod, picked2.dot(&hw).iter().copied().collect(), "matmul");
    let view = a.take(0, &idx).slice(s![1..4;2, ..;-1]).to_vec().unwrap();
    close(
        view,
        picked2
            .slice(ndarray::s![1..4;2, ..;-1])
            .iter()
            .copied()
            .collect(),
        "view",
    );
    // The same structure again with other indices: replayed, each its own.
    for k in 0..3i64 {
        let other: Vec<i64> = raw.iter().map(|v| (v + 5 * k) % n as i64).collect();
        let idx = c.from_slice(&other).unwrap();
        let got = (a.take(0, &idx) * 1.0).to_vec().unwrap();
        close(
            got,
            host_take(&host, 0, &other, &[5]).iter().copied().collect(),
            "replay",
        );
    }
}

/// numpy's `take_along_axis(data, clip(idx), axis)` on the host, shapes broadcast.
fn host_take_along<T: Copy>(data: &ArrayD<T>, axis: usize, idx: &ArrayD<i64>) -> ArrayD<T> {
    let rank = data.ndim();
    let shape: Vec<usize> = (0..rank)
        .map(|d| match d == axis {
            true => idx.shape()[d],
            false => data.shape()[d].max(idx.shape()[d]),
        })
        .collect();
    let n = data.shape()[axis] as i64;
    ArrayD::from_shape_fn(IxDyn(&shape), |at| {
        let at: Vec<usize> = (0..rank).map(|k| at[k]).collect();
        let ip: Vec<usize> = (0..rank)
            .map(|d| if idx.shape()[d] == 1 { 0 } else { at[d] })
            .collect();
        let mut dp: Vec<usize> = (0..rank)
            .map(|d| if data.shape()[d] == 1 { 0 } else { at[d] })
            .collect();
        dp[axis] = idx[IxDyn(&ip)].clamp(0, n - 1) as usize;
        data[IxDyn(&dp)]
    })
}

#[test]
fn take_along_axis_matches_the_host_with_broadcasting() {
    let c = ctx();
    let mut r = rng(8);
    // (data shape, index shape) pairs: same shape, other lengths along the axis, and
    // broadcasting either way across the other axes.
    let cases: &[(&[usize], &[usize])] = &[
        (&[5, 4], &[5, 4]),
        (&[5, 4], &[5, 2]),
        (&[5, 4], &[1, 6]),
        (&[1, 4], &[3, 4]),
        (&[3, 1, 4], &[3, 2, 1]),
        (&[6], &[9]),
        (&[2, 3], &[2, 0]),
    ];
    for &(shape, idx_shape) in cases {
        let n: usize = shape.iter().product();
        let host = ArrayD::from_shape_vec(IxDyn(shape), f32::random_vec(&mut r, n)).unwrap();
        let a = c.array(&host).unwrap();
        for axis in 0..shape.len() {
            let count: usize = idx_shape.iter().product();
            let (typed, raw) = indices::<i32>(&mut r, shape[axis], count);
            let idx = c.from_shape_slice(idx_shape.to_vec(), &typed).unwrap();
            let raw = ArrayD::from_shape_vec(IxDyn(idx_shape), raw).unwrap();
            let fits = (0..shape.len())
                .all(|d| d == axis || shape[d] == idx_shape[d] || shape[d] == 1 || idx_shape[d] == 1);
            let got = a.take_along_axis(Axis(axis), &idx).to_ndarray();
            let what = format!("shape {shape:?}, indices {idx_shape:?}, axis {axis}");
            match fits {
                true => assert_eq!(got.unwrap(), host_take_along(&host, axis, &raw), "{what}"),
                false => assert!(got.unwrap_err().to_string().contains("take_along_axis"), "{what}"),
            }
        }
    }
    // The indices of an arg reduction pick the extremes: one kernel after the argmax.
    let m = c
        .from_shape_slice(
            [3, 4],
            &[1.0f32, 9.0, 3.0, 2.0, 7.0, 0.0, 8.0, 1.0, 4.0, 4.0, 6.0, 5.0],
        )
        .unwrap();
    let best = m.argmax_axis(1).reshape([3, 1]);
    assert_eq!(
        m.take_along_axis(Axis(1), &best).to_vec().unwrap(),
        vec![9.0, 8.0, 6.0]
    );
    let e = m
        .take_along_axis(Axis(1), &c.from_slice(&[0u32]).unwrap())
        .to_vec()
        .unwrap_err();
    assert!(e.to_string().contains("take_along_axis"), "{e}");
}

#[test]
fn bad_takes_are_errors_naming_the_problem() {
    let c = ctx();
    let a: Array<f32> = c.zeros([2, 3]).unwrap();
    let idx = c.from_slice(&[0u32]).unwrap();
    let e = a.take(Axis(2), &idx).to_vec().unwrap_err().to_string();
    assert!(
        e.contains("take") && e.contains("axis 2") && e.contains("[2, 3]"),
        "{e}"
    );
    let empty: Array<f32> = c.zeros([2, 0]).unwrap();
    let e = empty.take(Axis(1), &idx).to_vec().unwrap_err().to_string();
    assert!(e.contains("empty"), "{e}");
    // Nothing picked from an empty axis is no error.
    let none = c.from_slice(&[] as &[u32]).unwrap();
    assert_eq!(empty.take(Axis(1), &none).shape(), &[2, 0]);
    let other = lazycl::Context::new().unwrap();
    let foreign = other.from_slice(&[0u32]).unwrap();
    let e = a.take(Axis(0), &foreign).to_vec().unwrap_err().to_string();
    assert!(e.contains("take"), "{e}");
}

/// numpy's `np.add.at` along `axis`, indices outside the axis dropped, in f64.
fn host_scatter_add(dst: &ArrayD<f64>, axis: usize, idx: &[i64], src: &ArrayD<f64>) -> ArrayD<f64> {
    let mut out = dst.clone();
    let n = dst.shape()[axis] as i64;
    for (at, &v) in src.indexed_iter() {
        let at: Vec<usize> = (0..src.ndim()).map(|k| at[k]).collect();
        let i = idx[at[axis]];
        if (0..n).contains(&i) {
            let mut to = at.clone();
            to[axis] = i as usize;
            out[IxDyn(&to)] += v;
        }
    }
    out
}

trait Scatter: Element + lazycl::Numeric + Random + Into<F64> + FromF64 {}

/// The test's element types as f64 for the reference (values are small whole numbers,
/// so every sum is exact in every type).
struct F64(f64);
macro_rules! f64like {
    ($($t:ty),*) => {$(
        impl From<$t> for F64 {
            fn from(v: $t) -> Self { F64(v as f64) }
        }
        impl Scatter for $t {}
    )*};
}
f64like!(f32, f64, i32, u32, i64, u64);

fn check_scatter<T: Scatter, I: Integer + TryFrom<i64>>(
    c: &Context,
    shape: &[usize],
    axis: usize,
    m: usize,
    seed: u64,
) {
    let mut r = rng(seed);
    let small = |r: &mut rand::rngs::StdRng, n: usize| -> Vec<T> {
        // Values 0..50 in the element type (exact sums for every type).
        let ints: Vec<u32> = (0..n).map(|_| r.gen_range(0..50)).collect();
        let host: Vec<T> = ints.iter().map(|&v| T::from_f64(v as f64)).collect();
        host
    };
    let n: usize = shape.iter().product();
    let mut src_shape = shape.to_vec();
    src_shape[axis] = m;
    let dst_host = small(&mut r, n);
    let src_host = small(&mut r, src_shape.iter().product());
    let (typed, raw) = indices::<I>(&mut r, shape[axis], m);
    let mut dst = c.from_shape_slice(shape.to_vec(), &dst_host).unwrap();
    let idx = c.from_slice(&typed).unwrap();
    let src = c.from_shape_slice(src_shape.clone(), &src_host).unwrap();
    lazycl::scatter_add(&mut dst, Axis(axis), &idx, &src).unwrap();
    let got: Vec<f64> = dst.to_vec().unwrap().into_iter().map(|v| v.into().0).collect();
    let to64 = |v: &[T], s: &[usize]| {
        ArrayD::from_shape_vec(IxDyn(s), v.iter().map(|&x| x.into().0).collect()).unwrap()
    };
    let want = host_scatter_add(&to64(&dst_host, shape), axis, &raw, &to64(&src_host, &src_shape));
    assert_eq!(
        got,
        want.iter().copied().collect::<Vec<_>>(),
        "{} by {}: shape {shape:?}, axis {axis}, indices {raw:?}",
        std::any::type_name::<T>(),
        std::any::type_name::<I>()
    );
}

trait FromF64 {
    fn from_f64(v: f64) -> Self;
}
macro_rules! from_f64 {
    ($($t:ty),*) => {$( impl FromF64 for $t { fn from_f64(v: f64) -> Self { v as $t } } )*};
}
from_f64!(f32, f64, i32, u32, i64, u64);

#[test]
fn scatter_add_matches_the_host_for_every_type_with_repeated_and_dropped_indices() {
    let c = ctx();
    let cases: &[(&[usize], usize, usize)] = &[
        (&[7], 0, 20),
        (&[5, 3], 0, 9),
        (&[5, 3], 1, 4),
        (&[4, 1, 6], 2, 11),
        (&[3], 0, 1),
    ];
    for (i, &(shape, axis, m)) in cases.iter().enumerate() {
        let seed = 300 + i as u64;
        check_scatter::<f32, i32>(&c, shape, axis, m, seed);
        check_scatter::<u64, u32>(&c, shape, axis, m, seed);
    }
    check_scatter::<f64, i64>(&c, &[6, 2], 0, 15, 1);
    check_scatter::<i32, u64>(&c, &[6, 2], 1, 7, 2);
    check_scatter::<u32, i32>(&c, &[9], 0, 30, 3);
    check_scatter::<i64, u32>(&c, &[2, 9], 1, 30, 4);
}

/// A lazy value is computed in the adding kernel; a value reading the target is computed
/// first; another handle on the target keeps its old values (copy on write); the counts
/// of `bincount` drop values outside the range.
#[test]
fn scatter_add_fuses_its_values_and_keeps_other_handles() {
    let c = ctx();
    let x = c
        .from_shape_slice([4, 2], &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0])
        .unwrap();
    let rows = c.from_slice(&[1u32, 1, 0, 3]).unwrap();
    let mut d = c.zeros::<f32>([3, 2]).unwrap();
    d.eval().unwrap();
    let before = c.stats();
    lazycl::scatter_add(&mut d, Axis(0), &rows, &(&x * 2.0 + 1.0)).unwrap();
    let s = c.stats() - before;
    assert_eq!(s.kernels_launched, 1, "{s}");
    // Rows 0 and 1 of x (scaled) both into row 1, row 2 into row 0, row 3 dropped.
    assert_eq!(d.to_vec().unwrap(), vec![11.0, 13.0, 10.0, 14.0, 0.0, 0.0]);
    let kept = d.clone();
    let idx = c.from_slice(&[0u32, 2]).unwrap();
    let first_rows = d.slice(s![0..2, ..]);
    lazycl::scatter_add(&mut d, Axis(0), &idx, &first_rows).unwrap();
    assert_eq!(d.to_vec().unwrap(), vec![22.0, 26.0, 10.0, 14.0, 10.0, 14.0]);
    assert_eq!(kept.to_vec().unwrap(), vec![11.0, 13.0, 10.0, 14.0, 0.0, 0.0]);
    // A scalar broadcasts: a histogram.
    let mut h = c.zeros::<u32>([4]).unwrap();
    let v = c.from_slice(&[3i64, 0, 3, -1, 4, 3]).unwrap();
    lazycl::scatter_add(&mut h, 0, &v, 1u32).unwrap();
    assert_eq!(h.to_vec().unwrap(), vec![1, 0, 0, 3]);
    assert_eq!(v.bincount(5).unwrap().to_vec().unwrap(), vec![1, 0, 0, 3, 1]);
    assert_eq!(v.bincount(0).unwrap().to_vec().unwrap(), Vec::<u32>::new());
    let mut r = rng(9);
    let many: Vec<u32> = (0..5000).map(|_| r.gen_range(0..40)).collect();
    let mut want = vec![0u32; 37];
    for &k in &many {
        if (k as usize) < 37 {
            want[k as usize] += 1;
        }
    }
    let got = c
        .from_slice(&many)
        .unwrap()
        .bincount(37)
        .unwrap()
        .to_vec()
        .unwrap();
    assert_eq!(got, want);
}

#[test]
fn bad_scatters_are_errors_naming_the_problem() {
    let c = ctx();
    let mut d = c.zeros::<f32>([3, 2]).unwrap();
    let idx = c.from_slice(&[0u32, 1]).unwrap();
    let e = lazycl::scatter_add(&mut d, Axis(2), &idx, 1.0f32)
        .unwrap_err()
        .to_string();
    assert!(e.contains("scatter_add") && e.contains("axis 2"), "{e}");
    let idx2 = c.from_shape_slice([1, 2], &[0u32, 1]).unwrap();
    let e = lazycl::scatter_add(&mut d, Axis(0), &idx2, 1.0f32)
        .unwrap_err()
        .to_string();
    assert!(e.contains("one-dimensional"), "{e}");
    let wrong = c.zeros::<f32>([3, 2]).unwrap();
    let e = lazycl::scatter_add(&mut d, Axis(0), &idx, &wrong)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("scatter_add") && e.contains("[2, 2]") && e.contains("[3, 2]"),
        "{e}"
    );
    let e = idx2.bincount(3).unwrap_err().to_string();
    assert!(e.contains("bincount"), "{e}");
    assert_eq!(d.to_vec().unwrap(), vec![0.0; 6], "nothing was added");
}

/// Indices at the ends of every index type clamp as numbers, not as bit patterns: a `u64`
/// past `i64::MAX` (or `u32::MAX`) is past the end and picks the last element, a negative
/// one the first; in `take`, in `take_along_axis`, and through a lazy index expression.
#[test]
fn extreme_indices_clamp_to_the_nearest_end() {
    let ctx = ctx();
    let data = ctx.from_slice(&[10i32, 20, 30]).unwrap();
    let wide = [u64::MAX, 1 << 63, (1 << 63) - 1, 1 << 32, 3, 2, 1, 0];
    let want = [30, 30, 30, 30, 30, 30, 20, 10];
    let idx = ctx.from_slice(&wide).unwrap();
    assert_eq!(data.take(0, &idx).to_vec().unwrap(), want, "take, u64");
    assert_eq!(
        data.take_along_axis(0, &idx).to_vec().unwrap(),
        want,
        "take_along_axis, u64"
    );
    // Computed on the device: u64::MAX - i past i64::MAX.
    let from_max = ctx.from_slice(&[0u64, 1, 2]).unwrap();
    let lazy = (&from_max * u64::MAX) + 0u64; // 0, u64::MAX, u64::MAX - 1 (wrapping)
    assert_eq!(data.take(0, &lazy).to_vec().unwrap(), [10, 30, 30], "lazy u64");
    let narrow = ctx.from_slice(&[u32::MAX, 1 << 31, 2, 0]).unwrap();
    assert_eq!(data.take(0, &narrow).to_vec().unwrap(), [30, 30, 30, 10], "u32");
    let signed = ctx.from_slice(&[i64::MIN, -1, i64::MAX, 1]).unwrap();
    assert_eq!(data.take(0, &signed).to_vec().unwrap(), [10, 10, 30, 20], "i64");
    let small = ctx.from_slice(&[i32::MIN, i32::MAX, -1, 2]).unwrap();
    assert_eq!(data.take(0, &small).to_vec().unwrap(), [10, 30, 10, 30], "i32");
    // On a 2-D array along both axes.
    let m = ctx
        .from_shape_slice([2, 3], &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])
        .unwrap();
    let cols = ctx.from_slice(&[u64::MAX, 0]).unwrap();
    assert_eq!(m.take(1, &cols).to_vec().unwrap(), [3.0, 1.0, 6.0, 4.0]);
    assert_eq!(m.take(0, &cols).to_vec().unwrap(), [4.0, 5.0, 6.0, 1.0, 2.0, 3.0]);
}

/// Scatters and `bincount` whose indices are computed by whole kernels (a scan, a
/// reduction, a product, a sort) or views of them, against the host: every element lands
/// where its index says, not one.
#[test]
fn scatter_indices_computed_by_any_kernel_match_the_host() {
    let ctx = ctx();
    let host_count = |idx: &[i64], len: usize| -> Vec<u32> {
        let mut c = vec![0u32; len];
        for &i in idx {
            if (0..len as i64).contains(&i) {
                c[i as usize] += 1;
            }
        }
        c
    };
    let steps = ctx.from_slice(&[0i64, 1, 0, 1, 1, 0, 2]).unwrap();
    // cumsum: 0 1 1 2 3 3 5
    let scanned = steps.cumsum(0);
    assert_eq!(
        scanned.bincount(6).unwrap().to_vec().unwrap(),
        host_count(&[0, 1, 1, 2, 3, 3, 5], 6)
    );
    let twice = steps.cumsum(0).cumsum(0); // 0 1 2 4 7 10 15
    assert_eq!(
        twice.bincount(16).unwrap().to_vec().unwrap(),
        host_count(&[0, 1, 2, 4, 7, 10, 15], 16)
    );
    let y = ctx.from_slice(&[5i32, 6, 6, 7, 9]).unwrap();
    let shifted = &y - y.amin(); // 0 1 1 2 4
    assert_eq!(
        shifted.bincount(3).unwrap().to_vec().unwrap(),
        host_count(&[0, 1, 1, 2, 4], 3)
    );
    // A view of a scan (reversed), and a sort's result.
    let reversed = scanned.slice(lazycl::s![..;-1]);
    assert_eq!(
        reversed.bincount(6).unwrap().to_vec().unwrap(),
        host_count(&[5, 3, 3, 2, 1, 1, 0], 6)
    );
    let sorted = ctx.from_slice(&[3u32, 0, 2, 2]).unwrap().sort().unwrap();
    assert_eq!(sorted.bincount(4).unwrap().to_vec().unwrap(), [1, 0, 2, 1]);
    // A product's column as indices, and scatter_add of values along both axes.
    let a = ctx.from_shape_slice([3, 2], &[1i32, 0, 0, 1, 1, 1]).unwrap();
    let b = ctx.from_shape_slice([2, 1], &[1i32, 2]).unwrap();
    let picked = a.matmul(&b).reshape([3]); // 1 2 3
    let vals = ctx.from_slice(&[1.5f32, -2.0, 4.0]).unwrap();
    let mut d = ctx.zeros::<f32>(4).unwrap();
    lazycl::scatter_add(&mut d, 0, &picked, &vals).unwrap();
    assert_eq!(d.to_vec().unwrap(), [0.0, 1.5, -2.0, 4.0]);
    let mut r = rng(8);
    let x = f32::random_vec(&mut r, 7);
    let mut sums = ctx.zeros::<f32>(6).unwrap();
    lazycl::scatter_add(&mut sums, 0, &scanned, ctx.from_slice(&x).unwrap()).unwrap();
    let mut want = [0.0f32; 6];
    for (i, &p) in [0usize, 1, 1, 2, 3, 3, 5].iter().enumerate() {
        want[p] += x[i];
    }
    let got = sums.to_vec().unwrap();
    for (g, w) in got.iter().zip(want) {
        assert!((g - w).abs() <= 1e-5 * (1.0 + w.abs()), "{got:?} vs {want:?}");
    }
    let mut m = ctx.zeros::<f32>([2, 6]).unwrap();
    let rows = ctx
        .from_shape_slice([2, 7], &[x.clone(), x.clone()].concat())
        .unwrap();
    lazycl::scatter_add(&mut m, 1, &scanned, &rows).unwrap();
    let got = m.to_vec().unwrap();
    for (k, w) in want.iter().chain(&want).enumerate() {
        assert!((got[k] - w).abs() <= 1e-5 * (1.0 + w.abs()), "{got:?}");
    }
}

/// `take` and `take_along_axis` of whole kernels' results (a product, a scan, a scan of a
/// scan, a reduction along an axis), each against the host.
#[test]
fn takes_of_products_scans_and_reductions_match_the_host() {
    let ctx = ctx();
    let a = ctx
        .from_shape_slice([2, 3], &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])
        .unwrap();
    let b = ctx
        .from_shape_slice([3, 2], &[1.0f32, 0.0, 0.0, 1.0, 1.0, 1.0])
        .unwrap();
    // a·b = [[4, 5], [10, 11]]
    let idx = ctx.from_slice(&[1u32, 0, 1]).unwrap();
    let p = a.matmul(&b);
    assert_eq!(
        p.take(0, &idx).to_vec().unwrap(),
        [10.0, 11.0, 4.0, 5.0, 10.0, 11.0]
    );
    assert_eq!(
        p.take(1, &idx).to_vec().unwrap(),
        [5.0, 4.0, 5.0, 11.0, 10.0, 11.0]
    );
    assert_eq!(
        (a.matmul(&b) * 2.0f32).take(0, &idx).to_vec().unwrap(),
        [20.0, 22.0, 8.0, 10.0, 20.0, 22.0]
    );
    let x = ctx.from_slice(&[1i32, 2, 3, 4]).unwrap();
    let pick = ctx.from_slice(&[3i64, 0, 2]).unwrap();
    // cumsum 1 3 6 10; twice 1 4 10 20
    assert_eq!(x.cumsum(0).take(0, &pick).to_vec().unwrap(), [10, 1, 6]);
    assert_eq!(
        x.cumsum(0).cumsum(0).take(0, &pick).to_vec().unwrap(),
        [20, 1, 10]
    );
    assert_eq!(a.sum_axis(1).take(0, &idx).to_vec().unwrap(), [15.0, 6.0, 15.0]);
    let along = ctx.from_shape_slice([2, 1], &[1u32, 0]).unwrap();
    assert_eq!(p.take_along_axis(1, &along).to_vec().unwrap(), [5.0, 10.0]);
    assert_eq!(
        a.cumsum(1).take_along_axis(1, &along).to_vec().unwrap(),
        [3.0, 4.0]
    );
    // Takes of the product's own shape (which an epilogue could take in).
    let two = ctx.from_slice(&[1u64, 0]).unwrap();
    assert_eq!(p.take(0, &two).to_vec().unwrap(), [10.0, 11.0, 4.0, 5.0]);
    assert_eq!((p.take(1, &two) + &p).to_vec().unwrap(), [9.0, 9.0, 21.0, 21.0]);
    let four = ctx.from_slice(&[3u32, 0, 2, 2]).unwrap();
    assert_eq!(x.cumsum(0).take(0, &four).to_vec().unwrap(), [10, 1, 6, 6]);
    assert_eq!(
        x.cumsum(0).cumsum(0).take(0, &four).to_vec().unwrap(),
        [20, 1, 10, 10]
    );
    assert_eq!(
        (x.cumsum(0).take(0, &four) + x.cumsum(0)).to_vec().unwrap(),
        [11, 4, 12, 16]
    );
    let rows = ctx.from_shape_slice([2, 3], &[2u32, 0, 1, 1, 1, 0]).unwrap();
    assert_eq!(
        a.cumsum(1).take_along_axis(1, &rows).to_vec().unwrap(),
        [6.0, 1.0, 3.0, 9.0, 9.0, 4.0]
    );
    // A take as the indices of another take of a scan.
    let again = x.cumsum(0).take(0, &x.take(0, &pick).cast::<u32>().take(0, &idx));
    // x.take(pick) = 4 1 3; .take(idx 1 0 1) = 1 4 1; cumsum(1 3 6 10) at [1, 4->3, 1] = 3 10 3
    assert_eq!(again.to_vec().unwrap(), [3, 10, 3]);
}

#[test]
fn scatter_values_computed_by_a_scan_of_memory_match_the_host() {
    // Values that are a scan (a kernel of its own) of an upload, of a sort's result and
    // of lazy work, with elementwise work after the scan.
    let ctx = ctx();
    let n = 37;
    let mut r = rng(31);
    let flags: Vec<u32> = (0..n).map(|_| r.gen_range(0..2u32)).collect();
    let pos: Vec<u32> = (0..n as u32).rev().collect();
    let mut run = 0u32;
    let scanned: Vec<u32> = flags
        .iter()
        .map(|&f| {
            run += f;
            run
        })
        .collect();
    let mut want = vec![0u32; n];
    for (i, &p) in pos.iter().enumerate() {
        want[p as usize] = scanned[i].wrapping_add(7);
    }
    let pos = ctx.from_slice(&pos).unwrap();
    let up = ctx.from_slice(&flags).unwrap();
    let sorted_then_back = {
        let s = up.argsort().unwrap();
        // The sort's result is a permutation of the flags: scatter them back first.
        let mut back = ctx.zeros::<u32>([n]).unwrap();
        lazycl::scatter_add(&mut back, 0, &s, up.take(0, &s)).unwrap();
        back
    };
    for (what, x) in [
        ("an upload", up.clone()),
        ("a scattered result", sorted_then_back),
        ("lazy work", &up * 1u32),
    ] {
        let mut out = ctx.zeros::<u32>([n]).unwrap();
        lazycl::scatter_add(&mut out, 0, &pos, &(x.cumsum(0) + 7u32)).unwrap();
        assert_eq!(out.to_vec().unwrap(), want, "values: the scan of {what}");
    }
}
