//! The operations beyond elementwise work on the element types narrower than 32 bits:
//! reductions and scans accumulate in their compute type (`f32`, 32-bit integers; the
//! sums of small integers are 32-bit, JAX's rule), sorts and selections order 16-bit
//! floats as floats with NaN last, scatters add in the compute type, random numbers,
//! bincount of `u8`, row kernels and matrix products. Host references in `f64` or `f32`.

use crate::common::{ctx, rng, Random};
use lazycl::prelude::*;

fn to_bf16(v: &[f32]) -> Vec<bf16> {
    v.iter().map(|&x| bf16::from_f32(x)).collect()
}

fn to_f16(v: &[f32]) -> Vec<f16> {
    v.iter().map(|&x| f16::from_f32(x)).collect()
}

#[test]
fn sums_of_small_integers_are_32_bit_and_do_not_wrap_at_8_bits() {
    let ctx = ctx();
    for n in [0usize, 1, 7, 1000, 70_001] {
        let x = u8::random_vec(&mut rng(n as u64), n);
        let a = ctx.from_slice(&x).unwrap();
        let s: Array<u32> = a.sum();
        assert_eq!(
            s.item().unwrap(),
            x.iter().map(|&v| u32::from(v)).sum::<u32>(),
            "n = {n}"
        );
        let y = i8::random_vec(&mut rng(n as u64 + 1), n);
        let b = ctx.from_slice(&y).unwrap();
        let t: Array<i32> = b.sum();
        assert_eq!(t.item().unwrap(), y.iter().map(|&v| i32::from(v)).sum::<i32>());
        if n > 0 {
            assert_eq!(a.amax().item().unwrap(), *x.iter().max().unwrap());
            assert_eq!(b.amin().item().unwrap(), *y.iter().min().unwrap());
            let first_max = y.iter().position(|v| v == y.iter().max().unwrap()).unwrap();
            assert_eq!(b.argmax().item().unwrap() as usize, first_max);
        }
    }
    let m = i16::random_vec(&mut rng(3), 5 * 9);
    let a = ctx.from_shape_slice([5, 9], &m).unwrap();
    let rows: Array<i32> = a.sum_axis(1);
    let want: Vec<i32> = m
        .chunks(9)
        .map(|r| r.iter().map(|&v| i32::from(v)).sum())
        .collect();
    assert_eq!(rows.to_vec().unwrap(), want);
    let cols = a.amax_axis(0).to_vec().unwrap();
    let want: Vec<i16> = (0..9)
        .map(|c| (0..5).map(|r| m[r * 9 + c]).max().unwrap())
        .collect();
    assert_eq!(cols, want);
    let p: Array<u32> = ctx.from_slice(&[200u16, 300, 2]).unwrap().prod();
    assert_eq!(p.item().unwrap(), 120_000);
}

#[test]
fn sums_of_16_bit_floats_accumulate_in_f32_and_round_once() {
    let ctx = ctx();
    // 4096 ones: a sum kept in bf16 stops at 256.
    let ones = ctx.ones::<bf16>([4096]).unwrap();
    assert_eq!(ones.sum().item().unwrap(), bf16::from_f32(4096.0));
    let halves = ctx.full([3000], f16::from_f32(0.5)).unwrap();
    assert_eq!(halves.sum().item().unwrap(), f16::from_f32(1500.0));
    for n in [1usize, 7, 1000, 65_537] {
        let x = f32::random_vec(&mut rng(n as u64), n);
        let (b, h) = (to_bf16(&x), to_f16(&x));
        let want_b: f64 = b.iter().map(|v| v.to_f64()).sum();
        let got = ctx.from_slice(&b).unwrap().sum().item().unwrap();
        assert_eq!(got, bf16::from_f64(want_b), "bf16 n = {n}: {got} vs {want_b}");
        let want_h: f64 = h.iter().map(|v| v.to_f64()).sum();
        let got = ctx.from_slice(&h).unwrap().sum().item().unwrap();
        let tol = f16::from_f64(want_h).to_f64().abs() * 2f64.powi(-10) + 1e-3;
        assert!(
            (got.to_f64() - want_h).abs() <= tol,
            "f16 n = {n}: {got} vs {want_h}"
        );
        let mean = ctx.from_slice(&h).unwrap().mean().item().unwrap();
        assert!((mean.to_f64() - want_h / n as f64).abs() <= 1e-3 * (1.0 + (want_h / n as f64).abs()));
    }
    let x = to_f16(&[1.0, f32::NAN, -3.0, 2.5]);
    let a = ctx.from_slice(&x).unwrap();
    assert_eq!(a.amax().item().unwrap(), f16::from_f32(2.5));
    assert_eq!(a.argmin().item().unwrap(), 2);
    let m = to_bf16(&f32::random_vec(&mut rng(5), 4 * 33));
    let a = ctx.from_shape_slice([4, 33], &m).unwrap();
    let rows = a.sum_axis(1).to_vec().unwrap();
    for (r, got) in rows.iter().enumerate() {
        let want: f64 = m[r * 33..(r + 1) * 33].iter().map(|v| v.to_f64()).sum();
        assert_eq!(*got, bf16::from_f64(want), "row {r}");
    }
    let norm = a.norm().item().unwrap().to_f64();
    let want = m.iter().map(|v| v.to_f64().powi(2)).sum::<f64>().sqrt();
    assert!((norm - want).abs() <= want * 2f64.powi(-7));
}

#[test]
fn scans_of_narrow_types_accumulate_wide() {
    let ctx = ctx();
    let x = u8::random_vec(&mut rng(7), 3000);
    let c: Array<u32> = ctx.from_slice(&x).unwrap().cumsum(0);
    let mut acc = 0u32;
    let want: Vec<u32> = x
        .iter()
        .map(|&v| {
            acc += u32::from(v);
            acc
        })
        .collect();
    assert_eq!(c.to_vec().unwrap(), want);
    let b = ctx.ones::<bf16>([1000]).unwrap().cumsum(0).to_vec().unwrap();
    assert_eq!(b[999], bf16::from_f32(1000.0));
    assert_eq!(b[299], bf16::from_f32(300.0));
}

#[test]
fn sorts_and_selections_order_16_bit_floats_as_floats_with_nan_last() {
    let ctx = ctx();
    let mut x = f32::random_vec(&mut rng(11), 2000);
    x[7] = f32::NAN;
    x[9] = f32::NEG_INFINITY;
    x[11] = -0.0;
    for (name, sorted, args) in [
        ("f16", sorted_f16(&ctx, &x), argsorted_f16(&ctx, &x)),
        ("bf16", sorted_bf16(&ctx, &x), argsorted_bf16(&ctx, &x)),
    ] {
        assert!(sorted.last().unwrap().is_nan(), "{name}");
        assert!(
            sorted[..sorted.len() - 1].windows(2).all(|w| w[0] <= w[1]),
            "{name}"
        );
        assert_eq!(args.len(), x.len());
    }
    let h = to_f16(&x);
    let top = ctx.from_slice(&h).unwrap().topk(5).unwrap();
    let mut want = h.clone();
    want.retain(|v| !v.is_nan());
    want.sort_by(|a, b| b.partial_cmp(a).unwrap());
    let values = top.values.to_vec().unwrap();
    // topk puts NaN first, as the largest (numpy's sort order, reversed).
    assert!(values[0].is_nan());
    assert_eq!(&values[1..], &want[..4]);
    let u = u8::random_vec(&mut rng(12), 777);
    let mut su = u.clone();
    su.sort();
    assert_eq!(ctx.from_slice(&u).unwrap().sort().unwrap().to_vec().unwrap(), su);
    let bottom = ctx.from_slice(&u).unwrap().bottomk(3).unwrap();
    assert_eq!(bottom.values.to_vec().unwrap(), &su[..3]);
    let i = i16::random_vec(&mut rng(13), 5 * 40);
    let a = ctx.from_shape_slice([5, 40], &i).unwrap();
    let order = a.argsort_axis(1).unwrap().to_vec().unwrap();
    for r in 0..5 {
        let row = &i[r * 40..(r + 1) * 40];
        let picked: Vec<i16> = order[r * 40..(r + 1) * 40]
            .iter()
            .map(|&k| row[k as usize])
            .collect();
        assert!(picked.windows(2).all(|w| w[0] <= w[1]), "row {r}");
    }
}

fn sorted_f16(ctx: &Context, x: &[f32]) -> Vec<f32> {
    let a = ctx.from_slice(&to_f16(x)).unwrap();
    a.sort()
        .unwrap()
        .to_vec()
        .unwrap()
        .iter()
        .map(|v| v.to_f32())
        .collect()
}

fn sorted_bf16(ctx: &Context, x: &[f32]) -> Vec<f32> {
    let a = ctx.from_slice(&to_bf16(x)).unwrap();
    a.sort()
        .unwrap()
        .to_vec()
        .unwrap()
        .iter()
        .map(|v| v.to_f32())
        .collect()
}

fn argsorted_f16(ctx: &Context, x: &[f32]) -> Vec<u32> {
    ctx.from_slice(&to_f16(x))
        .unwrap()
        .argsort()
        .unwrap()
        .to_vec()
        .unwrap()
}

fn argsorted_bf16(ctx: &Context, x: &[f32]) -> Vec<u32> {
    ctx.from_slice(&to_bf16(x))
        .unwrap()
        .argsort()
        .unwrap()
        .to_vec()
        .unwrap()
}

#[test]
fn scatter_adds_into_narrow_types_add_wide_and_bincount_reads_u8() {
    let ctx = ctx();
    let mut sums = ctx.zeros::<bf16>([3]).unwrap();
    let idx = ctx.from_slice(&vec![1u8; 1000]).unwrap();
    let ones = ctx.ones::<bf16>([1000]).unwrap();
    scatter_add(&mut sums, 0, &idx, &ones).unwrap();
    // In bf16 arithmetic one at a time, the sum would stop at 256.
    assert_eq!(
        sums.to_vec().unwrap(),
        [bf16::ZERO, bf16::from_f32(1000.0), bf16::ZERO]
    );
    let mut counts = ctx.zeros::<u8>([2]).unwrap();
    let idx = ctx.from_slice(&vec![0u32; 300]).unwrap();
    scatter_add(&mut counts, 0, &idx, 1u8).unwrap();
    assert_eq!(counts.to_vec().unwrap(), [(300u32 % 256) as u8, 0]);
    let labels = u8::random_vec(&mut rng(17), 5000);
    let got = ctx
        .from_slice(&labels)
        .unwrap()
        .bincount(256)
        .unwrap()
        .to_vec()
        .unwrap();
    let mut want = vec![0u32; 256];
    for &l in &labels {
        want[l as usize] += 1;
    }
    assert_eq!(got, want);
    let wide = u16::random_vec(&mut rng(18), 100);
    let got = ctx
        .from_slice(&wide)
        .unwrap()
        .bincount(70000)
        .unwrap()
        .to_vec()
        .unwrap();
    assert_eq!(got.iter().sum::<u32>(), 100);
}

#[test]
fn random_numbers_of_narrow_types_stay_in_range() {
    let ctx = ctx();
    let mut r = ctx.rng(5);
    let h = r.random::<f16>([20_000]).unwrap().to_vec().unwrap();
    assert!(h.iter().all(|v| v.to_f32() >= 0.0 && v.to_f32() < 1.0));
    let mean = h.iter().map(|v| v.to_f64()).sum::<f64>() / h.len() as f64;
    assert!((mean - 0.5).abs() < 0.02, "{mean}");
    let b = r.random::<bf16>([20_000]).unwrap().to_vec().unwrap();
    assert!(b.iter().all(|v| v.to_f32() >= 0.0 && v.to_f32() < 1.0));
    let n = r.standard_normal::<bf16>([20_000]).unwrap().to_vec().unwrap();
    let m = n.iter().map(|v| v.to_f64()).sum::<f64>() / n.len() as f64;
    assert!(m.abs() < 0.05, "{m}");
    let dice = ctx.random_int([5000], -3i8, 4, 9).unwrap().to_vec().unwrap();
    assert!(dice.iter().all(|d| (-3..4).contains(d)));
    assert!((-3..4).all(|face| dice.contains(&face)));
    let bytes = ctx.random_int([5000], 0u8, 255, 9).unwrap().to_vec().unwrap();
    assert!(bytes.contains(&254) && bytes.contains(&0) && !bytes.contains(&255));
}

#[test]
fn softmax_and_layer_norm_over_16_bit_rows_compute_in_f32() {
    let ctx = ctx();
    let (rows, cols) = (6usize, 333usize);
    let x = f32::random_vec(&mut rng(23), rows * cols);
    let b = to_bf16(&x.iter().map(|v| v / 10.0).collect::<Vec<_>>());
    let a = ctx.from_shape_slice([rows, cols], &b).unwrap();
    let got = a.softmax(1).to_vec().unwrap();
    for r in 0..rows {
        let row: Vec<f64> = b[r * cols..(r + 1) * cols].iter().map(|v| v.to_f64()).collect();
        let m = row.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let z: f64 = row.iter().map(|v| (v - m).exp()).sum();
        for c in 0..cols {
            let want = bf16::from_f64((row[c] - m).exp() / z);
            let d = (got[r * cols + c].to_bits() as i32 - want.to_bits() as i32).abs();
            assert!(d <= 1, "({r}, {c}): {} vs {want}", got[r * cols + c]);
        }
    }
    let h = to_f16(&x);
    let a = ctx.from_shape_slice([rows, cols], &h).unwrap();
    let centered = &a - a.mean_axes(&[1], true);
    let var = (&centered * &centered).mean_axes(&[1], true);
    let got = (&centered / (var + f16::from_f32(1e-5)).sqrt()).to_vec().unwrap();
    for r in 0..rows {
        let row: Vec<f64> = h[r * cols..(r + 1) * cols].iter().map(|v| v.to_f64()).collect();
        let mean = row.iter().sum::<f64>() / cols as f64;
        let var = row.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / cols as f64;
        for c in 0..cols {
            let want = (row[c] - mean) / (var + 1e-5).sqrt();
            let g = got[r * cols + c].to_f64();
            assert!(
                (g - want).abs() <= 2e-3 * want.abs().max(1.0),
                "({r}, {c}): {g} vs {want}"
            );
        }
    }
}

#[test]
fn a_16_bit_matrix_product_accumulates_in_f32_with_its_epilogue_in_one_kernel() {
    let ctx = ctx();
    for (m, k, n) in [(1usize, 1usize, 1usize), (7, 33, 5), (64, 70, 96), (130, 257, 65)] {
        let x = to_f16(
            &f32::random_vec(&mut rng(m as u64), m * k)
                .iter()
                .map(|v| v / 100.0)
                .collect::<Vec<_>>(),
        );
        let y = to_f16(
            &f32::random_vec(&mut rng(k as u64 + 1), k * n)
                .iter()
                .map(|v| v / 100.0)
                .collect::<Vec<_>>(),
        );
        let bias = to_f16(
            &f32::random_vec(&mut rng(n as u64 + 2), n)
                .iter()
                .map(|v| v / 100.0)
                .collect::<Vec<_>>(),
        );
        let (a, b, c) = (
            ctx.from_shape_slice([m, k], &x).unwrap(),
            ctx.from_shape_slice([k, n], &y).unwrap(),
            ctx.from_slice(&bias).unwrap(),
        );
        let before = ctx.stats();
        let out = (a.matmul(&b) + &c).max(f16::ZERO).to_vec().unwrap();
        let d = ctx.stats() - before;
        assert_eq!(d.kernels_launched, 1, "{m}x{k}x{n}: {d}");
        for i in 0..m {
            for j in 0..n {
                let dot: f64 = (0..k)
                    .map(|p| x[i * k + p].to_f64() * y[p * n + j].to_f64())
                    .sum();
                let want = (dot + bias[j].to_f64()).max(0.0);
                let got = out[i * n + j].to_f64();
                assert!(
                    (got - want).abs() <= 1e-3 * want.abs() + 1e-4,
                    "{m}x{k}x{n} ({i}, {j}): {got} vs {want}"
                );
            }
        }
        let bb = to_bf16(&x.iter().map(|v| v.to_f32()).collect::<Vec<_>>());
        let yb = to_bf16(&y.iter().map(|v| v.to_f32()).collect::<Vec<_>>());
        let p = ctx
            .from_shape_slice([m, k], &bb)
            .unwrap()
            .matmul(&ctx.from_shape_slice([k, n], &yb).unwrap());
        let got = p.to_vec().unwrap();
        for i in 0..m {
            for j in 0..n {
                let dot: f64 = (0..k)
                    .map(|q| bb[i * k + q].to_f64() * yb[q * n + j].to_f64())
                    .sum();
                assert!((got[i * n + j].to_f64() - dot).abs() <= dot.abs() * 2f64.powi(-7) + 1e-5);
            }
        }
    }
}

#[test]
fn a_16_bit_product_asked_for_in_f32_reads_16_bits_and_stores_f32_in_one_kernel() {
    let ctx = ctx();
    let (m, k, n) = (130usize, 70usize, 257usize);
    let x = to_bf16(&f32::random_vec(&mut rng(61), m * k));
    let y = to_bf16(&f32::random_vec(&mut rng(62), k * n));
    let a = ctx.from_shape_slice([m, k], &x).unwrap();
    let b = ctx.from_shape_slice([k, n], &y).unwrap();
    // (The first product of a shape class may time or try its tile first.)
    a.cast::<f32>().matmul(&b.cast::<f32>()).to_vec().unwrap();
    let before = ctx.stats();
    let p: Vec<f32> = a.cast::<f32>().matmul(&b.cast::<f32>()).to_vec().unwrap();
    let d = ctx.stats() - before;
    assert_eq!(d.kernels_launched, 1, "{d}");
    for i in 0..m {
        for j in 0..n {
            let terms = (0..k).map(|q| x[i * k + q].to_f64() * y[q * n + j].to_f64());
            let (dot, size): (f64, f64) = terms.fold((0.0, 0.0), |(s, a), t| (s + t, a + t.abs()));
            // f32 accumulation (a few ulps of the terms' size), no rounding to bf16 at the
            // end (which would be 2^-9 of the result).
            let err = (f64::from(p[i * n + j]) - dot).abs();
            assert!(err <= 1e-5 * size, "({i}, {j}): {} vs {dot}", p[i * n + j]);
        }
    }
}
