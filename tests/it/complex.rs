//! Complex arrays (`c32`, `c64`) against `num_complex` on the host: transfers, arithmetic
//! with complex and real operands, the math methods, edge values, reductions, views,
//! products, and fusion.

use lazycl::prelude::*;
use lazycl::{ComplexFloat, Error};
use num_complex::Complex;
use rand::distributions::{Distribution, Uniform};
use rand::rngs::StdRng;

use crate::common::{ctx, rng};
use crate::kernel_complex::Wide;

fn random_c64(rng: &mut StdRng, n: usize) -> Vec<c64> {
    let d = Uniform::new(-3.0f64, 3.0);
    (0..n).map(|_| c64::new(d.sample(rng), d.sample(rng))).collect()
}

fn random_c32(rng: &mut StdRng, n: usize) -> Vec<c32> {
    random_c64(rng, n)
        .into_iter()
        .map(|z| c32::new(z.re as f32, z.im as f32))
        .collect()
}

/// Whether `got` is `want` to a relative `tol` (of the larger magnitude), or both NaN in
/// the same parts, or equal infinities.
fn close_part(got: f64, want: f64, tol: f64) -> bool {
    if want.is_nan() || got.is_nan() {
        return want.is_nan() && got.is_nan();
    }
    if want.is_infinite() || got.is_infinite() {
        return want == got;
    }
    (got - want).abs() <= tol * want.abs().max(1.0)
}

fn assert_close<T: Wide>(got: &[T], want: &[Complex<f64>], tol: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (&g, w)) in got.iter().zip(want).enumerate() {
        let g = g.wide();
        assert!(
            close_part(g.re, w.re, tol) && close_part(g.im, w.im, tol),
            "{what}[{i}]: got {g:?}, want {w:?}"
        );
    }
}

fn widen(v: &[c32]) -> Vec<c64> {
    v.iter().map(|z| c64::new(z.re as f64, z.im as f64)).collect()
}

#[test]
fn transfers_round_trip_both_types_and_ndarray() {
    let ctx = ctx();
    let mut r = rng(1);
    for n in [0usize, 1, 7, 1000] {
        let a = random_c32(&mut r, n);
        assert_eq!(ctx.from_slice(&a).unwrap().to_vec().unwrap(), a);
        let b = random_c64(&mut r, n);
        assert_eq!(ctx.from_slice(&b).unwrap().to_vec().unwrap(), b);
    }
    let m = ndarray::Array2::from_shape_fn((3, 5), |(i, j)| c64::new(i as f64, -(j as f64)));
    let back = ctx.array(&m).unwrap().to_ndarray().unwrap();
    assert_eq!(back, m.into_dyn());
    assert_eq!(
        ctx.zeros::<c32>([2]).unwrap().to_vec().unwrap(),
        [c32::new(0.0, 0.0); 2]
    );
    assert_eq!(
        ctx.ones::<c64>([2]).unwrap().to_vec().unwrap(),
        [c64::new(1.0, 0.0); 2]
    );
    let i = c32::new(0.0, 1.0);
    assert_eq!(ctx.full([3], i).unwrap().to_vec().unwrap(), [i; 3]);
}

/// Every binary operation, array with array, array with scalar on either side, and
/// complex with real on either side, for `c32` (vectorized and odd lengths) and `c64`.
#[test]
fn arithmetic_matches_num_complex() {
    let ctx = ctx();
    let mut r = rng(2);
    for n in [1usize, 5, 4099] {
        let (a, b) = (random_c64(&mut r, n), random_c64(&mut r, n));
        let x: Vec<f64> = random_c64(&mut r, n).iter().map(|z| z.re).collect();
        let (da, db, dx) = (
            ctx.from_slice(&a).unwrap(),
            ctx.from_slice(&b).unwrap(),
            ctx.from_slice(&x).unwrap(),
        );
        let s = c64::new(0.5, -1.25);
        let host = |f: &dyn Fn(usize) -> c64| (0..n).map(f).collect::<Vec<_>>();
        let cases: Vec<(&str, Array<c64>, Vec<c64>)> = vec![
            ("a + b", &da + &db, host(&|i| a[i] + b[i])),
            ("a - b", &da - &db, host(&|i| a[i] - b[i])),
            ("a * b", &da * &db, host(&|i| a[i] * b[i])),
            ("a / b", &da / &db, host(&|i| a[i] / b[i])),
            ("a * s", &da * s, host(&|i| a[i] * s)),
            ("s - a", s - &da, host(&|i| s - a[i])),
            ("s / a", s / &da, host(&|i| s / a[i])),
            ("a + x", &da + &dx, host(&|i| a[i] + x[i])),
            ("x - a", &dx - &da, host(&|i| c64::new(x[i], 0.0) - a[i])),
            ("a * x", &da * &dx, host(&|i| a[i] * x[i])),
            ("x * a", &dx * &da, host(&|i| a[i] * x[i])),
            ("a / x", &da / &dx, host(&|i| a[i] / x[i])),
            ("x / a", &dx / &da, host(&|i| c64::new(x[i], 0.0) / a[i])),
            ("a * 2", &da * 2.0, host(&|i| a[i] * 2.0)),
            ("2 - a", 2.0 - &da, host(&|i| c64::new(2.0, 0.0) - a[i])),
            ("-a", -&da, host(&|i| -a[i])),
        ];
        for (what, got, want) in cases {
            assert_close(
                &got.to_vec().unwrap(),
                &want,
                1e-14,
                &format!("c64 {what}, n = {n}"),
            );
        }
        // The same in c32, against the host's f64 of the same f32 inputs.
        let (a32, b32) = (random_c32(&mut r, n), random_c32(&mut r, n));
        let (a64, b64) = (widen(&a32), widen(&b32));
        let (da, db) = (ctx.from_slice(&a32).unwrap(), ctx.from_slice(&b32).unwrap());
        let host = |f: &dyn Fn(usize) -> c64| (0..n).map(f).collect::<Vec<_>>();
        assert_close(
            &(&da * &db).to_vec().unwrap(),
            &host(&|i| a64[i] * b64[i]),
            1e-5,
            "c32 a * b",
        );
        assert_close(
            &(&da / &db).to_vec().unwrap(),
            &host(&|i| a64[i] / b64[i]),
            1e-5,
            "c32 a / b",
        );
        assert_close(
            &(&da - 1.5f32).to_vec().unwrap(),
            &host(&|i| a64[i] - 1.5),
            1e-6,
            "c32 a - 1.5",
        );
        let i = c32::new(0.0, 1.0);
        assert_close(
            &(i * &da).to_vec().unwrap(),
            &host(&|k| a64[k] * c64::new(0.0, 1.0)),
            1e-6,
            "c32 i * a",
        );
    }
}

#[test]
fn math_methods_match_num_complex() {
    let ctx = ctx();
    let mut r = rng(3);
    let n = 1001;
    let a = random_c64(&mut r, n);
    let da = ctx.from_slice(&a).unwrap();
    let complex_cases: Vec<(&str, Array<c64>, Vec<c64>)> = vec![
        ("conj", da.conj(), a.iter().map(|z| z.conj()).collect()),
        ("exp", da.exp(), a.iter().map(|z| z.exp()).collect()),
        ("ln", da.ln(), a.iter().map(|z| z.ln()).collect()),
        ("sqrt", da.sqrt(), a.iter().map(|z| z.sqrt()).collect()),
        ("powf", da.powf(1.7), a.iter().map(|z| z.powf(1.7)).collect()),
        ("powf 0", da.powf(0.0), a.iter().map(|z| z.powf(0.0)).collect()),
        (
            "powc",
            da.powc(c64::new(0.5, -0.25)),
            a.iter().map(|z| z.powc(c64::new(0.5, -0.25))).collect(),
        ),
    ];
    for (what, got, want) in complex_cases {
        assert_close(&got.to_vec().unwrap(), &want, 1e-12, what);
    }
    let real_cases: Vec<(&str, Array<f64>, Vec<f64>)> = vec![
        ("re", da.re(), a.iter().map(|z| z.re).collect()),
        ("im", da.im(), a.iter().map(|z| z.im).collect()),
        ("abs", da.abs(), a.iter().map(|z| z.norm()).collect()),
        ("arg", da.arg(), a.iter().map(|z| z.arg()).collect()),
        (
            "norm_sqr",
            da.norm_sqr(),
            a.iter().map(|z| z.norm_sqr()).collect(),
        ),
    ];
    for (what, got, want) in real_cases {
        let got = got.to_vec().unwrap();
        for i in 0..n {
            assert!(
                close_part(got[i], want[i], 1e-14),
                "{what}[{i}]: {} vs {}",
                got[i],
                want[i]
            );
        }
    }
    // Made from real arrays.
    let (m, t): (Vec<f64>, Vec<f64>) = a.iter().map(|z| (z.re.abs(), z.im)).unzip();
    let (dm, dt) = (ctx.from_slice(&m).unwrap(), ctx.from_slice(&t).unwrap());
    let want: Vec<c64> = (0..n).map(|i| c64::from_polar(m[i], t[i])).collect();
    assert_close(&dm.from_polar(&dt).to_vec().unwrap(), &want, 1e-14, "from_polar");
    let want: Vec<c64> = (0..n).map(|i| c64::new(m[i], t[i])).collect();
    assert_close(&dm.complex(&dt).to_vec().unwrap(), &want, 0.0, "complex");
    let want: Vec<c64> = (0..n).map(|i| c64::new(m[i], 2.0)).collect();
    assert_close(
        &dm.complex(2.0).to_vec().unwrap(),
        &want,
        0.0,
        "complex with a scalar",
    );
    // Equality, exact.
    let b: Vec<c64> = a
        .iter()
        .enumerate()
        .map(|(i, z)| if i % 3 == 0 { *z } else { z.conj() })
        .collect();
    let db = ctx.from_slice(&b).unwrap();
    let eq = da.eq(&db).to_vec().unwrap();
    let ne = da.ne(&db).to_vec().unwrap();
    for i in 0..n {
        assert_eq!(eq[i], a[i] == b[i], "eq[{i}]");
        assert_eq!(ne[i], a[i] != b[i], "ne[{i}]");
    }
}

/// Infinities, NaN and signed zeros through the arithmetic and the methods: the parts the
/// host's `num_complex` gives (NaN where it gives NaN, the same infinities and zeros).
#[test]
fn edge_values_match_num_complex() {
    let ctx = ctx();
    let specials = [0.0, -0.0, 1.0, -2.5, f64::INFINITY, f64::NEG_INFINITY, f64::NAN];
    let mut zs = Vec::new();
    for &re in &specials {
        for &im in &specials {
            zs.push(c64::new(re, im));
        }
    }
    // Every pair, as two arrays.
    let (a, b): (Vec<c64>, Vec<c64>) = zs.iter().flat_map(|&x| zs.iter().map(move |&y| (x, y))).unzip();
    let (da, db) = (ctx.from_slice(&a).unwrap(), ctx.from_slice(&b).unwrap());
    let exact = |got: Vec<c64>, want: Vec<c64>, what: &str| {
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            let same = |x: f64, y: f64| (x.is_nan() && y.is_nan()) || x.to_bits() == y.to_bits();
            assert!(
                same(g.re, w.re) && same(g.im, w.im),
                "{what}({:?}, {:?}): got {g:?}, want {w:?}",
                a.get(i),
                b.get(i)
            );
        }
    };
    exact(
        (&da * &db).to_vec().unwrap(),
        (0..a.len()).map(|i| a[i] * b[i]).collect(),
        "mul",
    );
    exact(
        (&da / &db).to_vec().unwrap(),
        (0..a.len()).map(|i| a[i] / b[i]).collect(),
        "div",
    );
    exact(
        (&da + &db).to_vec().unwrap(),
        (0..a.len()).map(|i| a[i] + b[i]).collect(),
        "add",
    );
    let dz = ctx.from_slice(&zs).unwrap();
    let re: Vec<f64> = zs.iter().map(|z| z.re).collect();
    let dre = ctx.from_slice(&re).unwrap();
    exact(
        (&dz * &dre).to_vec().unwrap(),
        zs.iter().map(|z| z * z.re).collect(),
        "mul by a real",
    );
    exact(
        (&dz + &dre).to_vec().unwrap(),
        zs.iter().map(|z| z + z.re).collect(),
        "add a real",
    );
    exact(
        dz.conj().to_vec().unwrap(),
        zs.iter().map(|z| z.conj()).collect(),
        "conj",
    );
    // The methods with special cases of their own: exactly the host's cases, and the
    // general formula to rounding.
    for (what, got, want) in [
        ("exp", dz.exp(), zs.iter().map(|z| z.exp()).collect::<Vec<_>>()),
        ("sqrt", dz.sqrt(), zs.iter().map(|z| z.sqrt()).collect()),
        ("ln", dz.ln(), zs.iter().map(|z| z.ln()).collect()),
    ] {
        assert_close(&got.to_vec().unwrap(), &want, 1e-15, what);
    }
    let abs = dz.abs().to_vec().unwrap();
    for (z, g) in zs.iter().zip(abs) {
        assert!(close_part(g, z.norm(), 0.0), "abs({z:?}) = {g}");
    }
}

#[test]
fn reductions_sum_mean_prod() {
    let ctx = ctx();
    let mut r = rng(4);
    for (rows, cols) in [(1usize, 1usize), (3, 7), (64, 33), (5, 4096)] {
        let a = random_c64(&mut r, rows * cols);
        let da = ctx.from_shape_slice([rows, cols], &a).unwrap();
        let total: c64 = a.iter().sum();
        assert_close(&[da.sum().item().unwrap()], &[total], 1e-12, "sum");
        let mean = total / (rows * cols) as f64;
        assert_close(&[da.mean().item().unwrap()], &[mean], 1e-12, "mean");
        let row_sums: Vec<c64> = (0..rows)
            .map(|i| a[i * cols..(i + 1) * cols].iter().sum())
            .collect();
        assert_close(&da.sum_axis(1).to_vec().unwrap(), &row_sums, 1e-12, "sum_axis(1)");
        let col_means: Vec<c64> = (0..cols)
            .map(|j| (0..rows).map(|i| a[i * cols + j]).sum::<c64>() / rows as f64)
            .collect();
        assert_close(
            &da.mean_axis(0).to_vec().unwrap(),
            &col_means,
            1e-12,
            "mean_axis(0)",
        );
        // Products of numbers near the unit circle stay finite.
        let unit: Vec<c64> = a.iter().map(|z| z / z.norm()).collect();
        let du = ctx.from_shape_slice([rows, cols], &unit).unwrap();
        let prods: Vec<c64> = (0..rows)
            .map(|i| unit[i * cols..(i + 1) * cols].iter().product())
            .collect();
        assert_close(&du.prod_axis(1).to_vec().unwrap(), &prods, 1e-9, "prod_axis(1)");
    }
    // c32 sums accumulate in pairs of f32.
    let a = random_c32(&mut r, 10_000);
    let total: c64 = widen(&a).iter().sum();
    assert_close(
        &[ctx.from_slice(&a).unwrap().sum().item().unwrap()],
        &[total],
        1e-4,
        "c32 sum",
    );
    let empty = ctx.zeros::<c32>([0]).unwrap();
    assert_eq!(empty.sum().item().unwrap(), c32::new(0.0, 0.0));
    assert_eq!(empty.prod().item().unwrap(), c32::new(1.0, 0.0));
}

/// Views, joins and gathers move complex numbers whole.
#[test]
fn views_concatenation_and_take() {
    let ctx = ctx();
    let mut r = rng(5);
    let a = random_c32(&mut r, 6 * 5);
    let da = ctx.from_shape_slice([6, 5], &a).unwrap();
    let t = da.t().to_vec().unwrap();
    for i in 0..6 {
        for j in 0..5 {
            assert_eq!(t[j * 6 + i], a[i * 5 + j]);
        }
    }
    let col = da.slice(s![1..5;2, 3]).to_vec().unwrap();
    assert_eq!(col, [a[8], a[18]]);
    let joined = concatenate(Axis(0), &[&da, &da.slice(s![..1, ..])])
        .unwrap()
        .to_vec()
        .unwrap();
    assert_eq!(joined[..30], a[..]);
    assert_eq!(joined[30..], a[..5]);
    let idx = ctx.from_slice(&[4u32, 0, 4]).unwrap();
    let picked = da.take(Axis(1), &idx).to_vec().unwrap();
    assert_eq!(picked[..3], [a[4], a[0], a[4]]);
}

/// A scatter writes complex values whole; `scatter_add` adds each part, repeated indices
/// included, an index outside the axis dropped, into a lazy destination too.
#[test]
fn scatter_and_scatter_add() {
    let ctx = ctx();
    let mut r = rng(6);
    let (rows, cols) = (5usize, 3usize);
    let a = random_c32(&mut r, rows * cols);
    let v = random_c32(&mut r, 4 * cols);
    let da = ctx.from_shape_slice([rows, cols], &a).unwrap();
    let dv = ctx.from_shape_slice([4, cols], &v).unwrap();
    let rows_at = [3u32, 0, 3, 9];
    let idx = ctx.from_slice(&rows_at).unwrap();
    // `scatter` along axis 1: one index per element.
    let at = ctx.from_shape_slice([1, cols], &[2u32, 0, 1]).unwrap();
    let put = da.scatter(0, &at, c32::new(7.0, -7.0)).unwrap().to_vec().unwrap();
    for (j, &i) in [2usize, 0, 1].iter().enumerate() {
        assert_eq!(put[i * cols + j], c32::new(7.0, -7.0));
    }
    assert_eq!(put[4 * cols], a[4 * cols]);
    for lazy in [false, true] {
        let mut dst = match lazy {
            false => da.clone(),
            true => &da * c32::new(0.5, 2.0),
        };
        lazycl::scatter_add(&mut dst, 0, &idx, &dv).unwrap();
        let got = dst.to_vec().unwrap();
        let mut want: Vec<c64> = a
            .iter()
            .map(|z| {
                let z = c64::new(z.re as f64, z.im as f64);
                if lazy {
                    z * c64::new(0.5, 2.0)
                } else {
                    z
                }
            })
            .collect();
        for (k, &i) in rows_at.iter().enumerate() {
            if (i as usize) < rows {
                for j in 0..cols {
                    let x = v[k * cols + j];
                    want[i as usize * cols + j] += c64::new(x.re as f64, x.im as f64);
                }
            }
        }
        for (g, w) in got.iter().zip(&want) {
            assert!(
                (c64::new(g.re as f64, g.im as f64) - w).norm() < 1e-5,
                "{g} vs {w}"
            );
        }
    }
}

/// Reference product of `[m, k]` and `[k, n]` complex matrices, in f64.
fn host_matmul(a: &[c64], b: &[c64], m: usize, k: usize, n: usize) -> Vec<c64> {
    let mut c = vec![c64::new(0.0, 0.0); m * n];
    for i in 0..m {
        for j in 0..n {
            c[i * n + j] = (0..k).map(|l| a[i * k + l] * b[l * n + j]).sum();
        }
    }
    c
}

fn transpose(a: &[c64], rows: usize, cols: usize) -> Vec<c64> {
    (0..cols * rows)
        .map(|i| a[(i % rows) * cols + i / rows])
        .collect()
}

#[test]
fn matrix_products_of_complex_matrices() {
    let ctx = ctx();
    let mut r = rng(6);
    for (m, k, n) in [(1usize, 1usize, 1usize), (7, 5, 3), (64, 65, 33)] {
        let (a, b) = (random_c64(&mut r, m * k), random_c64(&mut r, k * n));
        let (da, db) = (
            ctx.from_shape_slice([m, k], &a).unwrap(),
            ctx.from_shape_slice([k, n], &b).unwrap(),
        );
        let want = host_matmul(&a, &b, m, k, n);
        assert_close(&da.matmul(&db).to_vec().unwrap(), &want, 1e-12, "c64 matmul");
        // A transposed operand is a view, read in the tile loads.
        let dbt = ctx.from_shape_slice([n, k], &transpose(&b, k, n)).unwrap();
        assert_close(
            &da.matmul(&dbt.t()).to_vec().unwrap(),
            &want,
            1e-12,
            "c64 matmul of a view",
        );
        let (a32, b32) = (random_c32(&mut r, m * k), random_c32(&mut r, k * n));
        let want = host_matmul(&widen(&a32), &widen(&b32), m, k, n);
        let da = ctx.from_shape_slice([m, k], &a32).unwrap();
        let db = ctx.from_shape_slice([k, n], &b32).unwrap();
        assert_close(&da.matmul(&db).to_vec().unwrap(), &want, 1e-4, "c32 matmul");
        let v = random_c32(&mut r, k);
        let want: Vec<c64> = (0..m)
            .map(|i| (0..k).map(|l| widen(&a32)[i * k + l] * widen(&v)[l]).sum())
            .collect();
        assert_close(
            &da.dot(&ctx.from_slice(&v).unwrap()).to_vec().unwrap(),
            &want,
            1e-4,
            "c32 matrix-vector",
        );
    }
}

/// Casts: real to complex, between the complex types; complex to real is an error naming
/// the line.
#[test]
fn casts_and_the_complex_to_real_error() {
    let ctx = ctx();
    let x = ctx.from_slice(&[1.5f32, -2.0]).unwrap();
    assert_eq!(
        x.cast::<c32>().to_vec().unwrap(),
        [c32::new(1.5, 0.0), c32::new(-2.0, 0.0)]
    );
    assert_eq!(
        x.cast::<c64>().to_vec().unwrap(),
        [c64::new(1.5, 0.0), c64::new(-2.0, 0.0)]
    );
    let i = ctx.from_slice(&[3i32]).unwrap();
    assert_eq!(i.cast::<c64>().to_vec().unwrap(), [c64::new(3.0, 0.0)]);
    let z = ctx.from_slice(&[c64::new(0.1, -0.2)]).unwrap();
    assert_eq!(z.cast::<c32>().to_vec().unwrap(), [c32::new(0.1, -0.2)]);
    let line = line!() + 1;
    let e = z.cast::<f64>().to_vec().unwrap_err();
    assert!(matches!(e, Error::InvalidCast { .. }), "{e}");
    let text = e.to_string();
    assert!(
        text.contains("c64") && text.contains(&format!("complex.rs:{line}")) && text.contains("re()"),
        "{text}"
    );
}

/// A chain of complex operations is one kernel, whatever its types, and complex values
/// feed real reductions inside it.
#[test]
fn complex_chains_fuse() {
    let ctx = ctx();
    let mut r = rng(7);
    let n = 1000;
    let (a, b) = (random_c32(&mut r, n), random_c32(&mut r, n));
    let x: Vec<f32> = a.iter().map(|z| z.im).collect();
    let (da, db, dx) = (
        ctx.from_slice(&a).unwrap(),
        ctx.from_slice(&b).unwrap(),
        ctx.from_slice(&x).unwrap(),
    );
    let before = ctx.stats();
    let y = ((&da * &db).conj() * &dx + c32::new(0.0, 1.0)).exp().abs();
    let got = y.to_vec().unwrap();
    assert_eq!((ctx.stats() - before).kernels_launched, 1);
    for i in 0..n {
        let (a, b) = (widen(&a)[i], widen(&b)[i]);
        let want = ((a * b).conj() * x[i] as f64 + c64::new(0.0, 1.0)).exp().norm();
        assert!(close_part(got[i] as f64, want, 1e-4), "{i}: {} vs {want}", got[i]);
    }
    let before = ctx.stats();
    let power = (&da * &db).norm_sqr().sum().item().unwrap();
    assert_eq!((ctx.stats() - before).kernels_launched, 1);
    let want: f64 = (0..n).map(|i| (widen(&a)[i] * widen(&b)[i]).norm_sqr()).sum();
    assert!(close_part(power as f64, want, 1e-5));
}

/// Generic code over complex element types: `|z|²` as a complex number, and `|z|`.
fn power<T: ComplexFloat>(z: &Array<T>) -> (Array<T>, Array<T::Real>) {
    (z * &z.conj(), z.abs())
}

#[test]
fn generic_functions_over_complex_types() {
    let ctx = ctx();
    let z = ctx.from_slice(&[c64::new(3.0, 4.0)]).unwrap();
    let (p, m) = power(&z);
    assert_close(&p.to_vec().unwrap(), &[c64::new(25.0, 0.0)], 0.0, "c64");
    assert_eq!(m.to_vec().unwrap(), [5.0]);
    let z = ctx.from_slice(&[c32::new(0.0, -2.0)]).unwrap();
    assert_close(&power(&z).0.to_vec().unwrap(), &[c64::new(4.0, 0.0)], 0.0, "c32");
}

/// Complex normals: circular, unit power, parts independent, a new stream each draw.
#[test]
fn standard_complex_normals() {
    let ctx = ctx();
    let n = 200_000;
    let mut rng = ctx.rng(11);
    let z = rng.standard_complex_normal::<f64>([n]).unwrap().to_vec().unwrap();
    let mean: c64 = z.iter().sum::<c64>() / n as f64;
    let power: f64 = z.iter().map(|v| v.norm_sqr()).sum::<f64>() / n as f64;
    let square: c64 = z.iter().map(|v| v * v).sum::<c64>() / n as f64;
    let cross: f64 = z.iter().map(|v| v.re * v.im).sum::<f64>() / n as f64;
    assert!(mean.norm() < 0.01, "mean {mean}");
    assert!((power - 1.0).abs() < 0.01, "power {power}");
    assert!(square.norm() < 0.01, "E[z²] {square}: not circular");
    assert!(cross.abs() < 0.01, "parts correlated: {cross}");
    let again = rng.standard_complex_normal::<f32>([4]).unwrap().to_vec().unwrap();
    let next = rng.standard_complex_normal::<f32>([4]).unwrap().to_vec().unwrap();
    assert_ne!(again, next);
}
