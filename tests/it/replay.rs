//! Replay: a flush structured like one planned before (same operations, types, shapes,
//! views and roots) runs the earlier plans, binding its own buffers and scalars. Asserted
//! with the counters (`flushes_planned`, `plans_reused`), and every replayed result
//! checked against the host: a plan that kept an old buffer, scalar or offset would fail.

use crate::common::{ctx, rng, Random};
use lazycl::{s, Array, Axis};
use ndarray::Array2;

fn close(got: &[f32], want: &[f32], tol: f32) {
    assert_eq!(got.len(), want.len());
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((g - w).abs() <= tol * (1.0 + w.abs()), "element {i}: {g} vs {w}");
    }
}

/// One step of gradient descent for least squares, `w -= lr * x^T (x w - y) / n`:
/// a product, its residual and a second product, recorded anew every step.
#[test]
fn a_hundred_step_loop_plans_once() {
    let ctx = ctx();
    let (n, d) = (37, 5);
    let mut r = rng(41);
    let xh: Vec<f32> = f32::random_vec(&mut r, n * d).iter().map(|v| v / 100.0).collect();
    let yh: Vec<f32> = f32::random_vec(&mut r, n).iter().map(|v| v / 100.0).collect();
    let x = ctx.from_shape_slice([n, d], &xh).unwrap();
    let y = ctx.from_shape_slice([n, 1], &yh).unwrap();
    let mut w = ctx.zeros::<f32>([d, 1]).unwrap();
    let mut wh = vec![0.0f64; d];
    let step = |w: &Array<f32>, lr: f32| {
        let residual = x.matmul(w) - &y; // [n, 1]
        w - (lr / n as f32) * x.t().matmul(&residual)
    };
    // The first step plans; the hundred after it replay.
    w = step(&w, 0.5);
    w.eval().unwrap();
    host_step(&xh, &yh, &mut wh, n, d, 0.5);
    let before = ctx.stats();
    for i in 0..100 {
        // A new learning rate each step: a scalar the replayed plans must bind anew.
        let lr = 0.5 - 0.002 * i as f32;
        w = step(&w, lr);
        w.eval().unwrap();
        host_step(&xh, &yh, &mut wh, n, d, lr);
    }
    let got = w.to_vec().unwrap();
    let delta = ctx.stats() - before;
    assert_eq!((delta.flushes_planned, delta.plans_reused), (0, 100), "{delta}");
    assert_eq!(delta.programs_built + delta.programs_loaded, 0, "{delta}");
    let want: Vec<f32> = wh.iter().map(|&v| v as f32).collect();
    close(&got, &want, 1e-4);
}

fn host_step(x: &[f32], y: &[f32], w: &mut [f64], n: usize, d: usize, lr: f32) {
    let residual: Vec<f64> = (0..n)
        .map(|i| (0..d).map(|j| x[i * d + j] as f64 * w[j]).sum::<f64>() - y[i] as f64)
        .collect();
    let lr = lr as f64 / n as f64;
    for j in 0..d {
        let g: f64 = (0..n).map(|i| x[i * d + j] as f64 * residual[i]).sum();
        w[j] -= lr * g;
    }
}

/// The same structure over new arrays and scalars each time: every result is the new
/// data's, though only the first flush planned.
#[test]
fn replayed_plans_bind_the_new_buffers_and_scalars() {
    let ctx = ctx();
    let mut r = rng(42);
    let before = ctx.stats();
    for t in 0..5 {
        let ah = f32::random_vec(&mut r, 6 * 7);
        let bh = f32::random_vec(&mut r, 7);
        let a = ctx.from_shape_slice([6, 7], &ah).unwrap();
        let b = ctx.from_slice(&bh).unwrap();
        let k = 0.25 * t as f32 + 1.0;
        // An elementwise kernel and a row reduction reading a broadcast.
        let got = ((&a * k) - &b).abs().sum_axis(Axis(1)).to_vec().unwrap();
        let want: Vec<f32> = (0..6)
            .map(|i| (0..7).map(|j| (ah[i * 7 + j] * k - bh[j]).abs()).sum())
            .collect();
        close(&got, &want, 1e-5);
    }
    let delta = ctx.stats() - before;
    assert_eq!((delta.flushes_planned, delta.plans_reused), (1, 4), "{delta}");
}

/// Planning shares an input slot between two reads of one buffer: two arrays over one
/// buffer (reshapes of a materialized array share its memory) are another structure
/// than two arrays over two buffers, and each is right.
#[test]
fn one_buffer_read_twice_is_another_structure() {
    let ctx = ctx();
    let a = ctx
        .from_shape_slice([2, 3], &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])
        .unwrap();
    let (p, q) = (a.reshape([6]), a.reshape([6]));
    let c = ctx.from_slice(&[10.0f32, 20.0, 30.0, 40.0, 50.0, 60.0]).unwrap();
    let before = ctx.stats();
    assert_eq!((&p + &q).to_vec().unwrap(), vec![2.0, 4.0, 6.0, 8.0, 10.0, 12.0]);
    assert_eq!(
        (&p + &c).to_vec().unwrap(),
        vec![11.0, 22.0, 33.0, 44.0, 55.0, 66.0]
    );
    assert_eq!(
        (&c + &p).to_vec().unwrap(),
        vec![11.0, 22.0, 33.0, 44.0, 55.0, 66.0]
    );
    assert_eq!((&q + &p).to_vec().unwrap(), vec![2.0, 4.0, 6.0, 8.0, 10.0, 12.0]);
    let delta = ctx.stats() - before;
    assert_eq!((delta.flushes_planned, delta.plans_reused), (2, 2), "{delta}");
}

/// A view's offset is part of the structure (the plans hold it): a window at each
/// offset reads its own elements.
#[test]
fn windows_at_other_offsets_read_their_own_elements() {
    let ctx = ctx();
    let host: Vec<f32> = (0..100).map(|i| i as f32).collect();
    let x = ctx.from_slice(&host).unwrap();
    for k in [0usize, 3, 3, 50, 0] {
        let got = (&x.slice(s![k..k + 10]) * 2.0).to_vec().unwrap();
        let want: Vec<f32> = host[k..k + 10].iter().map(|v| v * 2.0).collect();
        assert_eq!(got, want, "window at {k}");
    }
}

/// Other shapes are other structures; the same shapes again replay.
#[test]
fn shapes_are_part_of_the_structure() {
    let ctx = ctx();
    let before = ctx.stats();
    for n in [10usize, 11, 10, 1, 0, 11] {
        let host: Vec<f32> = (0..n).map(|i| i as f32 - 3.5).collect();
        let x = ctx.from_slice(&host).unwrap();
        let got = (x.exp() - 1.0).to_vec().unwrap();
        let want: Vec<f32> = host.iter().map(|v| v.exp() - 1.0).collect();
        close(&got, &want, 1e-6);
    }
    let delta = ctx.stats() - before;
    assert_eq!((delta.flushes_planned, delta.plans_reused), (4, 2), "{delta}");
}

/// Stores into a region of an array: each step writes its own region of its own target.
#[test]
fn region_stores_replay_into_their_own_targets() {
    let ctx = ctx();
    let x = ctx
        .from_shape_slice([2, 3], &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])
        .unwrap();
    let mut want = Array2::<f32>::zeros((4, 6));
    let mut a = ctx.zeros::<f32>([4, 6]).unwrap();
    for (t, (r0, c0)) in [(0usize, 0usize), (0, 0), (2, 3), (2, 3)].into_iter().enumerate() {
        let k = t as f32 + 1.0;
        a.slice_mut(s![r0..r0 + 2, c0..c0 + 3]).assign(&(&x * k)).unwrap();
        for i in 0..2 {
            for j in 0..3 {
                want[[r0 + i, c0 + j]] = (i * 3 + j + 1) as f32 * k;
            }
        }
    }
    assert_eq!(a.to_vec().unwrap(), want.iter().copied().collect::<Vec<_>>());
}
