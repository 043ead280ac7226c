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

/// The perceptron's parameters, inputs and one-hot labels at the report's size.
struct Mlp {
    p: [Array<f32>; 4],
    x: Array<f32>,
    onehot: Array<f32>,
    shape: (usize, usize, usize, usize),
}

impl Workload for Mlp {
    fn new(ctx: &Context, quick: bool) -> R<Mlp> {
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
        Ok(Mlp {
            p,
            x,
            onehot,
            shape: (n, f, hidden, classes),
        })
    }

    fn name(&self) -> String {
        let (n, f, hidden, classes) = self.shape;
        format!("MLP step by grad, {f}-{hidden}-{classes}, batch {n}, f32")
    }

    fn by_hand(&mut self) -> R<()> {
        let (p, x, onehot) = (&self.p, &self.x, &self.onehot);
        update(p, mlp_by_hand(p, x, onehot), &mlp_loss(p, x, onehot))
    }

    fn by_grad(&mut self) -> R<()> {
        let p = &self.p;
        let loss = mlp_loss(p, &self.x, &self.onehot);
        let g = lz(loss.grad(&[&p[0], &p[1], &p[2], &p[3]]))?;
        let [a, b, c, d]: [Array<f32>; 4] = g.try_into().map_err(|_| "four gradients".to_string())?;
        update(p, [a, b, c, d], &loss)
    }
}

/// Logistic regression's data and hand-written model at the report's size.
fn logreg_model(ctx: &Context, quick: bool) -> R<logreg::Model<f32>> {
    let (rows, d) = if quick { (20_000, 100) } else { (200_000, 100) };
    let (xh, yh) = logreg::make_classification::<f32>(rows, d);
    // (The residual fused on GPUs, stored elsewhere, as the example's default.)
    let fuse = ctx.device().device_type == lazycl::DeviceType::Gpu;
    lz(logreg::Model::new(ctx, &xh, &yh, rows, d, fuse))
}

/// Logistic regression's hand-written model, and the parameters the steps by `grad`
/// update (from zero).
struct Logreg {
    model: logreg::Model<f32>,
    w: Array<f32>,
    b: Array<f32>,
}

impl Workload for Logreg {
    fn new(ctx: &Context, quick: bool) -> R<Logreg> {
        let model = logreg_model(ctx, quick)?;
        let d = model.x.shape()[1];
        let (w, b) = (lz(ctx.zeros::<f32>([d]))?, lz(ctx.zeros::<f32>([1]))?);
        Ok(Logreg { model, w, b })
    }

    fn name(&self) -> String {
        let (rows, d) = (self.model.x.shape()[0], self.model.x.shape()[1]);
        format!("logistic regression step by grad, {rows}x{d} f32")
    }

    fn by_hand(&mut self) -> R<()> {
        lz(self.model.step().map(drop))
    }

    /// One step by `grad`, which updates `w` and `b` (as the hand-written step does its).
    fn by_grad(&mut self) -> R<()> {
        let (w, b) = lz(logreg::grad_update(
            &self.model.x,
            &self.model.y,
            &self.w,
            &self.b,
        ))?;
        lz(lazycl::eval(&(&w, &b)))?;
        (self.w, self.b) = (w, b);
        Ok(())
    }
}

/// The most device memory (MB) three steps add to what a context of their own held
/// before them (the data and parameters), live and pooled.
fn step_megabytes<S>(setup: impl Fn(&Context) -> R<S>, step: impl Fn(&mut S) -> R<()>) -> R<f64> {
    let ctx = lz(Context::new())?;
    let mut s = setup(&ctx)?;
    lz(ctx.synchronize())?;
    let before = ctx.memory_stats().bytes_in_use();
    for _ in 0..3 {
        step(&mut s)?;
        lz(ctx.synchronize())?;
    }
    Ok(ctx.memory_stats().peak_bytes_in_use.saturating_sub(before) as f64 / 1e6)
}

/// A training step written by hand and by `grad`, which the report compares.
trait Workload: Sized {
    fn new(ctx: &Context, quick: bool) -> R<Self>;
    /// The row's name.
    fn name(&self) -> String;
    fn by_hand(&mut self) -> R<()>;
    fn by_grad(&mut self) -> R<()>;
}

/// The rows of one workload: the step's time by `grad` against the hand-written one's,
/// and the device memory a step of each.
fn compare<W: Workload>(rep: &mut Report, ctx: &Context, quick: bool, trials: usize) -> R<()> {
    let sync = || lz(ctx.synchronize());
    let reps = if quick { 3 } else { 10 };
    let same = "the hand-written step (same run)";
    let mut w = W::new(ctx, quick)?;
    let hand = per_run(trials, reps, || w.by_hand(), sync)?;
    let derived = per_run(trials, reps, || w.by_grad(), sync)?;
    let name = w.name();
    rep.add(&name, derived * 1e3, hand * 1e3, "ms", same);
    let hand_mb = step_megabytes(|c| W::new(c, quick), W::by_hand)?;
    let grad_mb = step_megabytes(|c| W::new(c, quick), W::by_grad)?;
    rep.add(
        format!("{name}, device memory a step"),
        grad_mb,
        hand_mb,
        "MB",
        same,
    );
    Ok(())
}

/// Adds the gradient rows.
pub fn rows(rep: &mut Report, ctx: &Context, quick: bool, trials: usize) -> R<()> {
    compare::<Mlp>(rep, ctx, quick, trials)?;
    compare::<Logreg>(rep, ctx, quick, trials)
}
