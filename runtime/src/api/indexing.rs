//! Recording indexing: `take` and `take_along_axis` (gathers by an index array). A take is an
//! elementwise node of the result's shape: the kernel that reads it loads the data at the
//! index's value (the data from memory of its own, materialized first where it is lazy;
//! the indices may be lazy and are computed in the same kernel).

use crate::api::array::Array;
use crate::api::ops::failure;
use crate::api::views::AsAxis;
use crate::dtype::{Element, Integer};
use crate::error::Error;
use crate::graph::shape::broadcast;
use crate::graph::{Op, TakeSpec};

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
        let data = self.shape();
        let picked = indices.shape();
        if let Err(e) = self.check_take("take", axis, indices) {
            return Array::failed(&self.node.ctx, data.to_vec(), e);
        }
        let shape: Vec<usize> = data[..axis]
            .iter()
            .chain(picked)
            .chain(&data[axis + 1..])
            .copied()
            .collect();
        self.record_take(TakeSpec { axis, along: false }, shape, indices, "take")
    }

    /// One element along `axis` per position of `indices`, an array of this array's rank:
    /// numpy's `np.take_along_axis(a, indices, axis)` with indices clamped into the axis
    /// (`mode='clip'`). The other axes broadcast against each other; the result has
    /// `indices`' length along `axis`. The partner of `argmax_axis`/`argsort`-style
    /// indices: `a.take_along_axis(Axis(1), &i)` picks, in each row, the columns `i` names.
    ///
    /// ```
    /// # use lazycl_runtime::{Axis, Context};
    /// # fn main() -> lazycl_runtime::Result<()> {
    /// let ctx = Context::new()?;
    /// let a = ctx.from_shape_slice([2, 3], &[10, 11, 12, 20, 21, 22])?;
    /// let i = ctx.from_shape_slice([2, 2], &[2u32, 0, 1, 1])?;
    /// assert_eq!(a.take_along_axis(Axis(1), &i).to_vec()?, vec![12, 10, 21, 21]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn take_along_axis<I: Integer>(&self, axis: impl AsAxis, indices: &Array<I>) -> Array<T> {
        let axis = axis.axis_index();
        let data = self.shape();
        let picked = indices.shape();
        let name = "take_along_axis";
        if let Err(e) = self.check_take(name, axis, indices) {
            return Array::failed(&self.node.ctx, data.to_vec(), e);
        }
        let mismatch = || Error::ShapeMismatch {
            op: format!("{name} along axis {axis}"),
            left: data.to_vec(),
            right: picked.to_vec(),
        };
        if picked.len() != data.len() {
            return Array::failed(&self.node.ctx, data.to_vec(), mismatch());
        }
        let mut along = data.to_vec();
        along[axis] = picked[axis];
        let Some(shape) = broadcast(&along, picked) else {
            return Array::failed(&self.node.ctx, data.to_vec(), mismatch());
        };
        self.record_take(TakeSpec { axis, along: true }, shape.to_vec(), indices, name)
    }

    /// The errors both takes share: recording errors, another context, a bad axis.
    fn check_take<I: Integer>(&self, name: &str, axis: usize, indices: &Array<I>) -> Result<(), Error> {
        for n in [&self.node, &indices.node] {
            if let Some(e) = failure(n) {
                return Err(e);
            }
        }
        self.node.ctx.tag.check(
            &indices.node.ctx.tag,
            || name.into(),
            || format!("the indices (shape {:?})", indices.shape()),
        )?;
        if axis >= self.shape().len() {
            return Err(Error::InvalidShape(format!(
                "{name}: axis {axis} is out of range for an array of shape {:?}",
                self.shape()
            )));
        }
        Ok(())
    }

    /// Records a take of result shape `shape` (an error if it picks from an empty axis).
    fn record_take<I: Integer>(
        &self,
        spec: TakeSpec,
        shape: Vec<usize>,
        indices: &Array<I>,
        name: &str,
    ) -> Array<T> {
        let data = self.shape();
        if data[spec.axis] == 0 && shape.iter().all(|&d| d > 0) {
            let e = Error::InvalidShape(format!(
                "{name}: axis {} of an array of shape {data:?} is empty, so indices of shape {:?} pick nothing",
                spec.axis,
                indices.shape()
            ));
            return Array::failed(&self.node.ctx, data.to_vec(), e);
        }
        Array::lazy(
            &self.node.ctx,
            shape,
            Op::Take {
                spec,
                data: self.node.clone(),
                indices: indices.node.clone(),
            },
        )
    }
}
