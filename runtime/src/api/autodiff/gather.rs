//! The pullbacks of `take` and `take_along_axis`: element `j` of the data's axis gets the
//! sum of the cotangents of every position that picked it (indices clamped into the axis
//! as the forward pass clamped them). Written as a comparison of the indices with the
//! axis's positions, reduced: for `take` a product of that 0/1 matrix with the cotangent,
//! for `take_along_axis` a sum over the picked axis. Both are lazy and fused (the 0/1
//! values are computed where the product or the sum reads them, never stored); their work
//! is the axis's length times the number of indices, where a scatter-add would do work in
//! the number of indices only.

use super::shared::unbroadcast;
use crate::api::array::Array;
use crate::api::construct::positions;
use crate::api::ops::cast_node;
use crate::dtype::{DType, Float};
use crate::graph::{NodeRef, TakeSpec};

/// The cotangent of `data` through a take of `indices` along `spec.axis`.
pub(super) fn take<T: Float>(spec: &TakeSpec, data: &NodeRef, indices: &NodeRef, g: Array<T>) -> NodeRef {
    let shape = data.shape.to_vec();
    let axis = spec.axis;
    let n = shape[axis];
    let ctx = &data.ctx;
    // The indices as the forward pass read them: clamped into the axis.
    let picked = Array::<i64>::from_node(cast_node(indices, DType::I64)).clamp(0, n.max(1) as i64 - 1);
    let at = positions::<i64>(ctx, n);
    if spec.along {
        // g: the data's shape with `m` along `axis`, broadcast. Each position compares its
        // index with every `j` of the data's axis, on a new axis at `axis` (the picked one
        // moves to `axis + 1`, over which the products are summed).
        let out = g.shape().to_vec();
        let mut column = vec![1; out.len() + 1];
        column[axis] = n;
        let mask = picked
            .broadcast_to(&out)
            .insert_axis(axis)
            .eq(at.reshape(column))
            .cast::<T>();
        let summed = (g.insert_axis(axis) * mask).sum_axis(axis + 1);
        return unbroadcast(summed, &shape).node;
    }
    // g: the data's shape with the indices' shape in place of `axis`, as [p, m, q].
    let p: usize = shape[..axis].iter().product();
    let q: usize = shape[axis + 1..].iter().product();
    let m = indices.shape.iter().product::<usize>();
    let flat = picked.reshape([1, m]);
    let mask = flat.eq(at.reshape([n, 1])).cast::<T>(); // [n, m]
    mask.matmul(&g.reshape([p, m, q])).reshape(shape).node
}
