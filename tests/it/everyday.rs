//! `diff`, `roll`/`roll_axes`, `cov` and `corrcoef` against host references (plain Rust
//! over ndarray, in f64 for the statistics) on random data: several shapes and element
//! types, odd sizes, size 0 and 1, negative axes; and the counters of the laziness they
//! claim (a roll read in an expression is one kernel that copies nothing; a diff fuses).

use crate::common::{ctx, rng, Random};
use lazycl::{Context, Element};
use ndarray::{ArrayD, Axis, IxDyn, Slice};

/// `axis` as written (negative from the end) for a rank-`rank` array.
fn resolve(axis: isize, rank: usize) -> usize {
    if axis < 0 {
        (axis + rank as isize) as usize
    } else {
        axis as usize
    }
}

/// numpy's `diff(a, n, axis)` on the host, with `sub` the difference of two elements.
fn host_diff<T: Copy>(a: &ArrayD<T>, n: usize, axis: usize, sub: fn(T, T) -> T) -> ArrayD<T> {
    let mut out = a.clone();
    for _ in 0..n {
        let len = out.shape()[axis];
        if len == 0 {
            break;
        }
        let hi = out.slice_axis(Axis(axis), Slice::from(1..));
        let lo = out.slice_axis(Axis(axis), Slice::from(..len - 1));
        let mut next = hi.to_owned();
        next.zip_mut_with(&lo, |h, &l| *h = sub(*h, l));
        out = next;
    }
    out
}

/// numpy's `roll(a, shift, axis)` on the host.
fn host_roll<T: Copy>(a: &ArrayD<T>, shift: isize, axis: usize) -> ArrayD<T> {
    let len = a.shape()[axis] as isize;
    if len == 0 {
        return a.clone();
    }
    ArrayD::from_shape_fn(a.raw_dim(), |at| {
        let mut src = at.clone();
        src[axis] = (at[axis] as isize - shift).rem_euclid(len) as usize;
        a[src]
    })
}

fn upload<T: Element + Random>(c: &Context, shape: &[usize], seed: u64) -> (ArrayD<T>, lazycl::Array<T>) {
    let n = shape.iter().product();
    let host = ArrayD::from_shape_vec(IxDyn(shape), T::random_vec(&mut rng(seed), n)).unwrap();
    let dev = c.array(&host).unwrap();
    (host, dev)
}

const SHAPES: &[&[usize]] = &[&[7], &[1], &[0], &[3, 5], &[4, 1, 6], &[0, 3], &[2, 9, 3]];

fn check_diff<T: Element + Random + std::fmt::Debug + PartialEq>(c: &Context, sub: fn(T, T) -> T) {
    for (k, shape) in SHAPES.iter().enumerate() {
        let (host, a) = upload::<T>(c, shape, k as u64);
        let rank = shape.len() as isize;
        for axis in -rank..rank {
            let d = resolve(axis, shape.len());
            for n in 0..=shape[d] + 1 {
                let want = host_diff(&host, n, d, sub);
                let got = a.diff(n, axis);
                assert_eq!(got.shape(), want.shape(), "diff({n}, {axis}) of {shape:?}");
                assert_eq!(
                    got.to_vec().unwrap(),
                    want.iter().copied().collect::<Vec<_>>(),
                    "diff({n}, {axis}) of {shape:?}"
                );
            }
        }
    }
}

#[test]
fn diff_matches_numpy_for_each_element_type() {
    let c = ctx();
    check_diff::<f32>(&c, |a, b| a - b);
    check_diff::<f64>(&c, |a, b| a - b);
    check_diff::<i32>(&c, i32::wrapping_sub);
    check_diff::<u32>(&c, u32::wrapping_sub);
    check_diff::<u64>(&c, u64::wrapping_sub);
    check_diff::<bool>(&c, |a, b| a != b);
}

#[test]
fn diff_is_fused_into_its_reader() {
    let c = ctx();
    let (host, a) = upload::<f32>(&c, &[5, 33], 7);
    let want = host_diff(&host, 3, 1, |a, b| a - b).mapv(|v| v * 2.0);
    (&a.diff(3, -1) * 2.0).to_vec().unwrap();
    let before = c.stats();
    let got = (&a.diff(3, -1) * 2.0).to_vec().unwrap();
    let d = c.stats() - before;
    assert_eq!(got, want.iter().copied().collect::<Vec<_>>());
    assert_eq!(
        d.kernels_launched, 1,
        "three levels of differences and a product in one kernel: {d}"
    );
}

fn check_roll<T: Element + Random + std::fmt::Debug + PartialEq>(c: &Context) {
    for (k, shape) in SHAPES.iter().enumerate() {
        let (host, a) = upload::<T>(c, shape, 100 + k as u64);
        let rank = shape.len() as isize;
        for axis in -rank..rank {
            let d = resolve(axis, shape.len());
            let len = shape[d] as isize;
            for shift in [0, 1, -1, 3, -4, len, len + 2, -3 * len - 1, 1001] {
                let want = host_roll(&host, shift, d);
                let got = a.roll(shift, axis);
                assert_eq!(got.shape(), want.shape());
                assert_eq!(
                    got.to_vec().unwrap(),
                    want.iter().copied().collect::<Vec<_>>(),
                    "roll({shift}, {axis}) of {shape:?}"
                );
            }
        }
    }
}

#[test]
fn roll_matches_numpy_for_each_element_type() {
    let c = ctx();
    check_roll::<f32>(&c);
    check_roll::<i64>(&c);
    check_roll::<bool>(&c);
}

#[test]
fn roll_axes_matches_numpy_and_adds_the_shifts_of_a_repeated_axis() {
    let c = ctx();
    let (host, a) = upload::<i32>(&c, &[4, 5, 3], 9);
    let cases: &[(&[isize], &[isize])] = &[
        (&[1, -2], &[0, -1]),
        (&[7, 3, -5], &[2, 1, 0]),
        (&[2, 3], &[1, -2]),
        (&[], &[]),
    ];
    for &(shifts, axes) in cases {
        let mut want = host.clone();
        for (&s, &ax) in shifts.iter().zip(axes) {
            want = host_roll(&want, s, resolve(ax, 3));
        }
        let got = a.roll_axes(shifts, axes).to_vec().unwrap();
        assert_eq!(
            got,
            want.iter().copied().collect::<Vec<_>>(),
            "roll_axes({shifts:?}, {axes:?})"
        );
    }
    let err = a.roll_axes(&[1], &[0, 1]).to_vec().unwrap_err().to_string();
    assert!(err.contains("roll_axes") && err.contains("[4, 5, 3]"), "{err}");
    let err = a.roll(1, 3).to_vec().unwrap_err().to_string();
    assert!(err.contains("roll") && err.contains("axis 3"), "{err}");
}

#[test]
fn roll_read_in_an_expression_is_one_kernel_and_copies_nothing() {
    let c = ctx();
    let (host, a) = upload::<f32>(&c, &[6, 37], 11);
    let want = host_roll(&host, -5, 1).mapv(|v| v + 1.0);
    (&a.roll(-5, -1) + 1.0).to_vec().unwrap();
    let before = c.stats();
    let got = (&a.roll(-5, -1) + 1.0).to_vec().unwrap();
    let d = c.stats() - before;
    assert_eq!(got, want.iter().copied().collect::<Vec<_>>());
    assert_eq!(d.kernels_launched, 1, "{d}");
    assert_eq!(
        d.buffers_allocated + d.buffers_reused,
        1,
        "only the result's memory: {d}"
    );
}

/// numpy's `cov(m, ddof)` and `corrcoef(m)` of the rows of `m` (`[v, n]`), in f64.
fn host_cov(m: &[f64], v: usize, n: usize, ddof: f64) -> (Vec<f64>, Vec<f64>) {
    let mean: Vec<f64> = (0..v)
        .map(|i| m[i * n..(i + 1) * n].iter().sum::<f64>() / n as f64)
        .collect();
    let mut cov = vec![0.0; v * v];
    for i in 0..v {
        for j in 0..v {
            let s: f64 = (0..n)
                .map(|k| (m[i * n + k] - mean[i]) * (m[j * n + k] - mean[j]))
                .sum();
            cov[i * v + j] = s / (n as f64 - ddof);
        }
    }
    let corr = (0..v * v)
        .map(|ij| {
            let (i, j) = (ij / v, ij % v);
            (cov[ij] / (cov[i * v + i] * cov[j * v + j]).sqrt()).clamp(-1.0, 1.0)
        })
        .collect();
    (cov, corr)
}

fn close(got: &[f64], want: &[f64], tol: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}");
    for (g, w) in got.iter().zip(want) {
        assert!(
            (g - w).abs() <= tol * (1.0 + w.abs()),
            "{what}: {got:?} vs {want:?}"
        );
    }
}

#[test]
fn cov_and_corrcoef_match_numpy() {
    let c = ctx();
    for (k, &(v, n)) in [(3, 7), (1, 5), (4, 2), (5, 64), (2, 1)].iter().enumerate() {
        let data = f64::random_vec(&mut rng(200 + k as u64), v * n);
        for ddof in [0.0, 1.0] {
            if ddof >= n as f64 {
                continue;
            }
            let (cov, corr) = host_cov(&data, v, n, ddof);
            let a = c.from_shape_slice([v, n], &data).unwrap();
            assert_eq!(a.cov(ddof).shape(), [v, v]);
            close(&a.cov(ddof).to_vec().unwrap(), &cov, 1e-9, "cov f64");
            let a32 = a.cast::<f32>();
            let got: Vec<f64> = a32
                .cov(ddof as f32)
                .to_vec()
                .unwrap()
                .into_iter()
                .map(f64::from)
                .collect();
            close(&got, &cov, 1e-4, "cov f32");
            if n > 1 {
                close(&a.corrcoef().to_vec().unwrap(), &corr, 1e-9, "corrcoef f64");
                let got: Vec<f64> = a32
                    .corrcoef()
                    .to_vec()
                    .unwrap()
                    .into_iter()
                    .map(f64::from)
                    .collect();
                close(&got, &corr, 1e-4, "corrcoef f32");
            }
        }
    }
    // A 1-d array is one variable: a 0-d variance, and a correlation of 1.
    let x = f64::random_vec(&mut rng(300), 9);
    let a = c.from_slice(&x).unwrap();
    let (cov, _) = host_cov(&x, 1, 9, 1.0);
    assert!(a.cov(1.0).shape().is_empty());
    close(&[a.cov(1.0).item().unwrap()], &cov, 1e-9, "cov of 1-d");
    close(&[a.corrcoef().item().unwrap()], &[1.0], 1e-12, "corrcoef of 1-d");
}

#[test]
fn cov_refuses_bad_ddof_and_ranks() {
    let c = ctx();
    let a = c
        .from_shape_slice([2, 3], &[1.0f32, 2.0, 4.0, 0.0, 1.0, 1.0])
        .unwrap();
    let err = a.cov(3.0).to_vec().unwrap_err().to_string();
    assert!(
        err.contains("cov") && err.contains("ddof = 3") && err.contains("[2, 3]"),
        "{err}"
    );
    let err = a.reshape([1, 2, 3]).corrcoef().to_vec().unwrap_err().to_string();
    assert!(err.contains("corrcoef") && err.contains("[1, 2, 3]"), "{err}");
    let err = c
        .zeros::<f64>([2, 0])
        .unwrap()
        .corrcoef()
        .to_vec()
        .unwrap_err()
        .to_string();
    assert!(err.contains("no observations"), "{err}");
}
