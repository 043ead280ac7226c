//! The pullback of the matrix product `y = a · b` (`[.., m, k] · [.., k, n]`, batch axes
//! broadcast): `g · bᵀ` and `aᵀ · g`, products whose transposed operands are views read
//! in the GEMM's tile loads (no transposed copy), summed back over broadcast batch axes.

use super::shared::{unbroadcast, Contribution};
use crate::api::array::Array;
use crate::dtype::Float;
use crate::graph::NodeRef;

/// The cotangents of the float operands `wanted` marks.
pub(super) fn matmul<T: Float>(a: &NodeRef, b: &NodeRef, g: Array<T>, wanted: &[bool]) -> Vec<Contribution> {
    let transposed = |n: &NodeRef| {
        let x = Array::<T>::from_node(n.clone());
        let r = x.ndim();
        x.swap_axes(r - 2, r - 1)
    };
    let mut out = Vec::new();
    if wanted[0] {
        out.push((0, unbroadcast(g.matmul(&transposed(b)), &a.shape).node));
    }
    if wanted[1] {
        out.push((1, unbroadcast(transposed(a).matmul(&g), &b.shape).node));
    }
    out
}
