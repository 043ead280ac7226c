//! What the rules of every family share: the cotangent of an operand slot, constants,
//! operands in a rule's type, sums back over broadcast axes, and the error of an
//! operation without a derivative.

use crate::api::array::Array;
use crate::api::ops::cast_node;
use crate::dtype::{DType, Float};
use crate::error::Error;
use crate::graph::{NodeRef, Op};

/// A cotangent for operand `slot` of the operation.
pub(super) type Contribution = (usize, NodeRef);

/// `a + b` (cotangents of one node, of its type, meeting from two paths).
pub(super) fn add(a: &NodeRef, b: &NodeRef) -> NodeRef {
    fn sum<T: Float>(a: &NodeRef, b: &NodeRef) -> NodeRef {
        (Array::<T>::from_node(a.clone()) + Array::<T>::from_node(b.clone())).node
    }
    match a.dtype {
        DType::F32 => sum::<f32>(a, b),
        DType::F64 => sum::<f64>(a, b),
        DType::F16 => sum::<half::f16>(a, b),
        DType::BF16 => sum::<half::bf16>(a, b),
        // (Only floats carry cotangents.)
        _ => a.clone(),
    }
}

/// The error of an operation without a pullback.
pub(super) fn unsupported(node: &NodeRef, op: &str, why: &str) -> Error {
    Error::Gradient {
        op: op.into(),
        at: node.at.to_string(),
        reason: format!("{why} (detach() the array, or take it out of the differentiated part)"),
    }
}

/// Operand `n` of a rule of type `T` as an array of `T`.
pub(super) fn operand<T: Float>(n: &NodeRef) -> Array<T> {
    Array::from_node(cast_node(n, T::DTYPE))
}

/// The constant `v` as a lazy 0-d array of `like`'s context.
pub(super) fn constant<T: Float>(like: &Array<T>, v: f64) -> Array<T> {
    Array::lazy(
        &like.node.ctx,
        Vec::<usize>::new(),
        Op::Scalar(T::__from_f64(v).to_arg_bits()),
    )
}

/// `g` summed back to `shape`, which broadcast to `g`'s shape: over the leading axes
/// `shape` lacks and the axes where it has 1.
pub(super) fn unbroadcast<T: Float>(g: Array<T>, shape: &[usize]) -> Array<T> {
    let gs = g.shape().to_vec();
    if gs[..] == shape[..] {
        return g;
    }
    let lead = gs.len() - shape.len();
    let axes: Vec<usize> = (0..gs.len())
        .filter(|&d| d < lead || (shape[d - lead] == 1 && gs[d] != 1))
        .collect();
    let summed = if axes.is_empty() {
        g
    } else {
        g.sum_axes(&axes, true)
    };
    summed.reshape(shape.to_vec())
}
