//! The normal model `N(mu, sigma^2)` shared by `examples/gaussian_logp.rs` and the report:
//! the data, the log-likelihood and its gradient on the device, and the Newton step on
//! `(mu, ln sigma)` that the evaluations drive.

use lazycl::prelude::*;

// Deterministic data, reproduced bit for bit by benches/reference/torch_reference.py
// (`common/synthetic.rs`, which the including file declares as `synthetic` beside this
// module).
use super::synthetic::normal;

pub const TRUE_MU: f64 = 1.5;
pub const TRUE_SIGMA: f64 = 2.5;
pub const LN_2PI: f64 = 1.837_877_066_409_345_5;

pub trait Real: Float + lazycl::Signed {
    fn from_f64(v: f64) -> Self;
    fn to_f64(self) -> f64;
    const TOL: f64;
}
impl Real for f32 {
    fn from_f64(v: f64) -> Self {
        v as f32
    }
    fn to_f64(self) -> f64 {
        self as f64
    }
    const TOL: f64 = 1e-4;
}
impl Real for f64 {
    fn from_f64(v: f64) -> Self {
        v
    }
    fn to_f64(self) -> f64 {
        self
    }
    const TOL: f64 = 1e-10;
}

/// `n` values drawn from `N(TRUE_MU, TRUE_SIGMA^2)`.
pub fn make_data<T: Real>(n: usize) -> Vec<T> {
    (0..n)
        .map(|i| T::from_f64(TRUE_MU + TRUE_SIGMA * normal(21, i as u64)))
        .collect()
}

/// The model on the device: the data and the unit vectors that stack the results.
pub struct Model<T: Real> {
    x: Array<T>,
    units: [Array<T>; 3],
}

impl<T: Real> Model<T> {
    pub fn new(ctx: &Context, data: &[T]) -> lazycl::Result<Self> {
        let (zero, one) = (T::from_f64(0.0), T::from_f64(1.0));
        let units = [
            ctx.from_slice(&[one, zero, zero])?,
            ctx.from_slice(&[zero, one, zero])?,
            ctx.from_slice(&[zero, zero, one])?,
        ];
        Ok(Model {
            x: ctx.from_slice(data)?,
            units,
        })
    }

    /// `[logp, d logp / d mu, d logp / d sigma]` at `(mu, sigma)`: one graph, one read.
    pub fn evaluate(&self, mu: f64, sigma: f64) -> lazycl::Result<[f64; 3]> {
        let n = self.x.len() as f64;
        let t = T::from_f64;
        let dev = &self.x - t(mu);
        let s1 = dev.sum(); // lazy 0-d arrays that stay on the device
        let s2 = (&dev * &dev).sum();
        let inv_var = t(1.0 / (sigma * sigma));
        let logp = &s2 * t(-0.5) * inv_var + t(-n * (sigma.ln() + 0.5 * LN_2PI));
        let dmu = &s1 * inv_var;
        let dsigma = &s2 * t(1.0 / (sigma * sigma * sigma)) - t(n / sigma);
        let stacked = &self.units[0] * logp + &self.units[1] * dmu + &self.units[2] * dsigma;
        let v = stacked.to_vec()?; // the only host wait
        Ok([v[0].to_f64(), v[1].to_f64(), v[2].to_f64()])
    }
}

/// A Newton step on `(mu, ln sigma)` of `n` values from the gradient `v` at
/// `(mu, exp(ln_sigma))` alone (the curvatures are `-n / sigma^2` and
/// `-2 s2 / sigma^2 = -2 (sigma d/dsigma + n)`).
pub fn newton_step(mu: &mut f64, ln_sigma: &mut f64, v: &[f64; 3], n: f64) {
    let sigma = ln_sigma.exp();
    *mu += sigma * sigma * v[1] / n;
    *ln_sigma += sigma * v[2] / (2.0 * (sigma * v[2] + n));
}

/// Relative difference of each component, scaled by the largest term in it.
pub fn rel_err(dev: &[f64; 3], host: &[f64; 3], n: f64, sigma: f64) -> f64 {
    // d/dmu and d/dsigma are differences of large terms: scale by n / sigma.
    let scales = [host[0].abs().max(1.0), n / sigma, n / sigma];
    (0..3)
        .map(|i| (dev[i] - host[i]).abs() / scales[i])
        .fold(0.0, f64::max)
}
