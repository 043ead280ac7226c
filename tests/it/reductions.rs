//! Reductions: every op and dtype against the host, axes and keep-dims, arg reductions
//! with ties and NaN, empty and size-1 inputs, matrix-vector products, accuracy of large
//! float sums, and the counters (fused producers, no host wait before the final read).

use crate::common::{ctx, rng, Random};
use lazycl::{Array, Context, Error, Index};
use ndarray::{ArrayD, Axis, IxDyn};
use rand::Rng;

fn host<T: lazycl::Element>(ctx: &Context, a: &ArrayD<T>) -> Array<T> {
    ctx.array(a).unwrap()
}

fn fold_axes<T: Copy>(a: &ArrayD<T>, axes: &[usize], init: T, f: impl Fn(T, T) -> T + Copy) -> ArrayD<T> {
    let mut sorted = axes.to_vec();
    sorted.sort_unstable();
    let mut r = a.clone();
    for &ax in sorted.iter().rev() {
        r = r.fold_axis(Axis(ax), init, |acc, x| f(*acc, *x));
    }
    r
}

#[test]
fn integer_reductions_match_wrapping_folds() {
    let ctx = ctx();
    let mut r = rng(1);
    for shape in [
        vec![1usize],
        vec![7],
        vec![3, 5],
        vec![4, 1, 6],
        vec![2, 3, 4, 5],
        vec![1000],
        vec![300, 3],
    ] {
        let n: usize = shape.iter().product();
        let a = ArrayD::from_shape_vec(IxDyn(&shape), i32::random_vec(&mut r, n)).unwrap();
        let d = host(&ctx, &a);
        let all: Vec<usize> = (0..shape.len()).collect();
        assert_eq!(
            d.sum().item().unwrap(),
            a.iter().fold(0i32, |s, x| s.wrapping_add(*x)),
            "{shape:?}"
        );
        assert_eq!(
            d.prod().item().unwrap(),
            a.iter().fold(1i32, |s, x| s.wrapping_mul(*x)),
            "{shape:?}"
        );
        assert_eq!(d.amin().item().unwrap(), *a.iter().min().unwrap());
        assert_eq!(d.amax().item().unwrap(), *a.iter().max().unwrap());
        let wide = d.cast::<i64>().sum().item().unwrap();
        assert_eq!(wide, a.iter().map(|&x| x as i64).sum::<i64>());
        for ax in 0..shape.len() {
            let want = fold_axes(&a, &[ax], 0, i32::wrapping_add);
            assert_eq!(
                d.sum_axis(ax).to_ndarray().unwrap(),
                want,
                "sum_axis({ax}) of {shape:?}"
            );
            let want = fold_axes(&a, &[ax], i32::MAX, i32::min);
            assert_eq!(
                d.amin_axis(ax).to_ndarray().unwrap(),
                want,
                "amin_axis({ax}) of {shape:?}"
            );
        }
        if shape.len() >= 2 {
            let axes = [0, shape.len() - 1];
            let want = fold_axes(&a, &axes, i32::MIN, i32::max);
            let got = d.amax_axes(&axes, true).to_ndarray().unwrap();
            let mut kshape = shape.clone();
            kshape[0] = 1;
            *kshape.last_mut().unwrap() = 1;
            assert_eq!(got.shape(), &kshape[..]);
            assert_eq!(got.into_shape_with_order(want.shape()).unwrap(), want);
        }
        assert_eq!(
            d.sum_axes(&all, false).to_ndarray().unwrap().shape(),
            &[] as &[usize]
        );
    }
    let u = ctx.from_slice(&[u32::MAX, 5, 7]).unwrap();
    assert_eq!(u.sum().item().unwrap(), 11);
    assert_eq!(u.cast::<u64>().sum().item().unwrap(), u32::MAX as u64 + 12);
    let l = ctx.from_slice(&[i64::MAX, 1, -3]).unwrap();
    assert_eq!(l.sum().item().unwrap(), i64::MAX.wrapping_add(1).wrapping_sub(3));
    assert_eq!(ctx.from_slice(&[3u64, 9, 2]).unwrap().amax().item().unwrap(), 9);
}

#[test]
fn float_reductions_and_means() {
    let ctx = ctx();
    let mut r = rng(2);
    for shape in [
        vec![1usize],
        vec![13],
        vec![6, 7],
        vec![5, 1, 9],
        vec![3, 4, 5, 2],
        vec![5000],
    ] {
        let n: usize = shape.iter().product();
        let a = ArrayD::from_shape_vec(IxDyn(&shape), f32::random_vec(&mut r, n)).unwrap();
        let a64 = a.mapv(|v| v as f64);
        let d = host(&ctx, &a);
        let close = |g: f32, h: f64, scale: f64| (g as f64 - h).abs() <= 1e-5 * scale.max(1.0);
        let scale: f64 = a64.iter().map(|v| v.abs()).sum();
        assert!(close(d.sum().item().unwrap(), a64.sum(), scale), "{shape:?}");
        assert!(close(
            d.mean().item().unwrap(),
            a64.mean().unwrap(),
            scale / n as f64
        ));
        assert_eq!(
            d.amax().item().unwrap(),
            a.iter().cloned().fold(f32::NEG_INFINITY, f32::max)
        );
        for ax in 0..shape.len() {
            let want = a64.sum_axis(Axis(ax));
            let got = d.sum_axis(ax).to_ndarray().unwrap();
            assert_eq!(got.shape(), want.shape());
            for (g, h) in got.iter().zip(want.iter()) {
                assert!(close(*g, *h, scale), "sum_axis({ax}) of {shape:?}: {g} vs {h}");
            }
            let want = a64.mean_axis(Axis(ax)).unwrap();
            for (g, h) in d.mean_axis(ax).to_vec().unwrap().iter().zip(want.iter()) {
                assert!(close(*g, *h, scale), "mean_axis({ax})");
            }
        }
    }
    let p = ctx.from_slice(&[1.5f64, -2.0, 0.25, 4.0]).unwrap();
    if ctx.device().fp64 {
        assert_eq!(p.prod().item().unwrap(), -3.0);
        assert_eq!(p.norm().item().unwrap(), (2.25f64 + 4.0 + 0.0625 + 16.0).sqrt());
    }
    // NaN is ignored by amin/amax, like folding with f32::min.
    let n = ctx.from_slice(&[f32::NAN, 3.0, -1.0, f32::NAN]).unwrap();
    assert_eq!(n.amin().item().unwrap(), -1.0);
    assert_eq!(n.amax().item().unwrap(), 3.0);
    assert!(n.sum().item().unwrap().is_nan());
}

#[test]
fn arg_reductions_take_the_first_and_skip_nan() {
    let ctx = ctx();
    let v = ctx.from_slice(&[3.0f32, 9.0, -2.0, 9.0, -2.0, f32::NAN]).unwrap();
    assert_eq!(v.argmax().item().unwrap(), 1);
    assert_eq!(v.argmin().item().unwrap(), 2);
    let all_nan = ctx.from_slice(&[f32::NAN, f32::NAN]).unwrap();
    assert_eq!(all_nan.argmax().item().unwrap(), 0);
    let m = ctx
        .from_shape_slice([3, 4], &[1i32, 5, 5, 0, 7, 7, 7, 7, -1, -9, 4, -9])
        .unwrap();
    assert_eq!(m.argmax_axis(1).to_vec().unwrap(), vec![1, 0, 2]);
    assert_eq!(m.argmin_axis(1).to_vec().unwrap(), vec![3, 0, 1]);
    assert_eq!(m.argmax_axis(0).to_vec().unwrap(), vec![1, 1, 1, 1]);
    assert_eq!(m.argmin().item().unwrap(), 9);
    // Large random input: agrees with the host scan (split into segments + combine).
    let mut r = rng(3);
    let data = f32::random_vec(&mut r, 300_001);
    let big = ctx.from_slice(&data).unwrap();
    let (mut best, mut bi) = (f32::NEG_INFINITY, 0);
    for (i, &x) in data.iter().enumerate() {
        if x > best {
            best = x;
            bi = i;
        }
    }
    assert_eq!(big.argmax().item().unwrap(), bi as u32);
    let ints = i64::random_vec(&mut r, 70_001);
    let bigi = ctx.from_slice(&ints).unwrap();
    let mi = ints.iter().enumerate().min_by_key(|(i, v)| (**v, *i)).unwrap().0;
    assert_eq!(bigi.argmin().item().unwrap(), mi as u32);
}

#[test]
fn empty_and_bad_reductions() {
    let ctx = ctx();
    let e = ctx.zeros::<f32>([0]).unwrap();
    assert_eq!(e.sum().item().unwrap(), 0.0);
    assert_eq!(e.prod().item().unwrap(), 1.0);
    assert!(e.mean().item().unwrap().is_nan());
    assert!(matches!(e.amax().item().unwrap_err(), Error::InvalidShape(_)));
    assert!(matches!(e.argmin().item().unwrap_err(), Error::InvalidShape(_)));
    let z = ctx.zeros::<i32>([3, 0]).unwrap();
    assert_eq!(z.sum_axis(1).to_vec().unwrap(), vec![0, 0, 0]);
    assert!(z.sum_axis(0).to_vec().unwrap().is_empty());
    let err = ctx.zeros::<f32>([2, 2]).unwrap().sum_axis(2).eval().unwrap_err();
    assert!(err.to_string().contains("axis 2"), "{err}");
    let one = ctx.full((), 4.5f32).unwrap();
    assert_eq!(one.sum().item().unwrap(), 4.5);
    assert_eq!(one.argmax().item().unwrap(), 0);
}

#[test]
fn positions_past_the_index_type_are_refused() {
    // Broadcast views hold no memory: shapes past u32::MAX elements cost nothing to record.
    let ctx = ctx();
    let wide = ctx.zeros::<f32>([1, 1]).unwrap().broadcast_to(&[2, 1 << 32]);
    for (name, arg) in [("argmax", wide.argmax()), ("argmin_axis", wide.argmin_axis(-1))] {
        match arg.to_vec().unwrap_err() {
            Error::TooLarge { op, .. } => assert!(op.starts_with(name), "{op}"),
            other => panic!("{name}: expected TooLarge, got {other}"),
        }
    }
    // Along the short axis the positions fit: recorded, not refused.
    let failed = |a: &Array<Index>| format!("{a:?}").ends_with("(failed)");
    assert!(!failed(&wide.argmax_axis(0)));
    let at_limit = ctx.zeros::<f32>([1]).unwrap().broadcast_to(&[u32::MAX as usize]);
    assert!(!failed(&at_limit.argmax()));
    let past = ctx.zeros::<f32>([1]).unwrap().broadcast_to(&[1 << 32]);
    assert!(failed(&past.argmax()));
}

#[test]
fn matrix_vector_products_in_every_orientation() {
    let ctx = ctx();
    let mut r = rng(4);
    for (rows, cols) in [(2000, 10), (300, 70), (40, 3000), (1, 5), (5, 1), (129, 129)] {
        let m = ndarray::Array2::from_shape_vec((rows, cols), f32::random_vec(&mut r, rows * cols)).unwrap();
        let v = ndarray::Array1::from_vec(f32::random_vec(&mut r, cols));
        let u = ndarray::Array1::from_vec(f32::random_vec(&mut r, rows));
        let (dm, dv, du) = (
            ctx.array(&m).unwrap(),
            ctx.array(&v).unwrap(),
            ctx.array(&u).unwrap(),
        );
        let m64 = m.mapv(|x| x as f64);
        let mv = m64.dot(&v.mapv(|x| x as f64));
        let um = u.mapv(|x| x as f64).dot(&m64);
        let scale = 100.0 * 100.0 * rows.max(cols) as f64;
        let check = |got: Vec<f32>, want: &ndarray::Array1<f64>, what: &str| {
            assert_eq!(got.len(), want.len(), "{what}");
            for (g, h) in got.iter().zip(want) {
                assert!(
                    (*g as f64 - h).abs() <= 1e-5 * scale,
                    "{what} {rows}x{cols}: {g} vs {h}"
                );
            }
        };
        let before = ctx.stats();
        let a = (&dm * &dv).sum_axis(1);
        let b = (&dm * &du.insert_axis(1)).sum_axis(0);
        lazycl::eval(&(&a, &b)).unwrap();
        let d = ctx.stats() - before;
        assert!(
            d.kernels_launched <= 4,
            "each product is one pass (plus a combine when split): {d}"
        );
        assert_eq!(d.host_waits, 0);
        check(a.to_vec().unwrap(), &mv, "m·v");
        check(b.to_vec().unwrap(), &um, "uᵀ·m");
        check(dm.dot(&dv).to_vec().unwrap(), &mv, "dot m·v");
        check(du.dot(&dm).to_vec().unwrap(), &um, "dot u·m");
    }
    let a = ctx
        .from_shape_slice([2, 3], &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])
        .unwrap();
    let b = ctx
        .from_shape_slice([3, 2], &[7.0f32, 8.0, 9.0, 10.0, 11.0, 12.0])
        .unwrap();
    assert_eq!(a.dot(&b).to_vec().unwrap(), vec![58.0, 64.0, 139.0, 154.0]);
    let x = ctx.from_slice(&[1i32, 2, 3]).unwrap();
    assert_eq!(x.dot(&x).item().unwrap(), 14);
    assert!(x.dot(&a.cast::<i32>().reshape([1, 2, 3])).eval().is_err());
}

#[test]
fn a_large_float_sum_is_accurate() {
    let ctx = ctx();
    let mut r = rng(5);
    let n = 1usize << 24;
    let data: Vec<f32> = (0..n).map(|_| r.gen_range(0.0f32..1.0)).collect();
    let exact: f64 = data.iter().map(|&v| v as f64).sum();
    let x = ctx.from_slice(&data).unwrap();
    let got = x.sum().item().unwrap() as f64;
    assert!(((got - exact) / exact).abs() < 1e-5, "{got} vs {exact}");
    let sq: f64 = data.iter().map(|&v| (v as f64) * (v as f64)).sum();
    let got = (&x * &x).sum().item().unwrap() as f64;
    assert!(((got - sq) / sq).abs() < 1e-5, "{got} vs {sq}");
}

/// A constant that f32 cannot represent, summed many times: a plain serial loop drifts
/// steadily (each add rounds the same way), so long per-work-item runs must compensate.
#[test]
fn long_float_sums_are_compensated() {
    let ctx = ctx();
    let n = 1usize << 24;
    let tenth = 0.1f32;
    let exact = tenth as f64 * n as f64;
    let x = ctx.full([n], tenth).unwrap();
    let got = x.sum().item().unwrap() as f64;
    assert!(((got - exact) / exact).abs() < 1e-5, "full sum {got} vs {exact}");
    // Two long rows (the row layout).
    let m = ctx.full([2, n / 2], tenth).unwrap();
    for got in m.sum_axis(1).to_vec().unwrap() {
        let exact = exact / 2.0;
        assert!(
            ((got as f64 - exact) / exact).abs() < 1e-5,
            "row sum {got} vs {exact}"
        );
    }
}

#[test]
fn producers_fuse_into_the_reduction_and_results_stay_on_the_device() {
    let ctx = ctx();
    let mut r = rng(6);
    let data = f32::random_vec(&mut r, 1 << 18);
    let x = ctx.from_slice(&data).unwrap();
    // (x * x).sum(): one map-reduce pass over x, one launch (its last work-group combines
    // the partials); nothing but partials and the result is written.
    let before = ctx.stats();
    let s = (&x * &x).sum();
    assert!(
        s.explain().unwrap().contains("finished by the last work-group"),
        "{}",
        s.explain().unwrap()
    );
    s.eval().unwrap();
    let d = ctx.stats() - before;
    assert_eq!(d.kernels_launched, 1, "{d}");
    assert!(
        d.buffers_allocated + d.buffers_reused <= 2,
        "no intermediate x*x array: {d}"
    );
    assert_eq!(d.host_waits, 0);
    // Consumers read the 0-d result from device memory: no wait before the final read.
    let before = ctx.stats();
    let normalized = &x / x.sum();
    let var = (&x - x.mean()).powi(2).mean();
    lazycl::eval(&(&normalized, &var)).unwrap();
    let d = ctx.stats() - before;
    assert_eq!(d.host_waits, 0, "{d}");
    assert_eq!(d.bytes_downloaded, 0);
    let total: f64 = data.iter().map(|&v| v as f64).sum();
    let mean = total / data.len() as f64;
    let want_var = data.iter().map(|&v| (v as f64 - mean).powi(2)).sum::<f64>() / data.len() as f64;
    let got_var = var.item().unwrap() as f64;
    assert!(
        ((got_var - want_var) / want_var).abs() < 1e-4,
        "{got_var} vs {want_var}"
    );
    let nv = normalized.to_vec().unwrap();
    assert!((nv[7] as f64 - data[7] as f64 / total).abs() < 1e-4 * (data[7] as f64 / total).abs().max(1e-9));
    // A loop of 100 normalizations builds a fixed number of programs and never waits.
    let mut y = x.clone();
    let before = ctx.stats();
    for _ in 0..100 {
        y = &y / y.abs().amax();
        y.eval().unwrap();
    }
    let d = ctx.stats() - before;
    assert!(d.programs_built + d.programs_loaded <= 3, "{d}");
    assert_eq!(d.host_waits, 0);
    assert!(y.abs().amax().item().unwrap() <= 1.0 + 1e-6);
}

/// Reductions over the rows of a matrix (`sum_axis(0)`) use the column layout: work-groups
/// stream whole rows, four neighbouring outputs per work-item when the row length is a
/// multiple of four, else one. Every op against the host, with and without segments
/// (the larger shapes are split on every device), arg reductions with ties.
#[test]
fn column_reductions_stream_whole_rows() {
    let ctx = ctx();
    let mut r = rng(9);
    let shapes = [
        (1usize, 4usize),
        (3, 8),
        (1000, 20),
        (257, 100),
        (3000, 100),
        (517, 1000),
        (2000, 7),
        (5, 3),
        (40, 1001),
    ];
    for &(rows, cols) in &shapes {
        let n = rows * cols;
        let a = ArrayD::from_shape_vec(IxDyn(&[rows, cols]), f32::random_vec(&mut r, n)).unwrap();
        let d = host(&ctx, &a);
        let a64 = a.mapv(|v| v as f64);
        let scale: f64 = a64.iter().map(|v| v.abs()).sum::<f64>().max(1.0);
        let sum = d.sum_axis(0);
        if rows > 1 {
            let width = if cols % 4 == 0 { 4 } else { 1 };
            let text = sum.explain().unwrap();
            assert!(
                text.contains(&format!(
                    "work-groups stream whole rows, {width} neighbouring outputs"
                )),
                "{text}"
            );
        }
        for (g, h) in sum.to_vec().unwrap().iter().zip(a64.sum_axis(Axis(0)).iter()) {
            assert!(
                (*g as f64 - h).abs() <= 1e-5 * scale,
                "sum_axis(0) of {rows}x{cols}"
            );
        }
        for (g, h) in d
            .mean_axis(0)
            .to_vec()
            .unwrap()
            .iter()
            .zip(a64.mean_axis(Axis(0)).unwrap().iter())
        {
            assert!(
                (*g as f64 - h).abs() <= 1e-5 * scale,
                "mean_axis(0) of {rows}x{cols}"
            );
        }
        let want = fold_axes(&a, &[0], f32::INFINITY, f32::min);
        assert_eq!(d.amin_axis(0).to_ndarray().unwrap(), want, "amin_axis(0)");
        let want = fold_axes(&a, &[0], f32::NEG_INFINITY, f32::max);
        assert_eq!(d.amax_axis(0).to_ndarray().unwrap(), want, "amax_axis(0)");
        // Integers: exact, wrapping, with a broadcast operand along the kept dim.
        let ints = ArrayD::from_shape_vec(IxDyn(&[rows, cols]), i32::random_vec(&mut r, n)).unwrap();
        let col: Vec<i32> = (0..rows as i32).map(|i| i % 7 - 3).collect();
        let di = host(&ctx, &ints);
        let dc = ctx.from_shape_slice([rows, 1], &col).unwrap();
        let got = (&di * &dc).sum_axis(0).to_vec().unwrap();
        for (c, g) in got.iter().enumerate() {
            let want = (0..rows).fold(0i32, |s, k| s.wrapping_add(ints[[k, c]].wrapping_mul(col[k])));
            assert_eq!(*g, want, "column {c} of {rows}x{cols}");
        }
        assert_eq!(
            di.prod_axis(0).to_ndarray().unwrap(),
            fold_axes(&ints, &[0], 1, i32::wrapping_mul)
        );
        // Arg reductions over rows, with many ties (values in 0..5): the first index wins.
        let small = ints.mapv(|v| v.rem_euclid(5));
        let ds = host(&ctx, &small);
        for (max, got) in [(true, ds.argmax_axis(0)), (false, ds.argmin_axis(0))] {
            let got = got.to_vec().unwrap();
            for (c, g) in got.iter().enumerate() {
                let mut best = 0;
                for k in 1..rows {
                    let (v, b) = (small[[k, c]], small[[best, c]]);
                    if (max && v > b) || (!max && v < b) {
                        best = k;
                    }
                }
                assert_eq!(
                    *g as usize,
                    best,
                    "arg{} column {c} of {rows}x{cols}",
                    if max { "max" } else { "min" }
                );
            }
        }
        if ctx.device().fp64 {
            let f = host(&ctx, &a64);
            let got = (&f * 2.0).sum_axes(&[0], true).to_ndarray().unwrap();
            assert_eq!(got.shape(), &[1, cols]);
            for (g, h) in got.iter().zip(a64.sum_axis(Axis(0)).iter()) {
                assert!(
                    (g - 2.0 * h).abs() <= 1e-12 * scale,
                    "f64 sum_axes(0) of {rows}x{cols}"
                );
            }
        }
    }
}

/// Reductions split into segments and finished by their last work-group: the per-queue
/// counters are reset after every reduction, so many in a row (on two queues, of every op
/// and several sizes) all match the host.
#[test]
fn reductions_finished_in_kernel_many_in_a_row() {
    let ctx = ctx();
    let q2 = ctx.new_queue().unwrap();
    let mut r = rng(12);
    let mut checked = 0;
    for round in 0..6 {
        let n = [70_001usize, 3000, 1 << 17, 5000, 250_000, 4097][round];
        let data: Vec<i32> = (0..n).map(|_| r.gen_range(-50..50)).collect();
        let x = ctx.from_slice(&data).unwrap();
        let xf = x.cast::<f32>();
        let outs = (x.sum(), x.amax(), x.argmin(), xf.mean(), (&x * 3).amin());
        let sum = &outs.0;
        if round == 0 {
            assert!(sum.explain().unwrap().contains("finished by the last work-group"));
        }
        if round % 2 == 0 {
            lazycl::eval(&(&outs.0, &outs.1, &outs.2, &outs.3, &outs.4)).unwrap();
        } else {
            q2.eval(&(&outs.0, &outs.1, &outs.2, &outs.3, &outs.4)).unwrap();
        }
        let want_sum: i32 = data.iter().sum();
        let want_max = *data.iter().max().unwrap();
        let min = *data.iter().min().unwrap();
        let want_argmin = data.iter().position(|&v| v == min).unwrap() as u32;
        let want_mean = data.iter().map(|&v| v as f64).sum::<f64>() / n as f64;
        assert_eq!(outs.0.item().unwrap(), want_sum, "sum of {n}");
        assert_eq!(outs.1.item().unwrap(), want_max, "amax of {n}");
        assert_eq!(outs.2.item().unwrap(), want_argmin, "argmin of {n}");
        assert!(
            (outs.3.item().unwrap() as f64 - want_mean).abs() < 1e-4,
            "mean of {n}"
        );
        assert_eq!(outs.4.item().unwrap(), 3 * min, "amin of 3x, {n}");
        checked += 5;
    }
    assert_eq!(checked, 30);
}
