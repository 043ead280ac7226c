//! Results assembled from several sources without copies: `concatenate`, `stack`,
//! `pad` and `tile`. Each is a lazy node ([`Region`]): every element of the result
//! reads the source whose range holds it, inside the kernel that consumes the result.
//! A concatenation of more than [`MAX_REGION_SOURCES`] arrays is a tree of region nodes
//! of at most that many sources each, which planning cuts into kernels of bounded size;
//! a tile of more copies is a periodic index map over the one source (a broadcast over
//! new axes, read in the result's shape), not a node per copy. Every result's size is
//! checked when it is recorded, before anything proportional to it is allocated.

use std::sync::Arc;

use ndarray::Axis;
use smallvec::SmallVec;

use crate::api::array::Array;
use crate::api::ops::{CtxRef, Operand};
use crate::api::views::AsAxis;
use crate::backend::context::ContextInner;
use crate::dtype::Element;
use crate::error::{Error, Result};
use crate::graph::view::{Region, MAX_REGION_SOURCES};
use crate::graph::{NodeRef, Op, Shape};
use crate::plan::MAX_ELEMENTS;

/// The arrays joined along `axis`, one after another (ndarray's `concatenate`): every
/// other axis must have the same length in all of them. Lazy: each element of the result
/// reads its source in the kernel that consumes it, and no array is copied. Any number of
/// arrays may be joined: more than 16 are concatenated in parts of at most 16 (a part
/// may be computed into memory of its own), so that every kernel stays small.
///
/// An empty list, arrays of other ranks or lengths, an axis out of range, arrays of two
/// contexts or a result too large to compute are an error, naming the shapes.
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
#[track_caller]
pub fn concatenate<T: Element>(axis: impl AsAxis, arrays: &[&Array<T>]) -> Result<Array<T>> {
    let axis = along("concatenate", axis.axis_value(), arrays, false)?;
    join("concatenate", axis, arrays)
}

/// The arrays, all of one shape, placed side by side along a new axis `axis`
/// (ndarray's `stack`): the result has one axis more. Lazy, as [`concatenate`].
#[track_caller]
pub fn stack<T: Element>(axis: impl AsAxis, arrays: &[&Array<T>]) -> Result<Array<T>> {
    let axis = along("stack", axis.axis_value(), arrays, true)?;
    let Some(first) = arrays.first() else {
        return Err(empty("stack", axis.index() as isize));
    };
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

/// `axis` as written (negative counts from the end) of the arrays' shape, for `op`; `new`
/// for the position of a new axis (`stack`).
#[track_caller]
fn along<T: Element>(op: &str, axis: isize, arrays: &[&Array<T>], new: bool) -> Result<Axis> {
    match arrays.first() {
        None => Err(empty(op, axis)),
        Some(first) => crate::api::views::resolve_axis(op, axis, first.shape(), new).map(Axis),
    }
}

#[track_caller]
fn empty(op: &str, axis: isize) -> Error {
    Error::InvalidView {
        op: format!("{op} along axis {axis}"),
        shape: Vec::new(),
        reason: "no arrays given".into(),
    }
}

#[track_caller]
fn join<T: Element>(op: &str, axis: Axis, arrays: &[&Array<T>]) -> Result<Array<T>> {
    let Some(first) = arrays.first() else {
        return Err(empty(op, axis.index() as isize));
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
    let mut length = 0usize;
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
        length = length.checked_add(a.shape()[d]).ok_or_else(|| Error::TooLarge {
            op: format!("{} of {} arrays", what(), arrays.len()),
            shape: first.shape().to_vec(),
            reason: format!("the result's length along axis {d} overflows usize"),
        })?;
    }
    if arrays.len() == 1 {
        return Ok((*first).clone());
    }
    let mut shape: Shape = first.node.shape.clone();
    shape[d] = length;
    let whole = || format!("{} of {} arrays like {:?}", what(), arrays.len(), first.shape());
    check_size::<T>(ctx, whole, &shape, false)?;
    // Concatenations of at most MAX_REGION_SOURCES sources, joined again level by level;
    // a source of length 0 along the axis adds nothing.
    let mut level: Vec<(NodeRef, usize)> = arrays
        .iter()
        .filter(|a| a.shape()[d] > 0)
        .map(|a| (a.node.clone(), a.shape()[d]))
        .collect();
    if level.is_empty() {
        return Ok((*first).clone());
    }
    while level.len() > 1 {
        level = level
            .chunks(MAX_REGION_SOURCES)
            .map(|part| concat_node::<T>(ctx, &shape, d, part))
            .collect();
    }
    Ok(Array::from_node(level.swap_remove(0).0))
}

/// One region node joining `parts` (each a node and its length along `axis`; more than
/// one) along `axis`, its other axes those of `shape`; or the node itself, alone.
#[track_caller]
fn concat_node<T: Element>(
    ctx: &Arc<ContextInner>,
    shape: &[usize],
    axis: usize,
    parts: &[(NodeRef, usize)],
) -> (NodeRef, usize) {
    if let [one] = parts {
        return one.clone();
    }
    let mut offsets: SmallVec<[usize; 4]> = smallvec::smallvec![0];
    for (_, n) in parts {
        // (Within the whole result's length, checked by the caller.)
        offsets.push(offsets[offsets.len() - 1] + n);
    }
    let length = offsets[offsets.len() - 1];
    let mut part_shape: Shape = shape.into();
    part_shape[axis] = length;
    let sources: SmallVec<[NodeRef; 4]> = parts.iter().map(|(n, _)| n.clone()).collect();
    let region = Region::Concat { axis, offsets };
    let node = Array::<T>::lazy(ctx, part_shape, Op::Region(Arc::new(region), sources)).node;
    (node, length)
}

/// `Ok` if a result of `shape` recorded by `op` can be computed: at most
/// [`MAX_ELEMENTS`] elements and, where it is computed into memory of its own
/// (`whole`) on a device of one context, no more bytes than one allocation may have.
/// (A fused result is read where it is consumed; materializing it checks its size then.)
#[track_caller]
fn check_size<T: Element>(
    ctx: &ContextInner,
    op: impl FnOnce() -> String,
    shape: &[usize],
    whole: bool,
) -> Result<()> {
    let too_large = |reason: String| Error::TooLarge {
        op: op(),
        shape: shape.to_vec(),
        reason,
    };
    let n = shape.iter().try_fold(1u64, |acc, &d| acc.checked_mul(d as u64));
    let n = match n {
        Some(n) if n <= MAX_ELEMENTS => n,
        _ => {
            return Err(too_large(format!(
                "{} elements; a computed array may have at most 2^48 = {MAX_ELEMENTS}",
                n.map_or("more than 2^64".to_string(), |n| n.to_string())
            )))
        }
    };
    let bytes = n * T::DTYPE.size() as u64;
    let limit = ctx.cl.device.max_alloc_bytes;
    if whole && ctx.multi.is_none() && bytes > limit {
        return Err(too_large(format!(
            "{n} elements of {} bytes are {bytes} bytes; the device allocates at most {limit} bytes \
             at once (CL_DEVICE_MAX_MEM_ALLOC_SIZE)",
            T::DTYPE.size()
        )));
    }
    Ok(())
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
    #[track_caller]
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
        let op = || format!("pad by {widths:?}");
        let shape: Option<Shape> = self
            .shape()
            .iter()
            .zip(widths)
            .map(|(&n, &(b, a))| n.checked_add(b)?.checked_add(a))
            .collect();
        let checked = match shape {
            Some(shape) => check_size::<T>(&self.node.ctx, op, &shape, false).map(|()| shape),
            None => Err(Error::TooLarge {
                op: op(),
                shape: self.shape().to_vec(),
                reason: "a length of the result overflows usize".into(),
            }),
        };
        let shape = match checked {
            Ok(shape) => shape,
            Err(e) => return Array::failed(&self.node.ctx, self.node.shape.clone(), e),
        };
        let fill = value.into_array(CtxRef(&self.node.ctx));
        let region = Region::Pad {
            before: widths.iter().map(|w| w.0).collect(),
        };
        let sources: SmallVec<[NodeRef; 4]> = smallvec::smallvec![self.node.clone(), fill.node];
        Array::lazy(&self.node.ctx, shape, Op::Region(Arc::new(region), sources))
    }

    /// `self` repeated `reps[d]` times along each axis `d` (numpy's `tile`; `reps` may be
    /// shorter than the rank: leading axes are repeated once). Lazy: up to 16 copies in
    /// all are a concatenation of `self` with itself,
    /// read where it is consumed; more are a periodic index map over `self` (a broadcast
    /// over new axes, computed into memory of its own in the consumer's flush and read
    /// in the result's shape), so any number of copies costs one pass over the result.
    ///
    /// More repetitions than the rank, or a result too large to compute (its element
    /// count overflowing, or more bytes than the device allocates at once), are an error
    /// reported when materialized, naming `reps` and the shapes.
    #[track_caller]
    pub fn tile(&self, reps: &[usize]) -> Array<T> {
        let rank = self.ndim();
        let at = std::panic::Location::caller();
        let fail = |e: Error| Array::failed(&self.node.ctx, self.node.shape.clone(), e.recorded_at(at));
        if self.node.failed {
            return self.clone();
        }
        if reps.len() > rank {
            return fail(Error::InvalidView {
                op: format!("tile by {reps:?}"),
                shape: self.shape().to_vec(),
                reason: format!("{} repetitions for {rank} axes", reps.len()),
            });
        }
        let op = || format!("tile by {reps:?} of an array of shape {:?}", self.shape());
        // Every axis's repetitions (leading axes once), and the result's shape.
        let all: SmallVec<[usize; 4]> = std::iter::repeat_n(1, rank - reps.len())
            .chain(reps.iter().copied())
            .collect();
        let Some(shape) = self
            .shape()
            .iter()
            .zip(&all)
            .map(|(&n, &r)| n.checked_mul(r))
            .collect::<Option<Shape>>()
        else {
            return fail(Error::TooLarge {
                op: op(),
                shape: self.shape().to_vec(),
                reason: "a length of the result overflows usize".into(),
            });
        };
        let copies = all.iter().try_fold(1usize, |acc, &r| acc.checked_mul(r));
        if copies.is_some_and(|c| c <= MAX_REGION_SOURCES) {
            return self.tile_by_joins(&all);
        }
        if let Err(e) = check_size::<T>(&self.node.ctx, op, &shape, true) {
            return fail(e);
        }
        if shape.contains(&0) {
            return T::default()
                .into_array(CtxRef(&self.node.ctx))
                .broadcast_to(&shape);
        }
        // Result coordinate `r * n + i` along an axis of length `n` repeated `r` times is
        // `self`'s `i`: `self` broadcast to `[r0, n0, r1, n1, ..]`, read row-major as
        // `[r0 * n0, r1 * n1, ..]`.
        let interleaved = |k: usize| -> Shape {
            self.shape()
                .iter()
                .zip(&all)
                .flat_map(|(&n, &r)| [if k == 0 { 1 } else { r }, n])
                .collect()
        };
        self.reshape(&interleaved(0)[..])
            .broadcast_to(&interleaved(1))
            .reshape(&shape[..])
    }

    /// [`tile`](Self::tile) as concatenations of `self` with itself (`all`: each axis's
    /// repetitions; at most [`MAX_REGION_SOURCES`] copies in all).
    #[track_caller]
    fn tile_by_joins(&self, all: &[usize]) -> Array<T> {
        let rank = self.ndim();
        let mut out = self.clone();
        for (d, &r) in all.iter().enumerate() {
            if r == 1 {
                continue;
            }
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
#[track_caller]
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
