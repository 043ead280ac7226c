//! The logistic-regression model shared by `examples/logistic_regression.rs` and the
//! report: synthetic data shaped like scikit-learn's `make_classification`, the model's
//! elementwise formulas (`expr!`), one gradient step and the loss, on the device.

use lazycl::prelude::*;

pub const LEARNING_RATE: f64 = 0.2;
pub const LAMBDA: f64 = 1e-3;

// Deterministic data, reproduced bit for bit by benches/reference/torch_reference.py
// (`common/synthetic.rs`, which the including file declares as `synthetic` beside this
// module).
use super::synthetic::{normal, uniform};

const SEED_X: u64 = 1;
const SEED_Y: u64 = 2;
const SEED_FLIP: u64 = 3;
const INFORMATIVE: usize = 5;
const CLASS_SEP: f64 = 0.5;
const FLIP_Y: f64 = 0.01;

/// Row-major `n x d` features and `n` labels (the intercept is a separate bias, not a
/// column of ones: rows of exactly `d` elements keep the reductions' aligned vector loads).
/// Feature `j < 5` of a row of class `c` is `N(0, 1) + (2c - 1) * 0.5 * s_j` with
/// `s_j = +1` for even `j`, `-1` for odd; the other features are `N(0, 1)`; 1% of labels
/// are flipped after the features are drawn.
pub fn make_classification<T: Real>(n: usize, d: usize) -> (Vec<T>, Vec<T>) {
    let mut x = Vec::with_capacity(n * d);
    let mut y = Vec::with_capacity(n);
    for i in 0..n {
        let class = if uniform(SEED_Y, i as u64) < 0.5 { 1.0 } else { 0.0 };
        for j in 0..d {
            let mut v = normal(SEED_X, (i * d + j) as u64);
            if j < INFORMATIVE {
                let s = if j % 2 == 0 { 1.0 } else { -1.0 };
                v += (2.0 * class - 1.0) * CLASS_SEP * s;
            }
            x.push(T::from_f64(v));
        }
        let flip = uniform(SEED_FLIP, i as u64) < FLIP_Y;
        y.push(T::from_f64(if flip { 1.0 - class } else { class }));
    }
    (x, y)
}

/// The element types the model runs in, with its elementwise formulas written with
/// `expr!` (which needs concrete element types, hence one impl per type).
pub trait Real: Float + lazycl::Signed {
    fn from_f64(v: f64) -> Self;
    fn to_f64(self) -> f64;
    /// Relative tolerance of the device fit against the f64 host fit.
    const TOL: f64;
    /// The residual `sigmoid(z) - y`.
    fn residual(z: &Array<Self>, y: &Array<Self>) -> Array<Self>;
    /// The per-row loss `softplus(z) - y z`, with `softplus(z) = max(z, 0) + ln(1 + e^-|z|)`
    /// (stable for any `z`).
    fn row_loss(z: &Array<Self>, y: &Array<Self>) -> Array<Self>;
}

macro_rules! real {
    ($t:ty, $tol:expr) => {
        impl Real for $t {
            fn from_f64(v: f64) -> Self {
                v as $t
            }
            fn to_f64(self) -> f64 {
                self as f64
            }
            const TOL: f64 = $tol;
            fn residual(z: &Array<$t>, y: &Array<$t>) -> Array<$t> {
                expr!(1.0 / (1.0 + (-z).exp()) - y)
            }
            fn row_loss(z: &Array<$t>, y: &Array<$t>) -> Array<$t> {
                expr!(z.max(0.0) + (1.0 + (-z.abs()).exp()).ln() - y * z)
            }
        }
    };
}
real!(f32, 2e-3);
real!(f64, 1e-8);

/// Mean logistic loss from the logits, plus the L2 penalty on the weights (never on the
/// bias): a lazy 0-d array.
pub fn loss<T: Real>(z: &Array<T>, y: &Array<T>, w: &Array<T>) -> Array<T> {
    T::row_loss(z, y).mean() + (w * w).sum() * T::from_f64(0.5 * LAMBDA)
}

/// The weights and the bias, `([d], [1])`.
pub type Params<T> = (Array<T>, Array<T>);

/// The parameters after one step from `w` and `b` on the `n` rows of `x`, whose residual
/// is `r` (lazy).
fn update<T: Real>(x: &Array<T>, n: usize, w: &Array<T>, b: &Array<T>, r: &Array<T>) -> Params<T> {
    let g = (x * r).sum_axis(0);
    let lr = T::from_f64(LEARNING_RATE);
    let inv_n = T::from_f64(1.0 / n as f64);
    let lambda = T::from_f64(LAMBDA);
    let w = w - (g * inv_n + w * lambda) * lr;
    // b - lr mean(r), written as the mean over the rows of b - lr r ([n, 1] -> [1]) so
    // that the update happens inside the reduction: one kernel instead of a reduction
    // plus a one-element kernel. (Equal up to rounding: the sum of n copies of b is
    // compensated, accurate to a few ulps.)
    let b = (b - r * lr).mean_axis(0);
    (w, b)
}

/// The loss of `w` and `b` from the data, for `grad` to differentiate: [`loss`] of the
/// logits (its `expr!` is differentiated by the derivative the macro wrote).
pub fn differentiable_loss<T: Real>(x: &Array<T>, y: &Array<T>, w: &Array<T>, b: &Array<T>) -> Array<T> {
    loss(&logits(x, w, b), y, w)
}

/// The parameters after one step by the gradients `grad` derives from
/// [`differentiable_loss`]: the hand-written step's, up to rounding.
pub fn grad_update<T: Real>(
    x: &Array<T>,
    y: &Array<T>,
    w: &Array<T>,
    b: &Array<T>,
) -> lazycl::Result<Params<T>> {
    let g = differentiable_loss(x, y, w, b).grad(&[w, b])?;
    let lr = T::from_f64(LEARNING_RATE);
    Ok((w - &g[0] * lr, b - &g[1] * lr))
}

/// The logits `z = X w + b`, `[n, 1]` (lazy).
pub fn logits<T: Real>(x: &Array<T>, w: &Array<T>, b: &Array<T>) -> Array<T> {
    // z keeps the reduced axis ([n, 1]) so that r broadcasts along the rows of X
    // without a reshape (inserting a trailing axis would materialize r).
    (x * w).sum_axes(&[1], true) + b
}

pub struct Model<T: Real> {
    /// Features, `[n, d]`.
    pub x: Array<T>,
    /// Labels, `[n, 1]`.
    pub y: Array<T>,
    /// Weights, `[d]`.
    pub w: Array<T>,
    /// The intercept, `[1]` (no L2 penalty).
    pub b: Array<T>,
    n: usize,
    fuse_residual: bool,
}

impl<T: Real> Model<T> {
    /// Uploads `n x d` features and `n` labels (from `make_classification`); the weights
    /// and the bias start at zero. `fuse_residual` computes the residual inside the
    /// gradient reduction instead of storing it.
    pub fn new(
        ctx: &Context,
        x: &[T],
        y: &[T],
        n: usize,
        d: usize,
        fuse_residual: bool,
    ) -> lazycl::Result<Self> {
        Ok(Model {
            x: ctx.from_shape_slice([n, d], x)?,
            y: ctx.from_shape_slice([n, 1], y)?,
            w: ctx.zeros::<T>([d])?,
            b: ctx.zeros::<T>([1])?,
            n,
            fuse_residual,
        })
    }

    /// One gradient step, enqueued without waiting. Returns the logits `z = X w + b` of the
    /// parameters before the step (lazy, already enqueued as part of the step), for the
    /// loss.
    pub fn step(&mut self) -> lazycl::Result<Array<T>> {
        let z = logits(&self.x, &self.w, &self.b);
        let r = T::residual(&z, &self.y);
        if !self.fuse_residual {
            r.eval()?; // stored once per row, not recomputed per element of X
        }
        let (w, b) = update(&self.x, self.n, &self.w, &self.b, &r);
        lazycl::eval(&(&w, &b))?;
        self.w = w;
        self.b = b;
        Ok(z)
    }

    /// The step captured over the parameters `(w, b)`, residual fused:
    /// `step.run((&w, &b))` launches its kernels with only the new parameters bound,
    /// recording nothing, and returns the new parameters.
    pub fn capture(&self) -> Step<'static, Params<T>, Params<T>> {
        let (x, y, n) = (self.x.clone(), self.y.clone(), self.n);
        self.x.context().capture(move |(w, b): Params<T>| {
            let r = T::residual(&logits(&x, &w, &b), &y);
            Ok(update(&x, n, &w, &b, &r))
        })
    }

    /// Loss and training accuracy of the current parameters, computed in one flush.
    pub fn metrics(&self) -> lazycl::Result<(f64, f64)> {
        let z = logits(&self.x, &self.w, &self.b);
        let l = loss(&z, &self.y, &self.w);
        let predicted = z.gt(T::from_f64(0.0)).cast::<T>();
        let accuracy = predicted.eq(&self.y).cast::<T>().mean();
        lazycl::eval(&(&l, &accuracy))?;
        Ok((l.item()?.to_f64(), accuracy.item()?.to_f64()))
    }

    /// Weights and bias back to zero.
    pub fn reset(&mut self) -> lazycl::Result<()> {
        let ctx = self.x.context();
        self.w = ctx.zeros::<T>([self.w.len()])?;
        self.b = ctx.zeros::<T>([1])?;
        Ok(())
    }
}
