//! A scatter that sets (`scatter`: numpy's `put_along_axis`, torch's `scatter`), in two
//! parts. Now, one kernel finds, for every element of the array, the last position along
//! the axis whose index lands on it: the positions (counted from 1) are combined into a
//! zeroed `u32` array with an atomic maximum, the same indexed store `scatter_add` adds
//! through. Then the result is lazy: where a position won, the value there (a
//! `take_along_axis` of the values), elsewhere the array's own element (a `select`), so
//! the array itself is never written, and the result fuses into its readers.

use std::sync::Arc;

use crate::api::array::Array;
use crate::api::indexing::{computed_apart, scatter_map};
use crate::api::ops::{failure, CtxRef, Operand};
use crate::api::views::AsAxis;
use crate::backend::context::Context;
use crate::dtype::{Element, Index, Integer};
use crate::error::{Error, Result};
use crate::exec;
use crate::plan::ScatterCombine;

impl<T: Element> Array<T> {
    /// A copy of this array with `values` put at the positions `indices` give along
    /// `axis` (numpy's `np.put_along_axis(a, indices, values, axis)` on a copy, torch's
    /// `scatter(axis, indices, values)`): for each position `p` of `indices`,
    /// `out[p with axis coordinate indices[p]] = values[p]`. `indices` has this array's
    /// rank, any integer type, any length along `axis`, and along every other axis this
    /// array's length or 1 (broadcast); `values` broadcasts to `indices`' shape (with
    /// the other axes as long as this array's) and may be a lazy expression or a scalar.
    ///
    /// Several indices landing on one element: the last along `axis` wins, on every run
    /// (numpy's rule, the last write; a GPU's racing stores would pick any). An index
    /// outside `0..len` (negative ones included, which numpy counts from the end) drops
    /// its value, as [`scatter_add`](crate::scatter_add) drops it. `self` is not changed.
    ///
    /// Runs a kernel now (after a fill): the winning position of each element, computed
    /// with the indices (a lazy index expression is computed in that kernel). The result
    /// is lazy: each element reads its winner's value, or this array's own, in the kernel
    /// that consumes it.
    ///
    /// An axis out of range, indices or values of other shapes, arrays of two contexts,
    /// or more than `u32::MAX - 1` indices along `axis`, are an error naming the shapes.
    ///
    /// ```
    /// # use lazycl::prelude::*;
    /// # fn main() -> lazycl::Result<()> {
    /// let ctx = Context::new()?;
    /// let a = ctx.from_shape_slice([2, 3], &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])?;
    /// let i = ctx.from_shape_slice([2, 2], &[2u32, 0, 1, 1])?;
    /// let v = ctx.from_shape_slice([2, 2], &[10.0f32, 20.0, 30.0, 40.0])?;
    /// let out = a.scatter(-1, &i, &v)?;
    /// assert_eq!(out.to_vec()?, [20.0, 2.0, 10.0, 4.0, 40.0, 6.0]); // row 1: 40 wins over 30
    /// assert_eq!(a.to_vec()?, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]); // untouched
    /// let rows = ctx.from_shape_slice([1, 3], &[0u32, 1, 0])?; // a row index per column
    /// assert_eq!(a.scatter(0, &rows, 0.0)?.to_vec()?, [0.0, 2.0, 0.0, 4.0, 0.0, 6.0]);
    /// # Ok(())
    /// # }
    /// ```
    #[track_caller]
    pub fn scatter<I: Integer>(
        &self,
        axis: impl AsAxis,
        indices: &Array<I>,
        values: impl Operand<T>,
    ) -> Result<Array<T>> {
        let shape = self.shape().to_vec();
        let axis = crate::api::views::resolve_axis("scatter", axis.axis_value(), &shape, false)?;
        let ctx = self.node.ctx.clone();
        for n in [&self.node, &indices.node] {
            if let Some(e) = failure(n) {
                return Err(e);
            }
        }
        ctx.tag.check(
            &indices.node.ctx.tag,
            || "scatter".into(),
            || format!("the indices (shape {:?})", indices.shape()),
        )?;
        let picked = indices.shape().to_vec();
        let fits = picked.len() == shape.len()
            && (0..shape.len()).all(|d| d == axis || picked[d] == shape[d] || picked[d] == 1);
        if !fits {
            return Err(Error::ShapeMismatch {
                op: format!("scatter along axis {axis} (array and indices)"),
                left: shape,
                right: picked,
                why: format!(
                    "do not fit: the indices need the array's rank, and off axis {axis} its lengths or 1"
                ),
            });
        }
        // The positions written: the array's shape with `indices`' length along `axis`.
        let m = picked[axis];
        let mut space = shape.clone();
        space[axis] = m;
        if m >= Index::MAX as usize {
            return Err(Error::TooLarge {
                op: "scatter".into(),
                shape: picked,
                reason: format!("{m} indices along axis {axis}: positions are counted in u32"),
            });
        }
        let v = values.into_array(CtxRef(&ctx));
        ctx.tag.check(
            &v.node.ctx.tag,
            || "scatter".into(),
            || format!("the values (shape {:?})", v.shape()),
        )?;
        if let Some(e) = v.recording_error() {
            return Err(e);
        }
        let v_shape = v.shape().to_vec();
        let v = v.broadcast_to(&space);
        if v.recording_error().is_some() {
            return Err(Error::ShapeMismatch {
                op: format!(
                    "scatter along axis {axis} into an array of shape {shape:?} (values and positions)"
                ),
                left: v_shape,
                right: space,
                why: "do not fit: the values cannot be broadcast to the indices' positions".into(),
            });
        }
        if space.contains(&0) || shape.contains(&0) {
            return Ok(self.clone());
        }
        let winners = self.winners(axis, indices, &space)?;
        // Where a position won, its value; elsewhere this array's element.
        let at = &winners - 1u32;
        let values = v.take_along_axis(axis, &at);
        Ok(winners.gt(0u32).select(&values, self))
    }

    /// For each element of this array, the largest position `j + 1` along `axis` (0 for
    /// none) whose index in `indices` (broadcast to `space`) lands on it: one kernel now.
    #[track_caller]
    fn winners<I: Integer>(&self, axis: usize, indices: &Array<I>, space: &[usize]) -> Result<Array<u32>> {
        let ctx = Context {
            inner: self.node.ctx.clone(),
        };
        let shape = self.shape().to_vec();
        let m = space[axis];
        let mut winners = ctx.zeros::<u32>(&shape[..])?;
        let mut along = vec![1; shape.len()];
        along[axis] = m;
        let positions: Vec<u32> = (1..=m as u32).collect();
        let positions = ctx.from_vec(positions)?.reshape(&along[..]).broadcast_to(space);
        let q = ctx.inner.queue().clone();
        let buffer = winners.private_buffer(None, "scatter")?;
        // (Both as elementwise work of the kernel: a materialized array is read through a copy node.)
        let positions = computed_apart(&q, positions, &buffer)?;
        let ix = computed_apart(&q, indices.broadcast_to(space), &buffer)?;
        exec::materialize_scatter(
            &q,
            &positions.node,
            &ix.node,
            axis,
            ScatterCombine::Max,
            buffer,
            &Arc::new(scatter_map(shape.len(), axis)),
            &shape,
        )?;
        Ok(winners)
    }
}
