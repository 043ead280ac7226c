//! Recording matrix products: `matmul` (numpy's rules: batched, broadcast batch axes,
//! vectors on either side), `dot` (ndarray's: vectors and matrices) and `outer`
//! (numpy's: an elementwise product of broadcast views).
//!
//! A product of two matrices (or stacks of them) is one [`Op::MatMul`] node, computed by
//! a tiled GEMM kernel that reads the operands' producers inside its tile loads and
//! applies the product's elementwise consumers in its store (`plan::gemm`). A product with
//! a vector operand is a map-reduce over broadcast operands: it reads the matrix once,
//! which is all such a product needs, and the reduction layouts are made for it.

use super::array::Array;
use crate::dtype::Arithmetic;
use crate::error::Error;
use crate::graph::shape::broadcast;
use crate::graph::Op;
use crate::graph::{BinaryOp, UnaryOp};
use ndarray::Axis;

impl<T: Arithmetic> Array<T> {
    /// The matrix product, with numpy's `matmul` rules:
    ///
    /// - `[m, k] · [k, n] → [m, n]`;
    /// - stacks of matrices, `[.., m, k] · [.., k, n] → [.., m, n]`, the batch axes
    ///   broadcast against each other (`[b, m, k] · [k, n]` multiplies each of the `b`
    ///   matrices by the one on the right);
    /// - a vector on the right is a column, `[.., m, k] · [k] → [.., m]`; on the left a
    ///   row, `[k] · [.., k, n] → [.., n]`; two vectors give their inner product, a 0-d
    ///   array.
    ///
    /// Lazy like everything else: the operands may be expressions and views
    /// (`(&x - &mu).matmul(&w.t())` reads `x`, `mu` and `w` in the product's kernel, with
    /// no temporary), and elementwise consumers of the product (`(a.matmul(&b) +
    /// &bias).max(0.0)`) are applied where the kernel stores it. Floats accumulate in
    /// their own type (`f16` and `bf16` in `f32`, rounded once where the result is
    /// stored), in an order that depends on the device's tiles (so results differ from a
    /// serial sum by rounding, as BLAS results do); integers wrap in their type, as
    /// numpy's do. The product has the operands' type, as torch's does; for another, cast
    /// the operands: `a.cast::<f32>().matmul(&b.cast::<f32>())` over `bf16` arrays reads
    /// their 16 bits in its tile loads and stores `f32`, one kernel (JAX's
    /// `preferred_element_type`). A product of complex matrices is four real products of
    /// their parts, `(ar br - ai bi) + i (ar bi + ai br)`, each reading its parts in its
    /// tile loads (no copy of a part is made) and the two sums made in the stores.
    ///
    /// ```
    /// # use lazycl::prelude::*;
    /// # fn main() -> lazycl::Result<()> {
    /// let ctx = Context::new()?;
    /// let a = ctx.from_shape_slice([2, 3], &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])?;
    /// let b = ctx.from_shape_slice([3, 2], &[1.0f32, 0.0, 0.0, 1.0, 1.0, 1.0])?;
    /// assert_eq!(a.matmul(&b).to_vec()?, vec![4.0, 5.0, 10.0, 11.0]);
    /// # Ok(())
    /// # }
    /// ```
    #[track_caller]
    pub fn matmul(&self, other: &Array<T>) -> Array<T> {
        self.product(other, "matmul")
    }

    /// ndarray's `dot`: the inner product of two vectors (a 0-d array), matrix · vector
    /// (`[m, n] · [n] → [m]`), vector · matrix (`[m] · [m, n] → [n]`) and the matrix
    /// product ([`matmul`](Array::matmul)). Other ranks are an error, as in ndarray (use
    /// `matmul` for stacks of matrices).
    ///
    /// ```
    /// # use lazycl::prelude::*;
    /// # fn main() -> lazycl::Result<()> {
    /// let ctx = Context::new()?;
    /// let m = ctx.from_shape_slice([2, 3], &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])?;
    /// let v = ctx.from_slice(&[1.0f32, 0.0, -1.0])?;
    /// assert_eq!(m.dot(&v).to_vec()?, [-2.0, -2.0]); // [2, 3] · [3] → [2]
    /// assert_eq!(v.dot(&v).item()?, 2.0); // two vectors: a 0-d array
    /// # Ok(())
    /// # }
    /// ```
    #[track_caller]
    pub fn dot(&self, other: &Array<T>) -> Array<T> {
        match (self.ndim(), other.ndim()) {
            (1 | 2, 1 | 2) => self.product(other, "dot"),
            _ => self.product_error(
                "dot",
                other,
                "dot takes vectors and matrices (use matmul for stacks of matrices)".into(),
            ),
        }
    }

    /// [`matmul`](Array::matmul), its errors naming the user's `op`.
    #[track_caller]
    fn product(&self, other: &Array<T>, op: &'static str) -> Array<T> {
        match (self.ndim(), other.ndim()) {
            (0, _) | (_, 0) => {
                self.product_error(op, other, "a product needs operands of at least one axis".into())
            }
            (1, 1) => self.inner(other, op),
            (_, 1) => self.matrix_vector(other, op),
            (1, _) => self.vector_matrix(other, op),
            _ => self.matrix_product(other, op),
        }
    }

    /// `[k] · [k]`: one map-reduce kernel.
    #[track_caller]
    fn inner(&self, other: &Array<T>, op: &'static str) -> Array<T> {
        if self.shape() != other.shape() {
            let why = format!(
                "the vectors' lengths differ ({} and {})",
                self.shape()[0],
                other.shape()[0]
            );
            return self.product_error(op, other, why);
        }
        (self * other).sum().cast::<T>()
    }

    /// `[.., m, k] · [k] → [.., m]`: each row's inner product with the vector.
    #[track_caller]
    fn matrix_vector(&self, other: &Array<T>, op: &'static str) -> Array<T> {
        let k = self.shape()[self.ndim() - 1];
        if other.shape()[0] != k {
            let why = format!(
                "the matrix's {k} columns differ from the vector's length, {}",
                other.shape()[0]
            );
            return self.product_error(op, other, why);
        }
        (self * other).sum_axis(self.ndim() - 1).cast::<T>()
    }

    /// `[k] · [.., k, n] → [.., n]`: the vector's combination of each matrix's rows.
    #[track_caller]
    fn vector_matrix(&self, other: &Array<T>, op: &'static str) -> Array<T> {
        let rank = other.ndim();
        if other.shape()[rank - 2] != self.shape()[0] {
            let why = format!(
                "the vector's length, {}, differs from the matrix's {} rows",
                self.shape()[0],
                other.shape()[rank - 2]
            );
            return self.product_error(op, other, why);
        }
        (&self.insert_axis(Axis(1)) * other)
            .sum_axis(rank - 2)
            .cast::<T>()
    }

    /// `[.., m, k] · [.., k, n] → [.., m, n]`: one [`Op::MatMul`] node.
    #[track_caller]
    fn matrix_product(&self, other: &Array<T>, op: &'static str) -> Array<T> {
        let (a, b) = (self.shape(), other.shape());
        let (m, k) = (a[a.len() - 2], a[a.len() - 1]);
        let (k2, n) = (b[b.len() - 2], b[b.len() - 1]);
        if k != k2 {
            let why = format!("the left operand's {k} columns differ from the right one's {k2} rows");
            return self.product_error(op, other, why);
        }
        let Some(mut shape) = broadcast(&a[..a.len() - 2], &b[..b.len() - 2]) else {
            let why = format!(
                "the batch axes {:?} and {:?} cannot be broadcast together",
                &a[..a.len() - 2],
                &b[..b.len() - 2]
            );
            return self.product_error(op, other, why);
        };
        if [m, n, k].iter().any(|&d| d > i32::MAX as usize) {
            let e = Error::TooLarge {
                op: op.into(),
                shape: a.to_vec(),
                reason: format!(
                    "a matrix of {m} x {k} times {k} x {n}: each of m, n and k may be at most 2^31 - 1"
                ),
            };
            return Array::failed(&self.node.ctx, a.to_vec(), e);
        }
        if T::DTYPE.is_complex() {
            return self.complex_product(other);
        }
        shape.extend([m, n]);
        let ctx = &self.node.ctx;
        if let Some(e) = self.recording_error().or_else(|| other.recording_error()) {
            return Array::failed(ctx, shape, e);
        }
        if let Err(e) = ctx.tag.check(
            &other.node.ctx.tag,
            || op.into(),
            || format!("the right operand, of shape {b:?}"),
        ) {
            return Array::failed(ctx, shape, e);
        }
        Array::lazy(ctx, shape, Op::MatMul(self.node.clone(), other.node.clone()))
    }

    /// The product of complex matrices (shapes checked): four real products of the parts.
    #[track_caller]
    fn complex_product(&self, other: &Array<T>) -> Array<T> {
        let part = |x: &Array<T>, p: UnaryOp| x.unary::<T::Real>(p);
        let (ar, ai) = (part(self, UnaryOp::Re), part(self, UnaryOp::Im));
        let (br, bi) = (part(other, UnaryOp::Re), part(other, UnaryOp::Im));
        let re = ar.matmul(&br) - ai.matmul(&bi);
        let im = ar.matmul(&bi) + ai.matmul(&br);
        re.binary(BinaryOp::Complex, im)
    }

    /// A linear reduction (`reduce`: a sum or a mean along an axis) of this array along
    /// `axis`, where this array is a lazy matrix product and `axis` one of its matrix
    /// axes: the product of the operand reduced along its matching axis, `(a b) 1 = a (b
    /// 1)` and `1ᵀ (a b) = (1ᵀ a) b`, which never computes the product (a matrix-vector
    /// product instead of a matrix-matrix one). `None` for anything else.
    #[track_caller]
    pub(crate) fn reduced_product(
        &self,
        axis: usize,
        reduce: impl Fn(&Array<T>, usize) -> Array<T>,
    ) -> Option<Array<T>> {
        let (a, b) = match &*self.node.state() {
            crate::graph::State::Lazy(Op::MatMul(a, b)) => (a.clone(), b.clone()),
            _ => return None,
        };
        let (a, b) = (Array::<T>::from_node(a), Array::<T>::from_node(b));
        let rank = self.ndim();
        if axis + 1 == rank {
            // Along the columns: each row of a against b's row sums (or means).
            let reduced = reduce(&b, b.ndim() - 1); // [.., k]
            let reduced = reduced.insert_axis(Axis(reduced.ndim() - 1)); // [.., 1, k]
            let terms = &a * &reduced; // [.., m, k]
            Some(terms.sum_axis(terms.ndim() - 1).cast::<T>())
        } else if axis + 2 == rank {
            // Along the rows: a's column sums (or means) against each column of b.
            let reduced = reduce(&a, a.ndim() - 2); // [.., k]
            let reduced = reduced.insert_axis(Axis(reduced.ndim())); // [.., k, 1]
            let terms = &reduced * &b; // [.., k, n]
            Some(terms.sum_axis(terms.ndim() - 2).cast::<T>())
        } else {
            None
        }
    }

    /// A failed product of `self` and `other` under `op`, saying why.
    #[track_caller]
    fn product_error(&self, op: &str, other: &Array<T>, why: String) -> Array<T> {
        if let Some(e) = self.recording_error().or_else(|| other.recording_error()) {
            return Array::failed(&self.node.ctx, self.shape().to_vec(), e);
        }
        let e = Error::ShapeMismatch {
            op: op.into(),
            left: self.shape().to_vec(),
            right: other.shape().to_vec(),
            why: format!("do not fit: {why}"),
        };
        Array::failed(&self.node.ctx, self.shape().to_vec(), e)
    }

    /// The outer product: `[n] ⊗ [m] → [n, m]`, element `(i, j)` `self[i] * other[j]`
    /// (numpy's `outer`, which flattens operands of other ranks first, in row-major
    /// order, as this does). Lazy: a product of two broadcast views, computed where it is
    /// read; no matrix is stored unless the result is materialized.
    ///
    /// ```
    /// # use lazycl::prelude::*;
    /// # fn main() -> lazycl::Result<()> {
    /// let ctx = Context::new()?;
    /// let a = ctx.from_slice(&[1i32, 2])?;
    /// let b = ctx.from_slice(&[10i32, 20, 30])?;
    /// assert_eq!(a.outer(&b).to_vec()?, [10, 20, 30, 20, 40, 60]);
    /// let m = ctx.from_shape_slice([2, 1], &[3i32, 4])?; // flattened to [3, 4]
    /// assert_eq!(m.outer(&a).shape(), [2, 2]);
    /// # Ok(())
    /// # }
    /// ```
    #[track_caller]
    pub fn outer(&self, other: &Array<T>) -> Array<T> {
        let flat = |a: &Array<T>| match a.ndim() {
            1 => a.clone(),
            _ => a.reshape([a.len()]),
        };
        flat(self).insert_axis(Axis(1)) * flat(other)
    }
}
