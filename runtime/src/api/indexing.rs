//! Recording indexing: `take` (gather along an axis by an index array). A `take` is an
//! elementwise node of the result's shape: the kernel that reads it loads the data at the
//! index's value (the data from memory of its own, materialized first where it is lazy;
//! the indices may be lazy and are computed in the same kernel).

use crate::api::array::Array;
use crate::api::ops::failure;
use crate::api::views::AsAxis;
use crate::dtype::{Element, Integer};
use crate::error::Error;
use crate::graph::Op;

impl<T: Element> Array<T> {
    /// The elements at `indices` along `axis`: numpy's `np.take(a, indices, axis,
    /// mode='clip')` (ndarray's `select`, with an index array on the device). The result's
    /// shape is this array's with `axis` replaced by the indices' shape. Any integer type
    /// indexes; an index outside `0..len` is clamped into it (negative ones to 0), so no
    /// index reads outside the array. Taking from an empty axis is an error.
    ///
    /// `a.take(0, &idx)` feeding elementwise work is computed in that work's kernel: no
    /// array of the picked elements is stored.
    ///
    /// ```
    /// # use lazycl_runtime::{Axis, Context};
    /// # fn main() -> lazycl_runtime::Result<()> {
    /// let ctx = Context::new()?;
    /// let a = ctx.from_shape_slice([3, 2], &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])?;
    /// let rows = ctx.from_slice(&[2u32, 0, 2])?;
    /// assert_eq!(a.take(Axis(0), &rows).to_vec()?, vec![5.0, 6.0, 1.0, 2.0, 5.0, 6.0]);
    /// let cols = ctx.from_slice(&[1i64, 7, -1])?; // clamped: 1, 1, 0
    /// assert_eq!(a.take(Axis(1), &cols).to_vec()?, vec![2.0, 2.0, 1.0, 4.0, 4.0, 3.0, 6.0, 6.0, 5.0]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn take<I: Integer>(&self, axis: impl AsAxis, indices: &Array<I>) -> Array<T> {
        let axis = axis.axis_index();
        let ctx = &self.node.ctx;
        let data = self.shape();
        let picked = indices.shape();
        let fail = |e: Error| Array::failed(ctx, data.to_vec(), e);
        for n in [&self.node, &indices.node] {
            if let Some(e) = failure(n) {
                return fail(e);
            }
        }
        if let Err(e) = ctx.tag.check(
            &indices.node.ctx.tag,
            || "take".into(),
            || format!("the indices (shape {picked:?})"),
        ) {
            return fail(e);
        }
        if axis >= data.len() {
            return fail(Error::InvalidShape(format!(
                "take: axis {axis} is out of range for an array of shape {data:?}"
            )));
        }
        let shape: Vec<usize> = data[..axis]
            .iter()
            .chain(picked)
            .chain(&data[axis + 1..])
            .copied()
            .collect();
        if data[axis] == 0 && shape.iter().all(|&d| d > 0) {
            return fail(Error::InvalidShape(format!(
                "take: axis {axis} of an array of shape {data:?} is empty, so indices of shape {picked:?} pick nothing"
            )));
        }
        Array::lazy(
            ctx,
            shape,
            Op::Take {
                axis,
                data: self.node.clone(),
                indices: indices.node.clone(),
            },
        )
    }
}
