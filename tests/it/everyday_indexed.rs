//! `searchsorted` and `scatter` (a scatter that sets) against host references on random
//! data: element and index types, 1-d and batched sorted arrays, NaN (sorted last), size
//! 0 and 1, negative axes, duplicate and out-of-range indices; a search fused into its
//! reader; the last of several indices landing on one element wins, on every run.

use crate::common::{ctx, rng, Random};
use lazycl::{Context, Element, Integer, SearchSide};
use ndarray::{ArrayD, IxDyn};
use rand::Rng;

/// numpy's order: NaN after every number.
fn lt(a: f64, b: f64) -> bool {
    a < b || (b.is_nan() && !a.is_nan())
}

/// numpy's `searchsorted(sorted, v, side)` on the host (`sorted` in numpy's order).
fn host_search(sorted: &[f64], v: f64, side: SearchSide) -> u32 {
    let n = match side {
        SearchSide::Left => sorted.iter().filter(|&&s| lt(s, v)).count(),
        SearchSide::Right => sorted.iter().filter(|&&s| !lt(v, s)).count(),
    };
    n as u32
}

/// Sorted random values with repeats.
fn sorted_values<T: Element + Random + Into<f64>>(seed: u64, n: usize) -> Vec<T> {
    let mut r = rng(seed);
    let pool = T::random_vec(&mut r, n.div_ceil(2).max(1));
    let mut v: Vec<T> = (0..n).map(|_| pool[r.gen_range(0..pool.len())]).collect();
    v.sort_by(|a, b| (*a).into().partial_cmp(&(*b).into()).unwrap());
    v
}

fn check_search<T: Element + lazycl::Numeric + Random + Into<f64>>(c: &Context) {
    for (k, &n) in [0usize, 1, 2, 17, 300].iter().enumerate() {
        let sorted = sorted_values::<T>(k as u64, n);
        let s = c.from_slice(&sorted).unwrap();
        let host_sorted: Vec<f64> = sorted.iter().map(|&x| x.into()).collect();
        for values_shape in [&[0usize][..], &[1], &[5, 3], &[64]] {
            let m: usize = values_shape.iter().product();
            // Values: some drawn from the sorted array (ties), some random.
            let mut r = rng(50 + k as u64);
            let fresh = T::random_vec(&mut r, m);
            let values: Vec<T> = (0..m)
                .map(|i| match (i % 2 == 0 && n > 0, i) {
                    (true, _) => sorted[r.gen_range(0..n)],
                    _ => fresh[i],
                })
                .collect();
            let v = c.from_shape_slice(values_shape, &values).unwrap();
            for side in [SearchSide::Left, SearchSide::Right] {
                let got = s.searchsorted(&v, side);
                assert_eq!(got.shape(), values_shape);
                let want: Vec<u32> = values
                    .iter()
                    .map(|&x| host_search(&host_sorted, x.into(), side))
                    .collect();
                assert_eq!(
                    got.to_vec().unwrap(),
                    want,
                    "{side:?}, {n} sorted, values {values_shape:?}"
                );
            }
        }
    }
}

#[test]
fn searchsorted_matches_numpy_for_each_element_type() {
    let c = ctx();
    check_search::<f32>(&c);
    check_search::<f64>(&c);
    check_search::<i32>(&c);
    check_search::<u32>(&c);
}

#[test]
fn searchsorted_orders_nan_last_as_numpy_sorts_it() {
    let c = ctx();
    let sorted = [-1.0f32, 0.5, 0.5, 2.0, f32::NAN, f32::NAN];
    let s = c.from_slice(&sorted).unwrap();
    let values = [f32::NAN, 0.5, -5.0, 9.0, f32::INFINITY];
    let v = c.from_slice(&values).unwrap();
    let host: Vec<f64> = sorted.iter().map(|&x| f64::from(x)).collect();
    for side in [SearchSide::Left, SearchSide::Right] {
        let want: Vec<u32> = values
            .iter()
            .map(|&x| host_search(&host, f64::from(x), side))
            .collect();
        assert_eq!(s.searchsorted(&v, side).to_vec().unwrap(), want, "{side:?}");
    }
    assert_eq!(
        s.searchsorted(&v, SearchSide::Left).to_vec().unwrap(),
        [4, 1, 0, 4, 4]
    );
    assert_eq!(
        s.searchsorted(&v, SearchSide::Right).to_vec().unwrap(),
        [6, 3, 0, 4, 4]
    );
}

#[test]
fn searchsorted_batched_over_leading_axes() {
    let c = ctx();
    let (rows, n, m) = (4, 11, 6);
    let mut sorted = Vec::new();
    for row in 0..rows {
        sorted.extend(sorted_values::<f32>(70 + row as u64, n));
    }
    let values = f32::random_vec(&mut rng(80), rows * m);
    let s = c.from_shape_slice([rows, n], &sorted).unwrap();
    for (vshape, vrows) in [([rows, m], rows), ([1, m], 1)] {
        let v = c.from_shape_slice(vshape, &values[..vrows * m]).unwrap();
        for side in [SearchSide::Left, SearchSide::Right] {
            let got = s.searchsorted(&v, side);
            assert_eq!(got.shape(), [rows, m]);
            let want: Vec<u32> = (0..rows * m)
                .map(|ij| {
                    let (i, j) = (ij / m, ij % m);
                    let row: Vec<f64> = sorted[i * n..(i + 1) * n].iter().map(|&x| f64::from(x)).collect();
                    host_search(&row, f64::from(values[(i % vrows) * m + j]), side)
                })
                .collect();
            assert_eq!(got.to_vec().unwrap(), want, "{side:?} values {vshape:?}");
        }
    }
    let err = s
        .searchsorted(&c.from_slice(&[1.0f32]).unwrap(), SearchSide::Left)
        .to_vec()
        .unwrap_err();
    assert!(err.to_string().contains("searchsorted"), "{err}");
}

#[test]
fn searchsorted_of_a_lazy_value_is_one_kernel_with_its_reader() {
    let c = ctx();
    let sorted = sorted_values::<f32>(90, 1000);
    let s = c.from_slice(&sorted).unwrap();
    let x = c.from_slice(&f32::random_vec(&mut rng(91), 257)).unwrap();
    let run = || {
        (s.searchsorted(&(&x * 0.5), SearchSide::Right) + 1u32)
            .to_vec()
            .unwrap()
    };
    run();
    let before = c.stats();
    let got = run();
    let d = c.stats() - before;
    assert_eq!(d.kernels_launched, 1, "values, search and sum in one kernel: {d}");
    let host: Vec<f64> = sorted.iter().map(|&v| f64::from(v)).collect();
    let want: Vec<u32> = x
        .to_vec()
        .unwrap()
        .iter()
        .map(|&v| host_search(&host, f64::from(v * 0.5), SearchSide::Right) + 1)
        .collect();
    assert_eq!(got, want);
}

/// numpy's `put_along_axis` on a copy, out-of-range indices dropped: every position of
/// `idx` (shape `ishape`, broadcast to `a`'s off `axis`) in C order, the last write winning.
fn host_scatter<T: Copy>(a: &ArrayD<T>, axis: usize, idx: &ArrayD<i64>, values: &ArrayD<T>) -> ArrayD<T> {
    let mut out = a.clone();
    let mut space = a.shape().to_vec();
    space[axis] = idx.shape()[axis];
    let idx = idx.broadcast(IxDyn(&space)).unwrap();
    let values = values.broadcast(IxDyn(&space)).unwrap();
    for (at, &i) in idx.indexed_iter() {
        if i < 0 || i >= a.shape()[axis] as i64 {
            continue;
        }
        let mut dst = at.clone();
        dst[axis] = i as usize;
        out[dst] = values[at];
    }
    out
}

fn check_scatter<T: Element + Random + std::fmt::Debug + PartialEq, I: Integer + TryFrom<i64>>(
    c: &Context,
    seed: u64,
) {
    let cases: &[(&[usize], isize, &[usize])] = &[
        (&[9], 0, &[13]),
        (&[9], -1, &[1]),
        (&[4, 7], -1, &[4, 10]),
        (&[4, 7], 0, &[6, 7]),
        (&[4, 7], 1, &[1, 5]),
        (&[3, 5, 2], -2, &[3, 8, 1]),
        (&[1, 1], 0, &[3, 1]),
        (&[5], 0, &[0]),
        (&[0, 3], 1, &[0, 2]),
    ];
    for (k, &(shape, axis, ishape)) in cases.iter().enumerate() {
        let mut r = rng(seed + k as u64);
        let n: usize = shape.iter().product();
        let host = ArrayD::from_shape_vec(IxDyn(shape), T::random_vec(&mut r, n)).unwrap();
        let a = c.array(&host).unwrap();
        let d = if axis < 0 {
            (axis + shape.len() as isize) as usize
        } else {
            axis as usize
        };
        let len = shape[d] as i64;
        let lo = if I::DTYPE.is_signed() { -2 } else { 0 };
        let m: usize = ishape.iter().product();
        let raw: Vec<i64> = (0..m).map(|_| r.gen_range(lo..len + 2)).collect();
        let typed: Vec<I> = raw.iter().map(|&v| I::try_from(v).ok().unwrap()).collect();
        let idx = c.from_shape_slice(ishape, &typed).unwrap();
        let host_idx = ArrayD::from_shape_vec(IxDyn(ishape), raw).unwrap();
        let mut vshape = shape.to_vec();
        vshape[d] = ishape[d];
        let vn: usize = vshape.iter().product();
        let vals = ArrayD::from_shape_vec(IxDyn(&vshape), T::random_vec(&mut r, vn)).unwrap();
        let v = c.array(&vals).unwrap();
        let want = host_scatter(&host, d, &host_idx, &vals);
        let got = a.scatter(axis, &idx, &v).unwrap();
        assert_eq!(got.shape(), shape);
        assert_eq!(
            got.to_vec().unwrap(),
            want.iter().copied().collect::<Vec<_>>(),
            "{shape:?} axis {axis} indices {ishape:?}"
        );
        // A scalar value, broadcast to every position.
        let one = vals
            .iter()
            .next()
            .copied()
            .unwrap_or_else(|| T::random_vec(&mut r, 1)[0]);
        let want = host_scatter(&host, d, &host_idx, &ArrayD::from_elem(IxDyn(&[]), one));
        assert_eq!(
            a.scatter(axis, &idx, one).unwrap().to_vec().unwrap(),
            want.iter().copied().collect::<Vec<_>>()
        );
        assert_eq!(
            a.to_vec().unwrap(),
            host.iter().copied().collect::<Vec<_>>(),
            "the input is untouched"
        );
    }
}

#[test]
fn scatter_matches_numpy_put_along_axis() {
    let c = ctx();
    check_scatter::<f32, u32>(&c, 400);
    check_scatter::<i64, i64>(&c, 500);
    check_scatter::<bool, i32>(&c, 600);
    check_scatter::<u32, u64>(&c, 700);
}

#[test]
fn scatter_duplicates_the_last_along_the_axis_wins_on_every_run() {
    let c = ctx();
    let (rows, len, m) = (3, 5, 4000);
    let a = c.zeros::<f32>([rows, len]).unwrap();
    // Every row's indices hit 0..len over and over; the values count up along the axis.
    let idx: Vec<u32> = (0..rows * m).map(|k| ((k * 7 + k / m) % len) as u32).collect();
    let idx = c.from_shape_slice([rows, m], &idx).unwrap();
    let vals: Vec<f32> = (0..rows * m).map(|k| (k % m) as f32).collect();
    let v = c.from_shape_slice([rows, m], &vals).unwrap();
    let host_idx: Vec<u32> = idx.to_vec().unwrap();
    let want: Vec<f32> = (0..rows * len)
        .map(|at| {
            let (i, p) = (at / len, at % len);
            (0..m)
                .rev()
                .find(|&j| host_idx[i * m + j] as usize == p)
                .map_or(0.0, |j| j as f32)
        })
        .collect();
    for _ in 0..3 {
        assert_eq!(a.scatter(-1, &idx, &v).unwrap().to_vec().unwrap(), want);
    }
}

#[test]
fn scatter_refuses_what_does_not_fit() {
    let c = ctx();
    let a = c.zeros::<f32>([3, 4]).unwrap();
    let i = c.from_slice(&[0u32, 1]).unwrap();
    let err = a.scatter(0, &i, 1.0).unwrap_err().to_string();
    assert!(
        err.contains("scatter") && err.contains("[3, 4]") && err.contains("[2]"),
        "{err}"
    );
    let i = c.from_shape_slice([2, 2], &[0u32, 1, 2, 3]).unwrap();
    let err = a.scatter(1, &i, 1.0).unwrap_err().to_string();
    assert!(err.contains("scatter") && err.contains("[2, 2]"), "{err}");
    let i = c.from_shape_slice([3, 2], &[0u32, 1, 2, 3, 0, 1]).unwrap();
    let v = c.from_slice(&[1.0f32, 2.0, 3.0]).unwrap();
    let err = a.scatter(1, &i, &v).unwrap_err().to_string();
    assert!(err.contains("values"), "{err}");
    let err = a.scatter(2, &i, 1.0).unwrap_err().to_string();
    assert!(err.contains("scatter") && err.contains("axis 2"), "{err}");
}
