//! Neighbours along an axis, without copies: `diff` (numpy's n-th discrete difference,
//! each level one elementwise operation between two slices of the level below) and
//! `roll` (numpy's cyclic shift, the two halves of the axis joined in the other order: a
//! [`concatenate`](crate::concatenate) of two slices). Both are lazy views and
//! elementwise nodes, read where they are consumed: `(&x.roll(3, 0) * 2.0)` is one kernel
//! that reads `x` in place, and `x.diff(2, -1)` feeds its reader in that reader's kernel.

use ndarray::{Axis, SliceInfoElem};

use crate::api::array::Array;
use crate::api::views::{AsAxes, AsAxis};
use crate::dtype::{DType, Element};
use crate::error::Error;
use crate::graph::BinaryOp;

/// `s![.., lo..hi, ..]` on axis `d` of a rank-`rank` array (`hi`: `None` for the end).
#[track_caller]
fn along(rank: usize, d: usize, lo: isize, hi: Option<isize>) -> Vec<SliceInfoElem> {
    (0..rank)
        .map(|k| match k == d {
            true => SliceInfoElem::Slice {
                start: lo,
                end: hi,
                step: 1,
            },
            false => SliceInfoElem::from(..),
        })
        .collect()
}

impl<T: Element> Array<T> {
    /// The `n`-th discrete difference along `axis` (numpy's `np.diff(a, n, axis)`):
    /// `out[i] = a[i + 1] - a[i]`, applied `n` times, so the axis gets `n` elements
    /// shorter (empty when `n` is at least its length; `n = 0` gives `self`). Integers
    /// wrap as Rust's `wrapping_sub` does (numpy's unsigned results wrap alike); a `bool`
    /// array's difference is `a[i + 1] != a[i]`, as numpy's. Lazy: each level is one
    /// elementwise operation between two views, fused into the kernel that reads the
    /// result.
    ///
    /// An axis out of range is an error when the result is materialized.
    ///
    /// ```
    /// # use lazycl::prelude::*;
    /// # fn main() -> lazycl::Result<()> {
    /// let ctx = Context::new()?;
    /// let a = ctx.from_shape_slice([2, 4], &[1, 2, 4, 7, 0, 10, 20, 40])?;
    /// assert_eq!(a.diff(1, -1).to_vec()?, [1, 2, 3, 10, 10, 20]);
    /// assert_eq!(a.diff(2, 1).to_vec()?, [1, 1, 0, 10]);
    /// assert_eq!(a.diff(1, 0).to_vec()?, [-1, 8, 16, 33]);
    /// let m = ctx.from_slice(&[true, true, false, true])?;
    /// assert_eq!(m.diff(1, 0).to_vec()?, [false, true, true]);
    /// # Ok(())
    /// # }
    /// ```
    #[track_caller]
    pub fn diff(&self, n: usize, axis: impl AsAxis) -> Array<T> {
        let d = match self.axis_or_failed::<T>("diff", axis, false) {
            Ok(d) => d,
            Err(failed) => return failed,
        };
        let rank = self.ndim();
        let len = self.shape()[d];
        if n == 0 {
            return self.clone();
        }
        if n >= len {
            return self.slice(along(rank, d, 0, Some(0)));
        }
        let op = match T::DTYPE {
            DType::Bool => BinaryOp::Ne,
            _ => BinaryOp::Sub,
        };
        let mut out = self.clone();
        for _ in 0..n {
            let next = out.slice(along(rank, d, 1, None));
            let prev = out.slice(along(rank, d, 0, Some(-1)));
            out = next.binary::<T, T>(op, prev);
        }
        out
    }

    /// The elements shifted cyclically by `shift` places along `axis` (numpy's
    /// `np.roll(a, shift, axis)`): `out[(i + shift) mod len] = a[i]`. A negative shift
    /// moves towards the front; any shift is taken modulo the length, and an empty axis
    /// gives `self`. Lazy, no copy: the two parts of the axis joined in the other order
    /// (a [`concatenate`](crate::concatenate) of two views), each element read from
    /// `self` by the kernel that consumes the result.
    ///
    /// An axis out of range is an error when the result is materialized.
    ///
    /// ```
    /// # use lazycl::prelude::*;
    /// # fn main() -> lazycl::Result<()> {
    /// let ctx = Context::new()?;
    /// let a = ctx.from_shape_slice([2, 3], &[1, 2, 3, 4, 5, 6])?;
    /// assert_eq!(a.roll(1, -1).to_vec()?, [3, 1, 2, 6, 4, 5]);
    /// assert_eq!(a.roll(-4, 1).to_vec()?, [2, 3, 1, 5, 6, 4]);
    /// assert_eq!(a.roll(1, 0).to_vec()?, [4, 5, 6, 1, 2, 3]);
    /// # Ok(())
    /// # }
    /// ```
    #[track_caller]
    pub fn roll(&self, shift: isize, axis: impl AsAxis) -> Array<T> {
        match self.axis_or_failed::<T>("roll", axis, false) {
            Ok(d) => self.roll_resolved(shift as i128, d),
            Err(failed) => failed,
        }
    }

    /// The elements shifted cyclically by `shifts[k]` places along `axes[k]` for each
    /// `k` (numpy's `np.roll(a, shifts, axes)` with tuples; an axis named twice is shifted
    /// by the sum). Lazy, as [`roll`](Self::roll): one view per part, no copy.
    ///
    /// As many shifts as axes are needed; otherwise, or with an axis out of range, an
    /// error when the result is materialized.
    ///
    /// ```
    /// # use lazycl::prelude::*;
    /// # fn main() -> lazycl::Result<()> {
    /// let ctx = Context::new()?;
    /// let a = ctx.from_shape_slice([2, 3], &[1, 2, 3, 4, 5, 6])?;
    /// assert_eq!(a.roll_axes(&[1, 1], &[0, -1]).to_vec()?, [6, 4, 5, 3, 1, 2]);
    /// # Ok(())
    /// # }
    /// ```
    #[track_caller]
    pub fn roll_axes(&self, shifts: &[isize], axes: &(impl AsAxes + ?Sized)) -> Array<T> {
        let written = axes.axis_values();
        if shifts.len() != written.len() {
            let e = Error::InvalidShape(format!(
                "roll_axes: {} shifts {shifts:?} for {} axes {:?} of an array of shape {:?}",
                shifts.len(),
                written.len(),
                &written[..],
                self.shape()
            ));
            return Array::failed(&self.node.ctx, self.shape().to_vec(), e);
        }
        let mut total = vec![0i128; self.ndim()];
        for (&shift, &axis) in shifts.iter().zip(&written) {
            match self.axis_or_failed::<T>("roll_axes", axis, false) {
                Ok(d) => total[d] += shift as i128,
                Err(failed) => return failed,
            }
        }
        let mut out = self.clone();
        for (d, &shift) in total.iter().enumerate() {
            out = out.roll_resolved(shift, d);
        }
        out
    }

    /// [`roll`](Self::roll) along axis `d` (in range).
    #[track_caller]
    fn roll_resolved(&self, shift: i128, d: usize) -> Array<T> {
        let len = self.shape()[d];
        if len == 0 {
            return self.clone();
        }
        // (A length fits i128 and isize: it is an array's.)
        let s = shift.rem_euclid(len as i128) as isize;
        if s == 0 {
            return self.clone();
        }
        let rank = self.ndim();
        let cut = len as isize - s;
        let tail = self.slice(along(rank, d, cut, None));
        let head = self.slice(along(rank, d, 0, Some(cut)));
        match crate::api::regions::concatenate(Axis(d), &[&tail, &head]) {
            Ok(a) => a,
            Err(e) => Array::failed(&self.node.ctx, self.shape().to_vec(), e),
        }
    }
}
