//! Recording reductions: full (`sum`), along axes (`sum_axis`), arg reductions, `dot`,
//! `mean`, `norm`. A reduction result stays on the device as a (lazy) array; consumers
//! read it from device memory inside their own kernels. Only `item()` and the other
//! downloads bring it to the host.

use crate::api::array::Array;
use crate::api::ops::cast_node;
use crate::api::views::{AsAxes, AsAxis};
use crate::dtype::{Arithmetic, Element, Float, Index, Inexact, Numeric};
use crate::error::Error;
use crate::graph::{Node, Op, ReduceOp, ReduceSpec, State};

impl<T: Element> Array<T> {
    /// Records a reduction of `axes` (all axes when `None`), keeping reduced axes as size 1
    /// when `keep_dims`. Errors (bad axis, min/max of nothing) are reported when the result
    /// is materialized.
    #[track_caller]
    fn record_reduce<R: Element>(&self, op: ReduceOp, axes: Option<&[usize]>, keep_dims: bool) -> Array<R> {
        let ctx = &self.node.ctx;
        let shape = self.shape().to_vec();
        let rank = shape.len();
        let axes: Vec<usize> = match axes {
            None => (0..rank).collect(),
            Some(a) => a.to_vec(),
        };
        let out_shape = |axes: &[usize]| -> Vec<usize> {
            shape
                .iter()
                .enumerate()
                .filter_map(|(d, &n)| match (axes.contains(&d), keep_dims) {
                    (false, _) => Some(n),
                    (true, true) => Some(1),
                    (true, false) => None,
                })
                .collect()
        };
        if let State::Failed(e) = &*self.node.state() {
            return Array::failed(ctx, out_shape(&[]), (**e).clone());
        }
        if let Some(&bad) = axes.iter().find(|&&a| a >= rank) {
            let e = Error::InvalidShape(format!(
                "axis {bad} is out of range for an array of shape {shape:?}"
            ));
            return Array::failed(ctx, shape, e);
        }
        if rank > 32 {
            return Array::failed(
                ctx,
                shape,
                Error::InvalidShape("reductions support at most 32 dimensions".into()),
            );
        }
        let mask = axes.iter().fold(0u64, |m, &a| m | (1 << a));
        // Saturating: a count that overflows is refused when materialized (TooLarge).
        let reduced = axes
            .iter()
            .try_fold(1usize, |acc, &a| acc.checked_mul(shape[a]))
            .unwrap_or(usize::MAX);
        if reduced == 0
            && matches!(
                op,
                ReduceOp::Min | ReduceOp::Max | ReduceOp::ArgMin | ReduceOp::ArgMax
            )
        {
            let e = Error::InvalidShape(format!(
                "{op:?} over an empty set of elements (shape {shape:?}, axes {axes:?})"
            ));
            return Array::failed(ctx, out_shape(&axes), e);
        }
        // Types narrower than 32 bits reduce in their compute type (`f32` for the 16-bit
        // floats, 32-bit integers for the small ones), from a cast the reduction's loads
        // absorb, and are cast back where the result keeps the type (`amin`, `mean`).
        let input = cast_node(&self.node, T::DTYPE.compute());
        let spec = ReduceSpec { op, axes: mask };
        let reduced = Node::new(
            ctx.clone(),
            R::DTYPE.compute(),
            out_shape(&axes).into(),
            State::Lazy(Op::Reduce(spec, input)),
        );
        Array::from_node(cast_node(&reduced, R::DTYPE))
    }
}

macro_rules! reductions {
    ($( $full:ident, $axis:ident, $axes:ident => $op:ident, $ret:ty, $doc:literal );* $(;)?) => {$(
        #[doc = concat!($doc, " of all elements: a lazy 0-d array that stays on the device.")]
        #[track_caller]
        pub fn $full(&self) -> Array<$ret> {
            self.record_reduce(ReduceOp::$op, None, false)
        }
        #[doc = concat!($doc, " along `axis`, which is removed from the shape.")]
        #[track_caller]
        pub fn $axis(&self, axis: impl AsAxis) -> Array<$ret> {
            let axis = match self.axis_or_failed(stringify!($axis), axis, false) {
                Ok(d) => d,
                Err(failed) => return failed,
            };
            // (The product's rewrite keeps the type: not for one reduced in a wider one.)
            if ReduceOp::$op.is_linear() && <$ret>::DTYPE == T::DTYPE && T::DTYPE.compute() == T::DTYPE {
                if let Some(r) = self.reduced_product(axis, |x, a| Array::from_node(x.$axis(a).node)) {
                    return Array::from_node(r.node);
                }
            }
            self.record_reduce(ReduceOp::$op, Some(&[axis]), false)
        }
        #[doc = concat!($doc, " along several axes ([`Axis`](ndarray::Axis) or indices); `keep_dims` keeps them as size 1.")]
        #[track_caller]
        pub fn $axes(&self, axes: &(impl AsAxes + ?Sized), keep_dims: bool) -> Array<$ret> {
            let mut resolved: smallvec::SmallVec<[usize; 4]> = smallvec::SmallVec::new();
            for a in axes.axis_values() {
                match self.axis_or_failed(stringify!($axes), a, false) {
                    Ok(d) => resolved.push(d),
                    Err(failed) => return failed,
                }
            }
            self.record_reduce(ReduceOp::$op, Some(&resolved), keep_dims)
        }
    )*};
}

/// Reductions over numeric arrays. Integer sums and products wrap like Rust's
/// `wrapping_add` (cast to `i64`/`u64` first for a wider accumulator); float sums are
/// compensated per work-item and combined by a tree, so they are accurate to a few ulps
/// of the result. `amin`/`amax` ignore NaN as numpy's `nanmin`/`nanmax` do: the result is
/// NaN only where every reduced element is NaN. `argmin`/`argmax` ignore NaN too; where
/// every element is NaN they give the first index, 0. A minimum, maximum or arg reduction
/// over no elements is an error (reported when materialized), as in numpy.
///
/// Every reduction is lazy and its result stays on the device, where later kernels read
/// it; the reduction absorbs the elementwise work that feeds it.
///
/// ```
/// # use lazycl::prelude::*;
/// # fn main() -> lazycl::Result<()> {
/// let ctx = Context::new()?;
/// let a = ctx.from_shape_slice([2, 3], &[1i32, 5, 2, 7, 0, 3])?;
/// assert_eq!(a.sum().item()?, 18);
/// // Sums of 8- and 16-bit integers are 32-bit (`Numeric::Sum`): no wrap at 256.
/// let bytes = ctx.from_slice(&[200u8, 100, 50])?;
/// assert_eq!(bytes.sum().item()?, 350u32);
/// assert_eq!(a.sum_axis(Axis(0)).to_vec()?, [8, 5, 5]); // columns
/// assert_eq!(a.amax_axis(1).to_vec()?, [5, 7]); // rows: an index works as an axis
/// assert_eq!(a.argmax_axis(1).to_vec()?, [1, 0]);
/// assert_eq!(a.argmin().item()?, 4); // a flat, row-major index
/// let both = a.reshape([1, 2, 3]).sum_axes(&[0, 2], true);
/// assert_eq!(both.shape(), [1, 2, 1]);
/// assert_eq!(both.to_vec()?, [8, 10]);
/// # Ok(())
/// # }
/// ```
impl<T: Numeric> Array<T> {
    reductions! {
        amin, amin_axis, amin_axes => Min, T, "Smallest element";
        amax, amax_axis, amax_axes => Max, T, "Largest element";
    }

    /// Flat (row-major) index of the first smallest element, as a lazy 0-d [`Index`]
    /// array (NaN ignored; 0 if all are NaN).
    #[track_caller]
    pub fn argmin(&self) -> Array<Index> {
        self.record_arg(ReduceOp::ArgMin, "argmin", None)
    }
    /// Flat (row-major) index of the first largest element, as a lazy 0-d [`Index`]
    /// array (NaN ignored; 0 if all are NaN).
    #[track_caller]
    pub fn argmax(&self) -> Array<Index> {
        self.record_arg(ReduceOp::ArgMax, "argmax", None)
    }
    /// Index along `axis` of the first smallest element (the axis is removed).
    #[track_caller]
    pub fn argmin_axis(&self, axis: impl AsAxis) -> Array<Index> {
        match self.axis_or_failed("argmin_axis", axis, false) {
            Ok(d) => self.record_arg(ReduceOp::ArgMin, "argmin_axis", Some(d)),
            Err(failed) => failed,
        }
    }
    /// Index along `axis` of the first largest element (the axis is removed).
    #[track_caller]
    pub fn argmax_axis(&self, axis: impl AsAxis) -> Array<Index> {
        match self.axis_or_failed("argmax_axis", axis, false) {
            Ok(d) => self.record_arg(ReduceOp::ArgMax, "argmax_axis", Some(d)),
            Err(failed) => failed,
        }
    }

    /// An arg reduction over `axis` (all axes, flat indices, when `None`) as [`Index`]
    /// positions: refused where a position could pass `Index::MAX`.
    #[track_caller]
    fn record_arg(&self, op: ReduceOp, name: &str, axis: Option<usize>) -> Array<Index> {
        let span = match axis {
            Some(d) => self.shape().get(d).copied().unwrap_or(1),
            None => self.node.numel(),
        };
        if span > Index::MAX as usize {
            let e = Error::TooLarge {
                op: name.into(),
                shape: self.shape().to_vec(),
                reason: format!("its positions pass {} (Index is u32)", Index::MAX),
            };
            let mut out = self.shape().to_vec();
            match axis {
                Some(d) => {
                    out.remove(d);
                }
                None => out.clear(),
            }
            return Array::failed(&self.node.ctx, out, e);
        }
        let axes = axis.map(|d| [d]);
        self.record_reduce::<Index>(op, axes.as_ref().map(|a| &a[..]), false)
    }
}

/// Sums and products, of every array with arithmetic (complex ones too).
impl<T: Arithmetic> Array<T> {
    reductions! {
        sum, sum_axis, sum_axes => Sum, T::Sum, "Sum (in [`Arithmetic::Sum`]'s type)";
        prod, prod_axis, prod_axes => Prod, T::Sum, "Product (in [`Arithmetic::Sum`]'s type)";
    }
}

/// Means, of float and complex arrays.
impl<T: Inexact> Array<T> {
    reductions! {
        mean, mean_axis, mean_axes => Mean, T, "Arithmetic mean";
    }
}

/// Reductions that need a floating-point result.
///
/// ```
/// # use lazycl::prelude::*;
/// # fn main() -> lazycl::Result<()> {
/// let ctx = Context::new()?;
/// let x = ctx.from_shape_slice([2, 2], &[3.0f32, 4.0, 0.0, 1.0])?;
/// assert_eq!(x.mean_axis(0).to_vec()?, [1.5, 2.5]);
/// // Centering reads the mean on the device: no host round trip between the passes.
/// let centered = &x - x.mean();
/// assert_eq!(centered.sum().item()?, 0.0);
/// assert!((x.slice(s![0, ..]).norm().item()? - 5.0).abs() < 1e-6);
/// # Ok(())
/// # }
/// ```
impl<T: Float> Array<T> {
    /// Euclidean norm of all elements, `sqrt(sum(x²))`, on the device.
    #[track_caller]
    pub fn norm(&self) -> Array<T> {
        (self * self).sum().sqrt()
    }
}
