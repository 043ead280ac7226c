//! `var`/`std` (with `ddof`), `logsumexp`, `softmax`, `log_softmax`, `any`/`all` against
//! host references in `f64` on random data: several shapes and axes, sizes 1 and odd,
//! data far from zero (where a one-pass variance cancels), lanes of `-inf` and of huge
//! values (where an unshifted softmax overflows).

use crate::common::{ctx, rng, Random};
use lazycl::prelude::*;
use ndarray::{ArrayD, IxDyn};
use rand::Rng;

fn close(got: f64, want: f64, tol: f64, what: &str) {
    assert!(
        got == want || (got - want).abs() <= tol * (1.0 + want.abs()),
        "{what}: {got} vs {want}"
    );
}

/// Host variance of each lane along `axis` (two passes in f64).
fn host_var(a: &ArrayD<f64>, axis: usize, ddof: f64) -> Vec<f64> {
    a.lanes(ndarray::Axis(axis))
        .into_iter()
        .map(|l| {
            let n = l.len() as f64;
            let m = l.sum() / n;
            l.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - ddof)
        })
        .collect()
}

#[test]
fn variances_match_a_two_pass_host_reference() {
    let c = ctx();
    let mut r = rng(31);
    for shape in [vec![1usize], vec![7, 5], vec![3, 1001], vec![4, 6, 9]] {
        let n: usize = shape.iter().product();
        // Far from zero: 1e8 plus noise of 1.
        let v: Vec<f64> = (0..n).map(|_| 1e8 + r.gen_range(-1.0..1.0)).collect();
        let host = ArrayD::from_shape_vec(IxDyn(&shape), v.clone()).unwrap();
        let a = c.array(&host).unwrap();
        for axis in 0..shape.len() {
            for ddof in [0.0, 1.0] {
                if ddof >= shape[axis] as f64 {
                    continue;
                }
                let want = host_var(&host, axis, ddof);
                let got = a.var_axis(Axis(axis), ddof).to_vec().unwrap();
                let sd = a.std_axis(Axis(axis), ddof).to_vec().unwrap();
                for i in 0..want.len() {
                    close(
                        got[i],
                        want[i],
                        1e-6,
                        &format!("var {shape:?} axis {axis} ddof {ddof}"),
                    );
                    close(sd[i], want[i].sqrt(), 1e-6, "std");
                }
            }
        }
        let flat = ArrayD::from_shape_vec(IxDyn(&[n]), v).unwrap();
        if n > 1 {
            close(
                a.var(1.0).item().unwrap(),
                host_var(&flat, 0, 1.0)[0],
                1e-6,
                "var of all",
            );
        }
        // f32 data of unit scale.
        let v32 = f32::random_vec(&mut r, n);
        let h32 = ArrayD::from_shape_vec(IxDyn(&shape), v32.iter().map(|&x| f64::from(x)).collect()).unwrap();
        let a32 = c.from_shape_slice(shape.clone(), &v32).unwrap();
        let last = shape.len() - 1;
        let want = host_var(&h32, last, 0.0);
        let got = a32.var_axis(Axis(last), 0.0).to_vec().unwrap();
        for i in 0..want.len() {
            close(f64::from(got[i]), want[i], 1e-4, &format!("f32 var {shape:?}"));
        }
    }
}

#[test]
fn softmax_logsumexp_and_log_softmax_are_stable() {
    let c = ctx();
    let mut r = rng(32);
    for shape in [vec![1usize, 1], vec![5, 7], vec![3, 1000], vec![9, 2]] {
        let n: usize = shape.iter().product();
        let mut v: Vec<f64> = (0..n).map(|_| r.gen_range(-5.0..5.0)).collect();
        // A lane of huge values (row 0) and, where there are two rows, one of -inf.
        for x in v.iter_mut().take(shape[1]) {
            *x += 1000.0;
        }
        if shape[0] > 1 {
            for x in v[shape[1]..2 * shape[1]].iter_mut() {
                *x = f64::NEG_INFINITY;
            }
        }
        let host = ArrayD::from_shape_vec(IxDyn(&shape), v).unwrap();
        let a = c.array(&host).unwrap();
        for axis in [1usize, 0] {
            let lse: Vec<f64> = host
                .lanes(ndarray::Axis(axis))
                .into_iter()
                .map(|l| {
                    let m = l.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                    let m = if m.is_finite() { m } else { 0.0 };
                    m + l.iter().map(|x| (x - m).exp()).sum::<f64>().ln()
                })
                .collect();
            let got = a.logsumexp(axis).to_vec().unwrap();
            for (g, w) in got.iter().zip(&lse) {
                close(*g, *w, 1e-12, &format!("logsumexp {shape:?} axis {axis}"));
            }
            // softmax = exp(x - lse), log_softmax = x - lse, lane by lane.
            let sm = a.softmax(axis).to_ndarray().unwrap();
            let lsm = a.log_softmax(axis).to_ndarray().unwrap();
            for (k, ((lane, s), l)) in host
                .lanes(ndarray::Axis(axis))
                .into_iter()
                .zip(sm.lanes(ndarray::Axis(axis)))
                .zip(lsm.lanes(ndarray::Axis(axis)))
                .enumerate()
            {
                for ((x, g), gl) in lane.iter().zip(s.iter()).zip(l.iter()) {
                    if lse[k] == f64::NEG_INFINITY {
                        assert!(g.is_nan() && gl.is_nan(), "a lane of -inf: {g} {gl}");
                        continue;
                    }
                    close(
                        *g,
                        (x - lse[k]).exp(),
                        1e-12,
                        &format!("softmax {shape:?} axis {axis}"),
                    );
                    close(
                        *gl,
                        x - lse[k],
                        1e-12,
                        &format!("log_softmax {shape:?} axis {axis}"),
                    );
                }
            }
        }
    }
}

#[test]
fn any_and_all_of_masks() {
    let c = ctx();
    let mut r = rng(33);
    for shape in [vec![0usize], vec![1], vec![4, 9], vec![3, 1000]] {
        let n: usize = shape.iter().product();
        for density in [0.0, 0.001, 0.5, 1.0] {
            let v: Vec<bool> = (0..n).map(|_| r.gen_bool(density)).collect();
            let m = c.from_shape_slice(shape.clone(), &v).unwrap();
            assert_eq!(
                m.any().item().unwrap(),
                v.iter().any(|&b| b),
                "any {shape:?} {density}"
            );
            assert_eq!(
                m.all().item().unwrap(),
                v.iter().all(|&b| b),
                "all {shape:?} {density}"
            );
            if shape.len() == 2 {
                let h = ndarray::Array2::from_shape_vec((shape[0], shape[1]), v.clone()).unwrap();
                let any1: Vec<bool> = h.rows().into_iter().map(|r| r.iter().any(|&b| b)).collect();
                let all0: Vec<bool> = h.columns().into_iter().map(|c| c.iter().all(|&b| b)).collect();
                assert_eq!(m.any_axis(1).to_vec().unwrap(), any1);
                assert_eq!(m.all_axis(0).to_vec().unwrap(), all0);
            }
        }
    }
}

#[test]
fn bad_statistics_are_errors() {
    let c = ctx();
    let a: Array<f64> = c.zeros([3, 4]).unwrap();
    let e = a.var_axis(Axis(1), 4.0).to_vec().unwrap_err().to_string();
    assert!(
        e.contains("ddof = 4") && e.contains("4 elements along axis 1") && e.contains("[3, 4]"),
        "{e}"
    );
    let e = a.std_axis(Axis(2), 0.0).to_vec().unwrap_err().to_string();
    assert!(e.contains("std_axis: axis 2 is out of range"), "{e}");
    let e = a.var(-1.0).to_vec().unwrap_err().to_string();
    assert!(e.contains("ddof = -1"), "{e}");
    for (op, e) in [
        ("softmax", a.softmax(2).to_vec().unwrap_err()),
        ("log_softmax", a.log_softmax(2).to_vec().unwrap_err()),
        ("logsumexp", a.logsumexp(2).to_vec().unwrap_err()),
        ("any_axis", a.lt(1.0).any_axis(2).to_vec().unwrap_err()),
        ("all_axis", a.lt(1.0).all_axis(2).to_vec().unwrap_err()),
    ] {
        let e = e.to_string();
        assert!(
            e.contains(&format!(
                "{op}: axis 2 is out of range for an array of shape [3, 4]"
            )),
            "{e}"
        );
    }
}
