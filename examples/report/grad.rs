//! The report's rows for gradients (`--grad`): a training step whose gradients lazycl
//! derives (`loss.grad`) against the same step written by hand, in the same run. A
//! two-layer perceptron 784-1024-10 at batch 4096 with softmax cross-entropy, and
//! logistic regression on 200,000 × 100, both `f32`. Each step computes the loss and the
//! updated parameters from the same parameters (one flush; nothing read).

use lazycl::prelude::*;

use crate::raw::R;
use crate::workloads::logreg;
use crate::{lz, per_run, Report};

/// Deterministic values in [-scale, scale).
fn values(n: usize, seed: usize, scale: f32) -> Vec<f32> {
    (0..n)
        .map(|i| (((i * 7919 + seed * 104_729) % 2000) as f32 / 1000.0 - 1.0) * scale)
        .collect()
}

/// The perceptron's forward pass: the loss.
fn mlp_loss(p: &[Array<f32>; 4], x: &Array<f32>, onehot: &Array<f32>) -> Array<f32> {
    let h = (x.matmul(&p[0]) + &p[1]).max(0.0f32);
    let logits = h.matmul(&p[2]) + &p[3];
    (logits.logsumexp(1) - (&logits * onehot).sum_axis(1)).mean()
}

/// The perceptron's gradients derived by hand (as `examples/mlp.rs`).
fn mlp_by_hand(p: &[Array<f32>; 4], x: &Array<f32>, onehot: &Array<f32>) -> [Array<f32>; 4] {
    let n = x.shape()[0] as f32;
    let h = (x.matmul(&p[0]) + &p[1]).max(0.0f32);
    let logits = h.matmul(&p[2]) + &p[3];
    let dz = (logits.softmax(1) - onehot) / n;
    let dh = dz.matmul(&p[2].t()) * h.gt(0.0f32).cast::<f32>();
    [
        x.t().matmul(&dh),
        dh.sum_axis(0),
        h.t().matmul(&dz),
        dz.sum_axis(0),
    ]
}

/// One step's loss and updated parameters, evaluated in one flush.
fn update(p: &[Array<f32>; 4], g: [Array<f32>; 4], loss: &Array<f32>) -> R<()> {
    let lr = 0.05f32;
    let new: Vec<Array<f32>> = p.iter().zip(&g).map(|(w, g)| w - &(g * lr)).collect();
    lz(lazycl::eval(&(loss, &new[0], &new[1], &new[2], &new[3])))
}

/// Adds the gradient rows.
pub fn rows(rep: &mut Report, ctx: &Context, quick: bool, trials: usize) -> R<()> {
    let sync = || lz(ctx.synchronize());
    let reps = if quick { 3 } else { 10 };
    let (n, f, hidden, classes) = if quick {
        (512, 64, 128, 10)
    } else {
        (4096, 784, 1024, 10)
    };
    let mat = |rows: usize, cols: usize, seed: usize, scale: f32| {
        lz(ctx.from_shape_slice([rows, cols], &values(rows * cols, seed, scale)))
    };
    let p = [
        mat(f, hidden, 1, 0.05)?,
        lz(ctx.from_slice(&values(hidden, 2, 0.01)))?,
        mat(hidden, classes, 3, 0.05)?,
        lz(ctx.from_slice(&values(classes, 4, 0.01)))?,
    ];
    let x = mat(n, f, 5, 1.0)?;
    let labels: Vec<u32> = (0..n).map(|i| (i * 7 % classes) as u32).collect();
    let ids: Vec<u32> = (0..classes as u32).collect();
    let onehot = lz(ctx.from_shape_slice([n, 1], &labels))?
        .eq(lz(ctx.from_shape_slice([1, classes], &ids))?)
        .cast::<f32>();
    lz(onehot.eval().map(drop))?;
    let hand = per_run(
        trials,
        reps,
        || update(&p, mlp_by_hand(&p, &x, &onehot), &mlp_loss(&p, &x, &onehot)),
        sync,
    )?;
    let derived = per_run(
        trials,
        reps,
        || {
            let loss = mlp_loss(&p, &x, &onehot);
            let g = lz(loss.grad(&[&p[0], &p[1], &p[2], &p[3]]))?;
            let [a, b, c, d]: [Array<f32>; 4] = g.try_into().map_err(|_| "four gradients".to_string())?;
            update(&p, [a, b, c, d], &loss)
        },
        sync,
    )?;
    rep.add(
        format!("MLP step by grad, {f}-{hidden}-{classes}, batch {n}, f32"),
        derived * 1e3,
        hand * 1e3,
        "ms",
        "the hand-written step (same run)",
    );

    let (rows, d) = if quick { (20_000, 100) } else { (200_000, 100) };
    let (xh, yh) = logreg::make_classification::<f32>(rows, d);
    // (The residual fused on GPUs, stored elsewhere, as the example's default.)
    let fuse = ctx.device().device_type == lazycl::DeviceType::Gpu;
    let mut model = lz(logreg::Model::new(ctx, &xh, &yh, rows, d, fuse))?;
    let hand = per_run(trials, reps, || lz(model.step().map(drop)), sync)?;
    let (w, b) = (lz(ctx.zeros::<f32>([d]))?, lz(ctx.zeros::<f32>([1]))?);
    let derived = per_run(
        trials,
        reps,
        || {
            let (w, b) = lz(logreg::grad_update(&model.x, &model.y, &w, &b))?;
            lz(lazycl::eval(&(&w, &b)))
        },
        sync,
    )?;
    rep.add(
        format!("logistic regression step by grad, {rows}x{d} f32"),
        derived * 1e3,
        hand * 1e3,
        "ms",
        "the hand-written step (same run)",
    );
    Ok(())
}
