//! Pullbacks of reductions and scans. A reduction's cotangent is stretched back over the
//! reduced axes (a broadcast view: no copy); `amax`/`amin` send it to the elements equal
//! to the result, split evenly among ties (JAX's and torch's `amax` rule); `prod` divides
//! the product by each element (NaN where an element is 0, as the quotient gives). A
//! scan's cotangent is the reversed scan of the cotangent.

use super::shared::{constant, operand};
use crate::api::array::Array;
use crate::dtype::Float;
use crate::error::Result;
use crate::graph::{NodeRef, ReduceOp, ReduceSpec, ScanSpec};

/// The cotangent of `x` through `y = reduce(x)`.
pub(super) fn reduce<T: Float>(spec: &ReduceSpec, x: &NodeRef, y: &Array<T>, g: Array<T>) -> Result<NodeRef> {
    let xs = x.shape.to_vec();
    let axes: Vec<usize> = (0..xs.len()).filter(|&d| spec.axes & (1 << d) != 0).collect();
    // The result with the reduced axes kept as size 1 (a reshape where they were removed),
    // stretched over the operand.
    let kept: Vec<usize> = (0..xs.len())
        .map(|d| if axes.contains(&d) { 1 } else { xs[d] })
        .collect();
    let stretch = |a: &Array<T>| a.reshape(kept.clone()).broadcast_to(&xs);
    let x = operand::<T>(x);
    let d = match spec.op {
        ReduceOp::Sum => stretch(&g),
        ReduceOp::Mean => {
            let count: usize = axes.iter().map(|&d| xs[d]).product();
            stretch(&g) / constant(y, count as f64)
        }
        ReduceOp::Prod => stretch(&(g * y)) / x,
        ReduceOp::Min | ReduceOp::Max => {
            let chosen = x.eq(stretch(y)).cast::<T>();
            let ties = chosen.sum_axes(&axes, true);
            stretch(&g) * chosen / ties
        }
        // (Arg reductions give integers: no cotangent reaches them.)
        ReduceOp::ArgMin | ReduceOp::ArgMax => stretch(&g) * constant(y, 0.0),
    };
    Ok(d.node)
}

/// The cotangent of `x` through `y = scan(x)` along `spec.axis`: element `k` of `x` feeds
/// every later element (and itself, inclusive), so its cotangent is the scan of the
/// cotangent from the end (times `y / x` for a product).
pub(super) fn scan<T: Float>(spec: &ScanSpec, x: &NodeRef, y: &Array<T>, g: Array<T>) -> Result<NodeRef> {
    let axis = spec.axis;
    let from_end = |a: Array<T>| {
        let flipped = a.flip(axis);
        let summed = if spec.exclusive {
            flipped.cumsum_exclusive(axis)
        } else {
            flipped.cumsum(axis)
        };
        summed.flip(axis)
    };
    let d = match spec.op {
        ReduceOp::Prod => from_end(g * y) / operand::<T>(x),
        _ => from_end(g),
    };
    Ok(d.node)
}
