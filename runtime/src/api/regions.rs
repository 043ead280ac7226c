//! Results assembled from several sources without copies: `concatenate`, `stack`,
//! `pad` and `tile`. Each is one lazy node ([`Region`]): every element of the result
//! reads the source whose range holds it, inside the kernel that consumes the result.

use std::sync::Arc;

use ndarray::Axis;
use smallvec::SmallVec;

use crate::api::array::Array;
use crate::api::ops::{CtxRef, Operand};
use crate::api::views::AsAxis;
use crate::dtype::Element;
use crate::error::{Error, Result};
use crate::graph::view::Region;
use crate::graph::{NodeRef, Op, Shape};

/// The arrays joined along `axis`, one after another (ndarray's `concatenate`): every
/// other axis must have the same length in all of them. Lazy: each element of the result
/// reads its source in the kernel that consumes it, and no array is copied.
///
/// An empty list, arrays of other ranks or lengths, an axis out of range or arrays of two
/// contexts are an error, naming the shapes.
///
/// ```
/// # use lazycl::prelude::*;
/// # fn main() -> lazycl::Result<()> {
/// let ctx = Context::new()?;
/// let a = ctx.from_shape_slice([2, 2], &[1, 2, 3, 4])?;
/// let b = ctx.from_shape_slice([1, 2], &[5, 6])?;
/// let ab = lazycl::concatenate(Axis(0), &[&a, &b])?;
/// assert_eq!(ab.shape(), [3, 2]);
/// assert_eq!(ab.to_vec()?, [1, 2, 3, 4, 5, 6]);
/// let side = lazycl::stack(Axis(1), &[&a.slice(s![0, ..]), &b.slice(s![0, ..])])?;
/// assert_eq!(side.to_vec()?, [1, 5, 2, 6]); // shape [2, 2]
/// # Ok(())
/// # }
/// ```
pub fn concatenate<T: Element>(axis: impl AsAxis, arrays: &[&Array<T>]) -> Result<Array<T>> {
    join("concatenate", Axis(axis.axis_index()), arrays)
}

/// The arrays, all of one shape, placed side by side along a new axis `axis`
/// (ndarray's `stack`): the result has one axis more. Lazy, as [`concatenate`].
pub fn stack<T: Element>(axis: impl AsAxis, arrays: &[&Array<T>]) -> Result<Array<T>> {
    let axis = Axis(axis.axis_index());
    let Some(first) = arrays.first() else {
        return Err(empty("stack", axis));
    };
    if axis.index() > first.ndim() {
        return Err(Error::InvalidView {
            op: format!("stack along Axis({})", axis.index()),
            shape: first.shape().to_vec(),
            reason: format!("the result has {} axes", first.ndim() + 1),
        });
    }
    for a in arrays {
        if a.shape() != first.shape() {
            return Err(Error::ShapeMismatch {
                op: format!("stack along Axis({})", axis.index()),
                left: first.shape().to_vec(),
                right: a.shape().to_vec(),
                why: "differ: stacked arrays must have one shape".into(),
            });
        }
    }
    let lifted: Vec<Array<T>> = arrays.iter().map(|a| a.insert_axis(axis)).collect();
    let refs: Vec<&Array<T>> = lifted.iter().collect();
    join("stack", axis, &refs)
}

fn empty(op: &str, axis: Axis) -> Error {
    Error::InvalidView {
        op: format!("{op} along Axis({})", axis.index()),
        shape: Vec::new(),
        reason: "no arrays given".into(),
    }
}

fn join<T: Element>(op: &str, axis: Axis, arrays: &[&Array<T>]) -> Result<Array<T>> {
    let Some(first) = arrays.first() else {
        return Err(empty(op, axis));
    };
    let d = axis.index();
    let what = || format!("{op} along Axis({d})");
    if d >= first.ndim() {
        return Err(Error::InvalidView {
            op: what(),
            shape: first.shape().to_vec(),
            reason: format!("axis {d} of an array with {} axes", first.ndim()),
        });
    }
    let ctx = &first.node.ctx;
    let mut offsets: SmallVec<[usize; 4]> = smallvec::smallvec![0];
    for a in arrays {
        ctx.tag.check(&a.node.ctx.tag, what, || {
            format!("an array of shape {:?}", a.shape())
        })?;
        let same_elsewhere =
            a.ndim() == first.ndim() && (0..first.ndim()).all(|k| k == d || a.shape()[k] == first.shape()[k]);
        if !same_elsewhere {
            return Err(Error::ShapeMismatch {
                op: what(),
                left: first.shape().to_vec(),
                right: a.shape().to_vec(),
                why: format!("differ outside axis {d}, the axis they are joined along"),
            });
        }
        if let Some(e) = a.recording_error() {
            return Err(e);
        }
        let end = offsets[offsets.len() - 1] + a.shape()[d];
        offsets.push(end);
    }
    if arrays.len() == 1 {
        return Ok((*first).clone());
    }
    let mut shape: Shape = first.node.shape.clone();
    shape[d] = offsets[offsets.len() - 1];
    let sources: SmallVec<[NodeRef; 4]> = arrays.iter().map(|a| a.node.clone()).collect();
    let region = Region::Concat { axis: d, offsets };
    Ok(Array::lazy(ctx, shape, Op::Region(Arc::new(region), sources)))
}

impl<T: Element> Array<T> {
    /// `self` surrounded by `value`: `widths[d] = (before, after)` elements along each
    /// axis `d` (numpy's `pad` with a constant). Lazy, no copy: each element of the
    /// result reads `self` or takes `value` in the kernel that consumes it.
    ///
    /// A `widths` of another length than the rank is an error (reported when
    /// materialized).
    ///
    /// ```
    /// # use lazycl::prelude::*;
    /// # fn main() -> lazycl::Result<()> {
    /// let ctx = Context::new()?;
    /// let a = ctx.from_slice(&[1.0f32, 2.0])?;
    /// assert_eq!(a.pad(&[(1, 2)], 0.0).to_vec()?, [0.0, 1.0, 2.0, 0.0, 0.0]);
    /// assert_eq!(a.tile(&[3]).to_vec()?, [1.0, 2.0, 1.0, 2.0, 1.0, 2.0]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn pad(&self, widths: &[(usize, usize)], value: T) -> Array<T> {
        if self.node.failed {
            return self.clone();
        }
        if widths.len() != self.ndim() {
            let e = Error::InvalidView {
                op: format!("pad by {widths:?}"),
                shape: self.shape().to_vec(),
                reason: format!("{} widths for {} axes", widths.len(), self.ndim()),
            };
            return Array::failed(&self.node.ctx, self.node.shape.clone(), e);
        }
        if widths.iter().all(|&(b, a)| b == 0 && a == 0) {
            return self.clone();
        }
        let shape: Shape = self
            .shape()
            .iter()
            .zip(widths)
            .map(|(&n, &(b, a))| n.saturating_add(b).saturating_add(a))
            .collect();
        let fill = value.into_array(CtxRef(&self.node.ctx));
        let region = Region::Pad {
            before: widths.iter().map(|w| w.0).collect(),
        };
        let sources: SmallVec<[NodeRef; 4]> = smallvec::smallvec![self.node.clone(), fill.node];
        Array::lazy(&self.node.ctx, shape, Op::Region(Arc::new(region), sources))
    }

    /// `self` repeated `reps[d]` times along each axis `d` (numpy's `tile`; `reps` may be
    /// shorter than the rank: leading axes are repeated once). Lazy: a concatenation of
    /// `self` with itself, no copy.
    pub fn tile(&self, reps: &[usize]) -> Array<T> {
        let rank = self.ndim();
        if reps.len() > rank {
            let e = Error::InvalidView {
                op: format!("tile by {reps:?}"),
                shape: self.shape().to_vec(),
                reason: format!("{} repetitions for {rank} axes", reps.len()),
            };
            return Array::failed(&self.node.ctx, self.node.shape.clone(), e);
        }
        let mut out = self.clone();
        for (k, &r) in reps.iter().enumerate() {
            let d = rank - reps.len() + k;
            let copies: Vec<&Array<T>> = std::iter::repeat_n(&out, r).collect();
            out = match copies.is_empty() {
                true => out.slice(empty_axis(rank, d)),
                false => match join("tile", Axis(d), &copies) {
                    Ok(a) => a,
                    Err(e) => return Array::failed(&self.node.ctx, self.node.shape.clone(), e),
                },
            };
        }
        out
    }
}

/// `s![.., 0..0, ..]` on axis `d` of a rank-`rank` array.
fn empty_axis(rank: usize, d: usize) -> Vec<ndarray::SliceInfoElem> {
    (0..rank)
        .map(|k| {
            if k == d {
                ndarray::SliceInfoElem::Slice {
                    start: 0,
                    end: Some(0),
                    step: 1,
                }
            } else {
                ndarray::SliceInfoElem::from(..)
            }
        })
        .collect()
}
