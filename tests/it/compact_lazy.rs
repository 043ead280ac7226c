//! What follows a filter, without waiting: a `Compacted` sorted, reduced, mapped, cut to
//! its first `k`, gathered through and scattered to, against host filters on random data
//! (masks none, few, half and all true; lengths 0, 1, odd and several tiles; several
//! element types; NaN among the data), and its host waits counted: a filter, a sort and
//! a sum wait only when the sum is read.

use crate::common::{ctx, rng, Random};
use lazycl::{Compacted, Context, Element, Numeric};
use rand::Rng;

const LENGTHS: [usize; 6] = [0, 1, 7, 4096, 4097, 65_537];
const DENSITIES: [f64; 4] = [0.0, 0.01, 0.5, 1.0];

fn mask(r: &mut rand::rngs::StdRng, n: usize, density: f64) -> Vec<bool> {
    (0..n).map(|_| r.gen_bool(density)).collect()
}

fn picked<T: Copy>(v: &[T], m: &[bool]) -> Vec<T> {
    v.iter().zip(m).filter(|(_, &k)| k).map(|(&x, _)| x).collect()
}

/// Ascending with every NaN last (and equal among themselves): the device sort's order.
fn order<T: PartialOrd>(a: &T, b: &T) -> std::cmp::Ordering {
    #[allow(clippy::eq_op)]
    match (a != a, b != b) {
        (false, false) => a.partial_cmp(b).unwrap(),
        (x, y) => x.cmp(&y),
    }
}

/// Equal, or both NaN.
#[allow(clippy::eq_op)]
fn same<T: PartialEq>(a: &[T], b: &[T]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y || (x != x && y != y))
}

/// The stable order of `v` (NaN last).
fn host_argsort<T: PartialOrd + Copy>(v: &[T]) -> Vec<u32> {
    let mut idx: Vec<u32> = (0..v.len() as u32).collect();
    idx.sort_by(|&i, &j| order(&v[i as usize], &v[j as usize]));
    idx
}

fn sorts_like_the_host<T: Element + Numeric + Random>(c: &Context, seed: u64) {
    let mut r = rng(seed);
    for &n in &LENGTHS {
        for density in DENSITIES {
            let v = T::random_vec(&mut r, n);
            let m = mask(&mut r, n, density);
            let want = picked(&v, &m);
            let what = format!("{:?} n {n} density {density}", T::DTYPE);
            let x = c
                .from_slice(&v)
                .unwrap()
                .compress(&c.from_slice(&m).unwrap())
                .unwrap();
            let mut sorted = want.clone();
            sorted.sort_by(order);
            let s = x.sort().unwrap();
            assert_eq!(s.capacity(), n, "{what}");
            assert!(same(&s.to_vec().unwrap(), &sorted), "sort {what}");
            assert_eq!(
                x.argsort().unwrap().to_vec().unwrap(),
                host_argsort(&want),
                "argsort {what}"
            );
            for k in [0, 1, 5, n] {
                let first = &sorted[..k.min(sorted.len())];
                assert!(same(&s.head(k).to_vec().unwrap(), first), "head {k} {what}");
            }
        }
    }
}

#[test]
fn filter_then_sort_f32_and_i32() {
    let c = ctx();
    sorts_like_the_host::<f32>(&c, 1);
    sorts_like_the_host::<i32>(&c, 2);
}

#[test]
fn filter_then_sort_u64_and_f64() {
    let c = ctx();
    sorts_like_the_host::<u64>(&c, 3);
    sorts_like_the_host::<f64>(&c, 4);
}

#[test]
fn nan_and_the_largest_value_among_the_picked_stay_before_the_tail() {
    let c = ctx();
    let mut r = rng(5);
    for n in [1, 9, 4097, 20_001] {
        // Floats: NaN (of both signs) among the data, some picked.
        let mut v = f32::random_vec(&mut r, n);
        for (i, e) in v.iter_mut().enumerate() {
            match i % 5 {
                0 => *e = f32::NAN,
                3 => *e = -f32::NAN,
                _ => {}
            }
        }
        let m = mask(&mut r, n, 0.6);
        let want = picked(&v, &m);
        let x = c
            .from_slice(&v)
            .unwrap()
            .compress(&c.from_slice(&m).unwrap())
            .unwrap();
        let mut sorted = want.clone();
        sorted.sort_by(order);
        assert!(same(&x.sort().unwrap().to_vec().unwrap(), &sorted), "n {n}");
        let by = x.argsort().unwrap().to_vec().unwrap();
        assert_eq!(by, host_argsort(&want), "argsort n {n}");
        // Integers: the type's largest value among the data.
        let w: Vec<i64> = (0..n as i64)
            .map(|i| {
                if i % 3 == 0 {
                    i64::MAX
                } else {
                    i * 7919 % 1000 - 500
                }
            })
            .collect();
        let want = picked(&w, &m);
        let y = c
            .from_slice(&w)
            .unwrap()
            .compress(&c.from_slice(&m).unwrap())
            .unwrap();
        assert_eq!(
            y.argsort().unwrap().to_vec().unwrap(),
            host_argsort(&want),
            "i64 n {n}"
        );
        let mut sorted = want.clone();
        sorted.sort();
        assert_eq!(y.sort().unwrap().to_vec().unwrap(), sorted, "i64 n {n}");
    }
}

/// Sum, mean, smallest and largest (and where) of the picked `f64`s of `x`.
fn host_stats(want: &[f64]) -> (f64, f64, f64, f64, u32, u32) {
    let sum: f64 = want.iter().sum();
    let (mut lo, mut hi, mut at_lo, mut at_hi) = (f64::NAN, f64::NAN, 0, 0);
    for (i, &e) in want.iter().enumerate() {
        if lo.is_nan() || e < lo {
            (lo, at_lo) = (e, i as u32);
        }
        if hi.is_nan() || e > hi {
            (hi, at_hi) = (e, i as u32);
        }
    }
    (sum, sum / want.len() as f64, lo, hi, at_lo, at_hi)
}

fn close(got: f64, want: f64, scale: f64) -> bool {
    (got.is_nan() && want.is_nan()) || (got - want).abs() <= 1e-4 * (1.0 + scale)
}

#[test]
fn filter_then_reduce_floats() {
    let c = ctx();
    let mut r = rng(6);
    for &n in &LENGTHS {
        for density in DENSITIES {
            let v = f32::random_vec(&mut r, n);
            let m = mask(&mut r, n, density);
            let want: Vec<f64> = picked(&v, &m).iter().map(|&e| f64::from(e)).collect();
            let (sum, mean, lo, hi, at_lo, at_hi) = host_stats(&want);
            let scale: f64 = want.iter().map(|e| e.abs()).sum();
            let what = format!("n {n} density {density}");
            let x = c
                .from_slice(&v)
                .unwrap()
                .compress(&c.from_slice(&m).unwrap())
                .unwrap();
            assert!(
                close(f64::from(x.sum().item().unwrap()), sum, scale),
                "sum {what}"
            );
            assert!(
                close(f64::from(x.mean().item().unwrap()), mean, 100.0),
                "mean {what}"
            );
            assert!(close(f64::from(x.amin().item().unwrap()), lo, 0.0), "amin {what}");
            assert!(close(f64::from(x.amax().item().unwrap()), hi, 0.0), "amax {what}");
            assert_eq!(x.argmin().item().unwrap(), at_lo, "argmin {what}");
            assert_eq!(x.argmax().item().unwrap(), at_hi, "argmax {what}");
        }
    }
    // A product, of values near 1.
    let v: Vec<f64> = (0..4097)
        .map(|i| 1.0 + ((i * 37 % 101) as f64 - 50.0) * 1e-3)
        .collect();
    let m = mask(&mut r, v.len(), 0.5);
    let want: f64 = picked(&v, &m).iter().product();
    let x = c
        .from_slice(&v)
        .unwrap()
        .compress(&c.from_slice(&m).unwrap())
        .unwrap();
    assert!((x.prod().item().unwrap() / want - 1.0).abs() < 1e-9);
}

#[test]
fn filter_then_reduce_integers_and_nothing_picked() {
    let c = ctx();
    let mut r = rng(7);
    for &n in &LENGTHS {
        for density in DENSITIES {
            let v = i32::random_vec(&mut r, n);
            let m = mask(&mut r, n, density);
            let want = picked(&v, &m);
            let what = format!("n {n} density {density}");
            let x = c
                .from_slice(&v)
                .unwrap()
                .compress(&c.from_slice(&m).unwrap())
                .unwrap();
            let sum = want.iter().fold(0i32, |a, &e| a.wrapping_add(e));
            assert_eq!(x.sum().item().unwrap(), sum, "sum {what}");
            let prod = want.iter().fold(1i32, |a, &e| a.wrapping_mul(e));
            assert_eq!(x.prod().item().unwrap(), prod, "prod {what}");
            // Of nothing: the largest value for the smallest, the smallest for the largest.
            assert_eq!(
                x.amin().item().unwrap(),
                want.iter().copied().min().unwrap_or(i32::MAX),
                "{what}"
            );
            assert_eq!(
                x.amax().item().unwrap(),
                want.iter().copied().max().unwrap_or(i32::MIN),
                "{what}"
            );
        }
    }
    // Nothing picked of floats: a sum of 0, the mean, smallest and largest NaN.
    let x = c.from_slice(&[1.0f32, 2.0, 3.0]).unwrap();
    let none = x.compress(&x.gt(5.0)).unwrap();
    assert_eq!(none.sum().item().unwrap(), 0.0);
    assert!(none.mean().item().unwrap().is_nan());
    assert!(none.amin().item().unwrap().is_nan());
    assert!(none.amax().item().unwrap().is_nan());
    assert!(none.sort().unwrap().to_vec().unwrap().is_empty());
}

#[test]
fn maps_filled_and_gathers_keep_the_count() {
    let c = ctx();
    let mut r = rng(8);
    for n in [0, 1, 7, 4097] {
        let v = f64::random_vec(&mut r, n);
        let m = mask(&mut r, n, 0.4);
        let want = picked(&v, &m);
        let xs = c.from_slice(&v).unwrap();
        let mk = c.from_slice(&m).unwrap();
        let x = xs.compress(&mk).unwrap();
        let doubled = x.map(|a| 2.0 * a + 1.0).unwrap();
        let host: Vec<f64> = want.iter().map(|e| 2.0 * e + 1.0).collect();
        assert_eq!(doubled.to_vec().unwrap(), host, "n {n}");
        let as_int = x.map(|a| a.cast::<i64>()).unwrap();
        assert_eq!(
            as_int.to_vec().unwrap(),
            want.iter().map(|&e| e as i64).collect::<Vec<_>>()
        );
        // `filled`: the picked, then the fill.
        let mut f = want.clone();
        f.resize(n, -1.0);
        assert_eq!(x.filled(-1.0).to_vec().unwrap(), f);
        // `nonzero` then `take_from`: the same elements as `compress`.
        let nz = mk.nonzero().unwrap();
        assert_eq!(nz.take_from(&xs).unwrap().to_vec().unwrap(), want);
        // `argsort` then `take_from`: the sort.
        let mut sorted = want.clone();
        sorted.sort_by(order);
        let back = x.argsort().unwrap().take_from(x.values()).unwrap();
        assert_eq!(back.to_vec().unwrap(), sorted);
    }
    let x = c
        .from_slice(&[1.0f32, 2.0])
        .unwrap()
        .compress(&c.from_slice(&[true, false]).unwrap())
        .unwrap();
    let e = x.map(|a| a.sum()).err().unwrap().to_string();
    assert!(e.contains("map") && e.contains("[2]") && e.contains("[]"), "{e}");
    let e = c.from_shape_slice([1, 2], &[0u32, 1]).unwrap();
    let p = c
        .from_slice(&[1u32])
        .unwrap()
        .compress(&c.from_slice(&[true]).unwrap())
        .unwrap();
    assert!(p.take_from(&e).err().unwrap().to_string().contains("[1, 2]"));
}

#[test]
fn filter_then_bincount_and_scatter_add() {
    let c = ctx();
    let mut r = rng(9);
    for n in [0, 1, 7, 4097, 65_537] {
        for density in DENSITIES {
            let labels: Vec<u32> = (0..n).map(|_| r.gen_range(0..37)).collect();
            let w = f32::random_vec(&mut r, n);
            let m = mask(&mut r, n, density);
            let mut counts = vec![0u32; 37];
            let mut sums = vec![0f64; 37];
            for i in (0..n).filter(|&i| m[i]) {
                counts[labels[i] as usize] += 1;
                sums[labels[i] as usize] += f64::from(w[i]);
            }
            let mk = c.from_slice(&m).unwrap();
            let l = c.from_slice(&labels).unwrap().compress(&mk).unwrap();
            assert_eq!(
                l.bincount(37).unwrap().to_vec().unwrap(),
                counts,
                "n {n} density {density}"
            );
            let weights = c.from_slice(&w).unwrap().compress(&mk).unwrap();
            let mut got = c.zeros::<f32>([37]).unwrap();
            l.scatter_add(&mut got, 0, weights.values()).unwrap();
            for (g, s) in got.to_vec().unwrap().iter().zip(&sums) {
                assert!(
                    (f64::from(*g) - s).abs() < 1e-2,
                    "{g} vs {s} n {n} density {density}"
                );
            }
        }
    }
    // An axis that every u32 indexes leaves no index to mark the tail: refused, no memory.
    let l = c
        .from_slice(&[1u32])
        .unwrap()
        .compress(&c.from_slice(&[true]).unwrap())
        .unwrap();
    let e = l.bincount(u32::MAX as usize + 1).err().unwrap().to_string();
    assert!(e.contains("bincount") && e.contains("u64"), "{e}");
}

fn positive(c: &Context, n: usize) -> (Vec<f32>, Compacted<f32>) {
    let v = f32::random_vec(&mut rng(10), n);
    let x = c.from_slice(&v).unwrap();
    let p = x.compress(&x.gt(0.0)).unwrap();
    (v, p)
}

#[test]
fn filter_sort_sum_waits_only_for_the_read() {
    let c = ctx();
    let n = 100_003;
    let (v, _) = positive(&c, n);
    c.synchronize().unwrap();
    let before = c.stats();
    let (_, p) = positive(&c, n);
    let sorted = p.sort().unwrap();
    let top = sorted.head(1000);
    let (total, mean, small) = (top.sum(), sorted.mean(), sorted.amin());
    let hist = p.map(|a| a.cast::<u32>()).unwrap().bincount(100).unwrap();
    for a in [&total, &mean, &small] {
        a.eval().unwrap();
    }
    let d = c.stats() - before;
    assert_eq!(
        d.host_waits, 0,
        "a filter, a sort, reductions and a bincount: {d:?}"
    );
    let mut want: Vec<f64> = v.iter().filter(|&&e| e > 0.0).map(|&e| f64::from(e)).collect();
    want.sort_by(order);
    let t: f64 = want[..1000].iter().sum();
    assert!((f64::from(total.item().unwrap()) - t).abs() < 1e-2 * t.abs().max(1.0));
    assert_eq!(f64::from(small.item().unwrap()), want[0]);
    assert!((f64::from(mean.item().unwrap()) - want.iter().sum::<f64>() / want.len() as f64).abs() < 1e-3);
    assert_eq!(hist.to_vec().unwrap().iter().sum::<u32>(), want.len() as u32);
    let d = c.stats() - before;
    assert_eq!(d.waits_read, 4, "each read waits once: {d:?}");
}

#[test]
fn a_reduction_of_the_picked_is_one_kernel_like_any_reduction() {
    let c = ctx();
    let (_, p) = positive(&c, 50_001);
    c.synchronize().unwrap();
    let plain = c.from_slice(&[1.0f32; 50_001]).unwrap();
    c.synchronize().unwrap();
    let before = c.stats();
    plain.sum().eval().unwrap();
    let reference = c.stats() - before;
    let before = c.stats();
    p.sum().eval().unwrap();
    let d = c.stats() - before;
    assert_eq!(
        d.kernels_launched, reference.kernels_launched,
        "the count is read inside: {d:?}"
    );
    assert_eq!(d.host_waits, 0);
}
