//! Statistics and row functions as thin definitions over ordinary lazy ops (so every
//! fusion rule applies to them): `var`/`std` (ndarray's names, with `ddof`), `any`/`all`
//! on masks, and the numerically stable `logsumexp`, `softmax`, `log_softmax` (scipy's
//! and torch's names) along an axis.
//!
//! Variances take two passes over the data, a mean and then the squared deviations from
//! it (not the sum of squares minus the squared sum, which cancels catastrophically);
//! `logsumexp` and the softmaxes subtract the largest element along the axis before
//! exponentiating, so nothing overflows.

use crate::api::array::Array;
use crate::api::views::AsAxis;
use crate::dtype::{Element, Float};
use crate::error::Error;
use crate::graph::Op;

/// An array that fails with "`op`: axis out of range" when materialized, if `axis` is
/// not an axis of `a` (of the result's shape `out`).
#[track_caller]
fn resolved<T: crate::dtype::Element, U: crate::dtype::Element>(
    a: &Array<T>,
    op: &str,
    axis: impl AsAxis,
    out: impl FnOnce() -> Vec<usize>,
) -> Result<usize, Array<U>> {
    match crate::api::views::resolve_axis(op, axis.axis_value(), a.shape(), false) {
        Ok(d) => Ok(d),
        Err(e) => Err(Array::failed(&a.node.ctx, out(), e)),
    }
}

/// A float element as an `f64` (exact).
#[track_caller]
pub(super) fn to_f64<T: Float>(v: T) -> f64 {
    v.__to_f64()
}

/// The constant `v` (rounded to `T`) as a 0-d array of `array`'s context: a kernel
/// argument, like any scalar operand.
#[track_caller]
pub(super) fn constant<T: Float>(array: &Array<T>, v: f64) -> Array<T> {
    let bits = T::__from_f64(v).to_arg_bits();
    Array::lazy(&array.node.ctx, Vec::<usize>::new(), Op::Scalar(bits))
}

impl<T: Float> Array<T> {
    /// The variance along `axis` with `ddof` delta degrees of freedom: the mean squared
    /// deviation from the mean, divided by `n - ddof` (ndarray's `var_axis`; `ddof = 1`
    /// for the sample variance). `ddof` must be in `0..n`: an error when materialized
    /// otherwise.
    ///
    /// ```
    /// # use lazycl::prelude::*;
    /// # fn main() -> lazycl::Result<()> {
    /// let ctx = Context::new()?;
    /// let a = ctx.from_shape_slice([2, 4], &[1.0f64, 2.0, 3.0, 4.0, 2.0, 2.0, 2.0, 2.0])?;
    /// assert_eq!(a.var_axis(Axis(1), 0.0).to_vec()?, vec![1.25, 0.0]);
    /// assert_eq!(a.std_axis(Axis(1), 1.0).to_vec()?[1], 0.0);
    /// # Ok(())
    /// # }
    /// ```
    #[track_caller]
    pub fn var_axis(&self, axis: impl AsAxis, ddof: T) -> Array<T> {
        match resolved(self, "var_axis", axis, Vec::new) {
            Ok(d) => self.variance("var_axis", Some(d), ddof),
            Err(failed) => failed,
        }
    }

    /// The standard deviation along `axis`: the square root of [`var_axis`](Self::var_axis).
    #[track_caller]
    pub fn std_axis(&self, axis: impl AsAxis, ddof: T) -> Array<T> {
        match resolved(self, "std_axis", axis, Vec::new) {
            Ok(d) => self.variance("std_axis", Some(d), ddof).sqrt(),
            Err(failed) => failed,
        }
    }

    /// The variance of all elements with `ddof` delta degrees of freedom (ndarray's `var`).
    #[track_caller]
    pub fn var(&self, ddof: T) -> Array<T> {
        self.variance("var", None, ddof)
    }

    /// The standard deviation of all elements (ndarray's `std`).
    #[track_caller]
    pub fn std(&self, ddof: T) -> Array<T> {
        self.variance("std", None, ddof).sqrt()
    }

    #[track_caller]
    fn variance(&self, op: &str, axis: Option<usize>, ddof: T) -> Array<T> {
        let shape = self.shape().to_vec();
        let ctx = &self.node.ctx;
        let out: Vec<usize> = match axis {
            Some(a) => shape
                .iter()
                .enumerate()
                .filter(|&(d, _)| d != a)
                .map(|(_, &n)| n)
                .collect(),
            None => Vec::new(),
        };
        let n = match axis {
            Some(a) if a >= shape.len() => {
                let e = Error::InvalidShape(format!(
                    "{op}: axis {a} is out of range for an array of shape {shape:?}"
                ));
                return Array::failed(ctx, out, e);
            }
            Some(a) => shape[a],
            None => self.len(),
        };
        let d = to_f64(ddof);
        if !(d >= 0.0 && d < n as f64) {
            let what = axis.map_or("elements".to_string(), |a| format!("elements along axis {a}"));
            let e = Error::InvalidShape(format!(
                "{op}: ddof = {d} must be at least 0 and less than the {n} {what} of an array of shape {shape:?}"
            ));
            return Array::failed(ctx, out, e);
        }
        let axes: Vec<usize> = match axis {
            Some(a) => vec![a],
            None => (0..shape.len()).collect(),
        };
        let mean = self.mean_axes(&axes, true);
        let dev = self - &mean;
        (&dev * &dev).sum_axes(&axes, false) * constant(self, 1.0 / (n as f64 - d))
    }

    /// `ln(sum(exp(x)))` along `axis`, which is removed, computed stably: the largest
    /// element is subtracted first (scipy's `logsumexp`, torch's `logsumexp`). A lane
    /// of only `-inf` gives `-inf`.
    ///
    /// ```
    /// # use lazycl::prelude::*;
    /// # fn main() -> lazycl::Result<()> {
    /// let ctx = Context::new()?;
    /// let a = ctx.from_slice(&[1000.0f64, 1000.0])?;
    /// let got = a.logsumexp(0).item()?;
    /// assert!((got - (1000.0 + 2f64.ln())).abs() < 1e-12);
    /// # Ok(())
    /// # }
    /// ```
    #[track_caller]
    pub fn logsumexp(&self, axis: impl AsAxis) -> Array<T> {
        let axis = match resolved(self, "logsumexp", axis, Vec::new) {
            Ok(d) => d,
            Err(failed) => return failed,
        };
        let (m, shifted) = self.shifted(axis);
        (shifted.exp().sum_axes(&[axis], true).ln() + &m).remove_axis(axis)
    }

    /// `exp(x) / sum(exp(x))` along `axis` (torch's `softmax(dim)`, scipy's `softmax`),
    /// computed stably; the shape is unchanged.
    ///
    /// ```
    /// # use lazycl::prelude::*;
    /// # fn main() -> lazycl::Result<()> {
    /// let ctx = Context::new()?;
    /// let a = ctx.from_shape_slice([1, 3], &[0.0f32, 0.0, 1000.0])?;
    /// assert_eq!(a.softmax(1).to_vec()?, vec![0.0, 0.0, 1.0]);
    /// # Ok(())
    /// # }
    /// ```
    #[track_caller]
    pub fn softmax(&self, axis: impl AsAxis) -> Array<T> {
        let axis = match resolved(self, "softmax", axis, || self.shape().to_vec()) {
            Ok(d) => d,
            Err(failed) => return failed,
        };
        let e = self.shifted(axis).1.exp();
        &e / &e.sum_axes(&[axis], true)
    }

    /// `x - logsumexp(x)` along `axis` (torch's `log_softmax(dim)`), computed stably.
    #[track_caller]
    pub fn log_softmax(&self, axis: impl AsAxis) -> Array<T> {
        let axis = match resolved(self, "log_softmax", axis, || self.shape().to_vec()) {
            Ok(d) => d,
            Err(failed) => return failed,
        };
        let shifted = self.shifted(axis).1;
        &shifted - &shifted.exp().sum_axes(&[axis], true).ln()
    }

    /// The largest element along `axis` (kept as a size-1 axis; 0 where it is not
    /// finite, so that a lane of `-inf` does not give NaN, and where the axis is empty,
    /// which has no largest element: an empty softmax, a `logsumexp` of `-inf`), and this
    /// array minus it.
    #[track_caller]
    fn shifted(&self, axis: usize) -> (Array<T>, Array<T>) {
        if self.shape()[axis] == 0 {
            let mut kept = self.shape().to_vec();
            kept[axis] = 1;
            let m = constant(self, 0.0).broadcast_to(&kept);
            let shifted = self - &m;
            return (m, shifted);
        }
        let m = self.amax_axes(&[axis], true);
        let finite = m.abs().lt(constant(self, f64::INFINITY));
        let m = finite.select(&m, constant(self, 0.0));
        let shifted = self - &m;
        (m, shifted)
    }
}

impl Array<bool> {
    /// Whether any element is true (numpy's `any`; false for no elements): a lazy 0-d
    /// array.
    #[track_caller]
    pub fn any(&self) -> Array<bool> {
        if self.is_empty() {
            return self.node_ctx_scalar(false);
        }
        self.cast::<u32>().amax().gt(0u32)
    }

    /// Whether every element is true (numpy's `all`; true for no elements).
    #[track_caller]
    pub fn all(&self) -> Array<bool> {
        if self.is_empty() {
            return self.node_ctx_scalar(true);
        }
        self.cast::<u32>().amin().gt(0u32)
    }

    /// Whether any element along `axis` is true.
    #[track_caller]
    pub fn any_axis(&self, axis: impl AsAxis) -> Array<bool> {
        let axis = match resolved(self, "any_axis", axis, Vec::new) {
            Ok(d) => d,
            Err(failed) => return failed,
        };
        self.cast::<u64>().sum_axis(axis).gt(0u64)
    }

    /// Whether every element along `axis` is true.
    #[track_caller]
    pub fn all_axis(&self, axis: impl AsAxis) -> Array<bool> {
        let axis = match resolved(self, "all_axis", axis, Vec::new) {
            Ok(d) => d,
            Err(failed) => return failed,
        };
        let n = self.shape().get(axis).copied().unwrap_or(0) as u64;
        self.cast::<u64>().sum_axis(axis).eq(n)
    }

    #[track_caller]
    fn node_ctx_scalar(&self, v: bool) -> Array<bool> {
        Array::lazy(&self.node.ctx, Vec::new(), Op::Scalar(v.to_arg_bits()))
    }
}
