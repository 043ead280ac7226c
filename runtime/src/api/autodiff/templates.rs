//! The pullback of an `expr!` node (and of a device function's `map`): the macro wrote
//! the expression's derivative with respect to each operand at compile time (see the
//! macros' `grad`), as one more template over the same operands and the cotangent. Each
//! operand's cotangent is that template's node, one fused node, summed back over the axes
//! the operand was broadcast along.

use super::shared::{unbroadcast, unsupported, Contribution};
use crate::api::array::Array;
use crate::api::ops::{cast_node, record};
use crate::dtype::Float;
use crate::error::Result;
use crate::graph::template::{Derivative, ExprTemplate};
use crate::graph::{NodeRef, Op};

/// The cotangents of the float operands of `y = template(operands)` that `wanted` marks.
pub(super) fn expr<T: Float>(
    template: &'static ExprTemplate,
    operands: &[NodeRef],
    y: &Array<T>,
    g: Array<T>,
    wanted: &[bool],
) -> Result<Vec<Contribution>> {
    let op = || format!("expr!({})", template.rust);
    let mut out = Vec::new();
    for (slot, x) in operands.iter().enumerate() {
        if !wanted[slot] || !x.dtype.is_float() {
            continue;
        }
        let d =
            match template.derivatives.get(slot) {
                Some(Derivative::Template(d)) => *d,
                Some(Derivative::Zero) => continue,
                Some(Derivative::Missing(why)) => return Err(unsupported(&y.node, &op(), why)),
                None => return Err(unsupported(
                    &y.node,
                    &op(),
                    "it has no derivative written (the derivative of an expr! is not differentiated again)",
                )),
            };
        let mut inputs: Vec<&NodeRef> = operands.iter().collect();
        inputs.push(&g.node);
        let nodes = inputs.iter().map(|n| (*n).clone()).collect();
        let name = || format!("the derivative of {}", op());
        let cotangent: Array<T> = record(&name, &inputs, || Op::Expr(d, nodes));
        let summed = unbroadcast(cotangent, &x.shape);
        out.push((slot, cast_node(&summed.node, x.dtype)));
    }
    Ok(out)
}
