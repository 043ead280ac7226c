//! The pullback of each operation: given a node, its operation and the cotangent of its
//! value, the cotangents of its operands (those the walk wants), each in its operand's
//! shape and type. One function per kind of operation, in the files beside this one;
//! here the dispatch on the node's element type and the helpers they share.

use crate::api::array::Array;
use crate::api::ops::cast_node;
use crate::dtype::{DType, Float};
use crate::error::{Error, Result};
use crate::graph::{NodeRef, Op, UnaryOp};

use super::{elementwise, gather, linear, reduce, templates, views};

/// A cotangent for operand `slot` of the operation.
pub(super) type Contribution = (usize, NodeRef);

/// The cotangents of the operands of `node` (computed by `op`) that `wanted` marks,
/// given `g`, the cotangent of `node`.
pub(super) fn pull(node: &NodeRef, op: &Op, g: &NodeRef, wanted: &[bool]) -> Result<Vec<Contribution>> {
    // A cast passes its cotangent back in the operand's type, whatever the two types.
    if let Op::Unary(UnaryOp::Cast, x) = op {
        return Ok(if x.dtype.is_float() && wanted[0] {
            vec![(0, cast_node(g, x.dtype))]
        } else {
            Vec::new()
        });
    }
    let pulled = match node.dtype {
        DType::F32 => typed::<f32>(node, op, g, wanted),
        DType::F64 => typed::<f64>(node, op, g, wanted),
        DType::F16 => typed::<half::f16>(node, op, g, wanted),
        DType::BF16 => typed::<half::bf16>(node, op, g, wanted),
        _ => Ok(Vec::new()),
    }?;
    Ok(pulled.into_iter().filter(|(slot, _)| wanted[*slot]).collect())
}

/// [`pull`] for a node of float type `T`.
fn typed<T: Float>(node: &NodeRef, op: &Op, g: &NodeRef, wanted: &[bool]) -> Result<Vec<Contribution>> {
    let g = Array::<T>::from_node(g.clone());
    let y = Array::<T>::from_node(node.clone());
    let out = match op {
        Op::Scalar(_) | Op::FromIndex(..) => Vec::new(),
        Op::Unary(u, x) => elementwise::unary(*u, x, &y, g)?
            .map(|c| vec![(0, c)])
            .unwrap_or_default(),
        Op::Binary(b, x, z) => elementwise::binary(*b, x, z, &y, g, wanted)?,
        Op::WithScalar(b, x, s) => elementwise::with_scalar(*b, x, s, &y, g)?,
        Op::Ternary(t, a, b, c) => elementwise::ternary(*t, [a, b, c], g),
        Op::Reduce(spec, x) => vec![(0, reduce::reduce(spec, x, &y, g)?)],
        Op::Scan(spec, x) => vec![(0, reduce::scan(spec, x, &y, g)?)],
        Op::View(map, source) => vec![(0, views::view(map, source, g)?)],
        Op::Reshape(source) => vec![(0, g.reshape(source.shape.to_vec()).node)],
        Op::Region(region, sources) => views::region(region, sources, g, wanted),
        Op::MatMul(a, b) => linear::matmul(a, b, g, wanted),
        Op::Take { spec, data, indices } => match spec.search {
            // (A search gives positions: no cotangent reaches it.)
            Some(_) => Vec::new(),
            None => vec![(0, gather::take(spec, data, indices, g))],
        },
        Op::Expr(template, operands) => templates::expr(template, operands, &y, g, wanted)?,
    };
    Ok(out)
}

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
