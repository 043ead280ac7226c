//! Covariance and correlation matrices of variables held in rows (numpy's `np.cov` and
//! `np.corrcoef` with `rowvar=True`), built from lazy operations: each row's mean, the
//! deviations from it, and their product with their own transpose (the GEMM), the
//! centring fused into the product's loads and the scaling into its epilogue.

use crate::api::array::Array;
use crate::api::stats::{constant, to_f64};
use crate::dtype::Float;
use crate::error::Error;

impl<T: Float> Array<T> {
    /// The covariance matrix of the variables in the rows of this `[variables,
    /// observations]` array (numpy's `np.cov(a, ddof=ddof)`; `ddof = 1.0` is numpy's
    /// default, the unbiased estimate): `c[i, j] = Σ_k (a[i, k] - mean_i) (a[j, k] -
    /// mean_j) / (n - ddof)` over the `n` observations. A one-dimensional array is one
    /// variable, and its covariance a 0-d array (its variance), as in numpy. Lazy.
    ///
    /// Where numpy differs: a `ddof` outside `0..n` (numpy warns and returns infinities or
    /// NaN) and an array of another rank are errors, reported when the result is
    /// materialized, as for [`var_axis`](Self::var_axis).
    ///
    /// ```
    /// # use lazycl::prelude::*;
    /// # fn main() -> lazycl::Result<()> {
    /// let ctx = Context::new()?;
    /// let a = ctx.from_shape_slice([2, 3], &[0.0f64, 1.0, 2.0, 2.0, 1.0, 0.0])?;
    /// assert_eq!(a.cov(1.0).to_vec()?, [1.0, -1.0, -1.0, 1.0]);
    /// let r = a.corrcoef().to_vec()?; // within rounding of numpy's
    /// assert!(r.iter().zip([1.0, -1.0, -1.0, 1.0]).all(|(g, w)| (g - w).abs() < 1e-12));
    /// # Ok(())
    /// # }
    /// ```
    #[track_caller]
    pub fn cov(&self, ddof: T) -> Array<T> {
        let rows = match self.variables("cov") {
            Ok(rows) => rows,
            Err(failed) => return failed,
        };
        let n = rows.shape()[1];
        let d = to_f64(ddof);
        if !(d >= 0.0 && d < n as f64) {
            let e = Error::InvalidShape(format!(
                "cov: ddof = {d} must be at least 0 and less than the {n} observations (columns) of an \
                 array of shape {:?}",
                self.shape()
            ));
            return Array::failed(&self.node.ctx, self.out_shape(), e);
        }
        let dev = rows.deviations();
        let c = dev.matmul(&dev.t()) * constant(self, 1.0 / (n as f64 - d));
        self.shaped(c)
    }

    /// The correlation coefficients of the variables in the rows of this `[variables,
    /// observations]` array (numpy's `np.corrcoef(a)`): the covariance matrix divided by
    /// the product of the two variables' standard deviations, `c[i, j] / sqrt(c[i, i]
    /// c[j, j])`, clipped to `[-1, 1]` as numpy clips it. A variable that does not vary
    /// gives NaN in its row and column, as in numpy. A one-dimensional array is one
    /// variable (a 0-d result). Lazy.
    ///
    /// No observations, or an array of another rank, is an error when the result is
    /// materialized (numpy warns and returns NaN).
    #[track_caller]
    pub fn corrcoef(&self) -> Array<T> {
        let rows = match self.variables("corrcoef") {
            Ok(rows) => rows,
            Err(failed) => return failed,
        };
        let n = rows.shape()[1];
        if n == 0 {
            let e = Error::InvalidShape(format!(
                "corrcoef: an array of shape {:?} has no observations (columns)",
                self.shape()
            ));
            return Array::failed(&self.node.ctx, self.out_shape(), e);
        }
        let dev = rows.deviations();
        // (The scale `1 / (n - ddof)` cancels: sums of products over their own norms.)
        let norms = (&dev * &dev).sum_axis(1).sqrt();
        let outer = &norms.insert_axis(1) * &norms.insert_axis(0);
        let c = (dev.matmul(&dev.t()) / outer).clamp(constant(self, -1.0), constant(self, 1.0));
        self.shaped(c)
    }

    /// This array as `[variables, observations]` rows (a 1-d array as one row), or a
    /// failed result of `op` naming the shape.
    #[track_caller]
    fn variables(&self, op: &str) -> Result<Array<T>, Array<T>> {
        if let Some(e) = self.recording_error() {
            return Err(Array::failed(&self.node.ctx, self.out_shape(), e));
        }
        match self.ndim() {
            1 => Ok(self.insert_axis(0)),
            2 => Ok(self.clone()),
            r => {
                let e = Error::InvalidShape(format!(
                    "{op}: an array of shape {:?} ({r} axes): variables must be the rows of a 2-d array \
                     (or one 1-d array)",
                    self.shape()
                ));
                Err(Array::failed(&self.node.ctx, self.out_shape(), e))
            }
        }
    }

    /// Each row minus its mean.
    #[track_caller]
    fn deviations(&self) -> Array<T> {
        self - &self.mean_axes(&[1], true)
    }

    /// The shape of a covariance of this array: `[v, v]` for `v` rows; 0-d for a 1-d array.
    #[track_caller]
    fn out_shape(&self) -> Vec<usize> {
        match self.ndim() {
            2 => vec![self.shape()[0]; 2],
            _ => Vec::new(),
        }
    }

    /// `c` (`[v, v]`) in the shape of this array's covariance (0-d for a 1-d array).
    #[track_caller]
    fn shaped(&self, c: Array<T>) -> Array<T> {
        match self.ndim() {
            1 => c.reshape(Vec::<usize>::new()),
            _ => c,
        }
    }
}
