//! The `k` first elements along an axis and their positions: `topk` (torch's, largest
//! first) and `bottomk` (torch's `topk(largest=False)`, smallest first). Both give
//! exactly a stable sort's first `k`: equal elements by lower position first, floats
//! ordered as `sort` orders them (`-0.0` before `+0.0`, every NaN after `+inf`, so NaN is
//! the largest: first in `topk`, and in `bottomk` only where fewer than `k` elements are
//! not NaN, as numpy's and torch's ascending orders put NaN last).
//!
//! A `k` up to `plan::select::max_select_k` (256 on a device with 48 KiB of local
//! memory) is selected without sorting the axis (`exec::select`): each row is read once.
//! A larger `k` sorts the whole axis (`api::sort`) and takes its first `k`. Like a sort,
//! both evaluate the operand when called (enqueued, never waited on).

use crate::api::array::Array;
use crate::api::sort::{axis_last, first_along, keep_picked, limit_error, placed, Request};
use crate::api::views::AsAxis;
use crate::backend::buffer::DeviceBuffer;
use crate::dtype::{Element, Index, Numeric};
use crate::error::{Error, Result};
use crate::exec::select::select_rows;
use crate::plan::select::select_plan;
use crate::plan::sort::{Order, Payload};

/// The `k` first elements along an axis in an order and where they were
/// ([`Array::topk`]: largest first; [`Array::bottomk`]: smallest first).
pub struct TopK<T: Numeric> {
    /// The elements, in the order asked for (equal elements by lower position first).
    pub values: Array<T>,
    /// Their positions along the axis.
    pub indices: Array<Index>,
}

impl<T: Numeric> Array<T> {
    /// The `k` largest elements along the last axis, largest first, and their positions
    /// (torch's `topk`; NaN counts as the largest, equal elements keep their order).
    ///
    /// ```
    /// # use lazycl::prelude::*;
    /// # fn main() -> lazycl::Result<()> {
    /// let ctx = Context::new()?;
    /// let a = ctx.from_slice(&[1.0f32, 5.0, 3.0, 5.0])?;
    /// let top = a.topk(3)?;
    /// assert_eq!(top.values.to_vec()?, vec![5.0, 5.0, 3.0]);
    /// assert_eq!(top.indices.to_vec()?, vec![1, 3, 2]);
    /// # Ok(())
    /// # }
    /// ```
    #[track_caller]
    pub fn topk(&self, k: usize) -> Result<TopK<T>> {
        self.first_k("topk", k, self.ndim().saturating_sub(1), Order::Descending)
    }

    /// The `k` largest elements along `axis` (negative counts from the end) and their
    /// positions.
    #[track_caller]
    pub fn topk_axis(&self, k: usize, axis: impl AsAxis) -> Result<TopK<T>> {
        let axis = self.sorted_axis("topk_axis", axis)?;
        self.first_k("topk_axis", k, axis, Order::Descending)
    }

    /// The `k` smallest elements along the last axis, smallest first, and their
    /// positions (torch's `topk(k, largest=False)`; numpy's `np.argpartition(a, k)[..,
    /// :k]` holds the same positions in no order). Equal elements keep their order; NaN
    /// counts as the largest, so it comes only where fewer than `k` elements are not NaN.
    ///
    /// ```
    /// # use lazycl::prelude::*;
    /// # fn main() -> lazycl::Result<()> {
    /// let ctx = Context::new()?;
    /// let d = ctx.from_shape_slice([2, 4], &[4.0f32, 1.0, f32::NAN, 1.0, 0.5, 9.0, 2.0, -3.0])?;
    /// let near = d.bottomk(2)?;
    /// assert_eq!(near.values.to_vec()?, vec![1.0, 1.0, -3.0, 0.5]);
    /// assert_eq!(near.indices.to_vec()?, vec![1, 3, 3, 0]);
    /// # Ok(())
    /// # }
    /// ```
    #[track_caller]
    pub fn bottomk(&self, k: usize) -> Result<TopK<T>> {
        self.first_k("bottomk", k, self.ndim().saturating_sub(1), Order::Ascending)
    }

    /// The `k` smallest elements along `axis` (negative counts from the end) and their
    /// positions.
    #[track_caller]
    pub fn bottomk_axis(&self, k: usize, axis: impl AsAxis) -> Result<TopK<T>> {
        let axis = self.sorted_axis("bottomk_axis", axis)?;
        self.first_k("bottomk_axis", k, axis, Order::Ascending)
    }

    /// The first `k` along `axis` in `order`: selected, or cut from a whole sort.
    #[track_caller]
    fn first_k(&self, op: &'static str, k: usize, axis: usize, order: Order) -> Result<TopK<T>> {
        if T::Compute::DTYPE != T::DTYPE {
            // (As a sort: in the compute type, the values cast back.)
            let wide = self.cast::<T::Compute>().first_k(op, k, axis, order)?;
            return Ok(TopK {
                values: wide.values.cast::<T>(),
                indices: wide.indices,
            });
        }
        let shape = self.shape().to_vec();
        if shape.is_empty() {
            return Err(Error::InvalidShape(format!(
                "{op}: a zero-dimensional array has no axis to sort along"
            )));
        }
        let n = shape[axis];
        if k > n {
            return Err(Error::InvalidShape(format!(
                "{op}: k = {k} is more than the {n} elements along axis {axis} of an array of shape {shape:?}"
            )));
        }
        let rows = self.len().checked_div(n).unwrap_or(0);
        let ctx = self.node.ctx.clone();
        let plan = select_plan(T::DTYPE, order, rows, n, k, &ctx.profile)
            .map_err(|limit| limit_error(op, &shape, limit))?;
        let plan = match plan {
            Some(plan) if rows > 0 => plan,
            _ => return self.first_k_sorted(op, k, axis, order),
        };
        let keys = if axis == shape.len() - 1 {
            self.clone()
        } else {
            self.permuted_axes(axis_last(shape.len(), axis))
        };
        let buffer = keys.materialized_buffer("a selection (topk, bottomk)")?;
        let selected = select_rows(&ctx, ctx.queue(), &plan, &buffer)?;
        let mut out_shape = shape;
        out_shape[axis] = k;
        let top = TopK {
            values: placed(self, &out_shape, axis, selected.keys, "a selection"),
            indices: placed(self, &out_shape, axis, selected.indices, "a selection"),
        };
        keep_picked(self, axis, &top.values, &top.indices.node);
        Ok(top)
    }

    /// The first `k` of a whole sort along `axis` (nothing to select: `k = 0` also
    /// evaluates the operand, so that its failure is the error).
    #[track_caller]
    fn first_k_sorted(&self, op: &str, k: usize, axis: usize, order: Order) -> Result<TopK<T>> {
        if k == 0 && !self.is_empty() {
            self.materialized_buffer("a selection (topk, bottomk)")?;
            let mut shape = self.shape().to_vec();
            shape[axis] = 0;
            let empty = |what| DeviceBuffer::uninit(&self.node.ctx.cl, 1, self.node.ctx.queue(), what);
            return Ok(TopK {
                values: placed(self, &shape, axis, empty("an empty selection")?, "a selection"),
                indices: placed(self, &shape, axis, empty("an empty selection")?, "a selection"),
            });
        }
        let req = Request {
            op,
            axis,
            order,
            payload: Payload::Index,
            keys_out: true,
        };
        let made = self.sort_with(req, None::<&Array<u32>>)?;
        let indices = self.payload_array(axis, &made)?;
        let values = made
            .keys
            .ok_or_else(|| Error::Internal("a sort stored no keys".into()))?;
        keep_picked(self, axis, &values, &indices.node);
        Ok(TopK {
            values: first_along(&values, axis, k),
            indices: first_along(&indices, axis, k),
        })
    }
}
