//! The pullback of each operation: given a node, its operation and the cotangent of its
//! value, the cotangents of its operands (those the walk wants), each in its operand's
//! shape and type. One function per kind of operation, in the files beside this one;
//! here the dispatch on the node's element type (their shared helpers: `shared`).

use crate::api::array::Array;
use crate::api::ops::cast_node;
use crate::dtype::{DType, Float};
use crate::error::Result;
use crate::graph::{NodeRef, Op, UnaryOp};

use super::shared::Contribution;
use super::{elementwise, gather, linear, reduce, templates, views};

/// The cotangents of the operands of `node` (computed by `op`) that `wanted` marks,
/// given `g`, the cotangent of `node`.
pub(super) fn pull(node: &NodeRef, op: &Op, g: &NodeRef, wanted: &[bool]) -> Result<Vec<Contribution>> {
    let inputs = op.inputs();
    let complex_operand = inputs.iter().zip(wanted).any(|(x, &w)| w && x.dtype.is_complex());
    if node.dtype.is_complex() || complex_operand {
        return Err(super::shared::unsupported(
            node,
            "an operation on complex numbers",
            "lazycl differentiates real floats only, not through complex numbers",
        ));
    }
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
        // (Complex: refused by `pull` before this.)
        Op::Fft(..) => Vec::new(),
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
