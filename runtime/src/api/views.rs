//! Views: slicing, transposes and axis operations, recorded as index maps
//! ([`ViewMap`]) that planning folds into the loads of the kernels reading them. Nothing
//! here copies or touches the device; a bad slice or axis is recorded in the result and
//! reported, naming the operation and the shape, by the next call that materializes it.
//! Names and semantics follow ndarray (`slice` with `s![]`, negative steps counted from
//! the end of the sliced range, `Axis`), then numpy (`flip`, `squeeze`, `pad`).

use ndarray::{Axis, SliceInfoElem};
use smallvec::SmallVec;

use crate::api::array::Array;
use crate::dtype::Element;
use crate::error::Error;
use crate::graph::shape::{checked_numel, IntoShape};
use crate::graph::view::{SourceAxis, ViewMap};
use crate::graph::{Op, Shape};

/// An axis argument: ndarray's [`Axis`], a plain index, or a negative index counting from
/// the end as numpy's axes do (`-1` is the last axis): `sum_axis(Axis(1))`, `sum_axis(1)`
/// and, on a 2-d array, `sum_axis(-1)` mean the same. An axis out of range is an error
/// naming the operation, the axis as written and the array's shape.
pub trait AsAxis: Copy {
    /// The axis as written: an index from the front, or a negative one from the end.
    fn axis_value(self) -> isize;
}

impl AsAxis for Axis {
    #[track_caller]
    fn axis_value(self) -> isize {
        isize::try_from(self.index()).unwrap_or(isize::MAX)
    }
}

impl AsAxis for usize {
    #[track_caller]
    fn axis_value(self) -> isize {
        isize::try_from(self).unwrap_or(isize::MAX)
    }
}

impl AsAxis for isize {
    #[track_caller]
    fn axis_value(self) -> isize {
        self
    }
}

impl AsAxis for i32 {
    #[track_caller]
    fn axis_value(self) -> isize {
        self as isize
    }
}

impl AsAxis for i64 {
    #[track_caller]
    fn axis_value(self) -> isize {
        isize::try_from(self).unwrap_or(if self < 0 { isize::MIN } else { isize::MAX })
    }
}

/// Several axes: a slice, array or `Vec` of [`Axis`], plain indices or negative ones
/// (`sum_axes(&[Axis(0), Axis(2)], false)`, `sum_axes(&[0, 2], false)` and, on a 3-d
/// array, `sum_axes(&[0, -1], false)` mean the same).
pub trait AsAxes {
    /// The axes as written, in the order given.
    fn axis_values(&self) -> SmallVec<[isize; 4]>;
}

impl<A: AsAxis> AsAxes for [A] {
    #[track_caller]
    fn axis_values(&self) -> SmallVec<[isize; 4]> {
        self.iter().map(|a| a.axis_value()).collect()
    }
}

impl<A: AsAxis, const N: usize> AsAxes for [A; N] {
    #[track_caller]
    fn axis_values(&self) -> SmallVec<[isize; 4]> {
        self.as_slice().axis_values()
    }
}

impl<A: AsAxis> AsAxes for Vec<A> {
    #[track_caller]
    fn axis_values(&self) -> SmallVec<[isize; 4]> {
        self.as_slice().axis_values()
    }
}

/// `axis` (as written: negative counts from the end) of an array of shape `shape`; `new`
/// when it names a position for a new axis (`insert_axis`, `stack`: one more than the
/// rank). When it is out of range, the reason, naming the axis and the shape.
#[track_caller]
fn axis_in(axis: isize, shape: &[usize], new: bool) -> std::result::Result<usize, String> {
    let rank = shape.len() as isize + isize::from(new);
    let d = if axis < 0 { axis.saturating_add(rank) } else { axis };
    if (0..rank).contains(&d) {
        return Ok(d as usize);
    }
    let what = if new { "a new axis of an array" } else { "an array" };
    Err(format!(
        "axis {axis} is out of range for {what} of shape {shape:?} (axes {} to {}; negative axes count from the end)",
        -rank,
        rank - 1
    ))
}

/// [`axis_in`], out of range an [`Error::InvalidShape`] naming operation `op`.
#[track_caller]
pub(crate) fn resolve_axis(op: &str, axis: isize, shape: &[usize], new: bool) -> crate::error::Result<usize> {
    axis_in(axis, shape, new).map_err(|reason| Error::InvalidShape(format!("{op}: {reason}")))
}

impl<T: Element> Array<T> {
    /// [`resolve_axis`] against this array's shape; a recorded failure (an array of
    /// element type `U`, the operation's result) when it is out of range.
    #[track_caller]
    pub(crate) fn axis_or_failed<U: Element>(
        &self,
        op: &str,
        axis: impl AsAxis,
        new: bool,
    ) -> std::result::Result<usize, Array<U>> {
        // (A match, not `map_err`: a closure would record its own line, not the caller's.)
        match resolve_axis(op, axis.axis_value(), self.shape(), new) {
            Ok(d) => Ok(d),
            Err(e) => Err(Array::failed(&self.node.ctx, self.shape().to_vec(), e)),
        }
    }

    /// [`axis_in`] for view `op`: out of range, a failed view ([`Error::InvalidView`]).
    #[track_caller]
    fn view_axis(&self, op: &str, axis: impl AsAxis, new: bool) -> std::result::Result<usize, Array<T>> {
        match axis_in(axis.axis_value(), self.shape(), new) {
            Ok(d) => Ok(d),
            Err(reason) => Err(self.view_error(op, reason)),
        }
    }
}

/// A slice of one axis, resolved against its length: `len` elements from `first`, every
/// `step`-th (ndarray's semantics: a negative step walks the range `start..end` from its
/// end).
struct AxisSlice {
    first: isize,
    step: isize,
    len: usize,
}

/// Resolves ndarray's `Slice { start, end, step }` on an axis of `len` elements.
#[track_caller]
fn resolve_slice(len: usize, start: isize, end: Option<isize>, step: isize) -> Result<AxisSlice, String> {
    if step == 0 {
        return Err("a step of 0".into());
    }
    let abs = |i: isize| if i < 0 { len as isize + i } else { i };
    let (lo, hi) = (abs(start), abs(end.unwrap_or(len as isize)));
    if lo < 0 || lo > len as isize {
        return Err(format!("start {start} is outside an axis of length {len}"));
    }
    if hi < 0 || hi > len as isize {
        return Err(format!(
            "end {} is outside an axis of length {len}",
            end.unwrap_or(0)
        ));
    }
    let span = (hi - lo).max(0) as usize;
    let n = span.div_ceil(step.unsigned_abs());
    let first = if step > 0 || n == 0 { lo } else { hi - 1 };
    Ok(AxisSlice { first, step, len: n })
}

impl<T: Element> Array<T> {
    /// A view of `self` through `map` with shape `shape` (the source itself when the map
    /// reads it element for element; maps of views compose, so the result reads the
    /// original array directly).
    #[track_caller]
    pub(crate) fn view(&self, map: ViewMap, shape: Shape) -> Array<T> {
        Array::from_node(self.node.view(map, shape))
    }

    /// `self` with a recording error of operation `op`.
    #[track_caller]
    fn view_error(&self, op: &str, reason: impl Into<String>) -> Array<T> {
        let e = Error::InvalidView {
            op: op.to_string(),
            shape: self.shape().to_vec(),
            reason: reason.into(),
        };
        Array::failed(&self.node.ctx, self.node.shape.clone(), e)
    }

    /// A view of a region, with ndarray's `s![]`: ranges with steps (`s![1..-1, ..;2]`;
    /// negative indices count from the end, a negative step walks the range backwards),
    /// single indices (`s![.., 3]` drops the axis) and `NewAxis`. Axes not named are taken
    /// whole. Lazy and free: the view is read in place by the kernels that use it.
    ///
    /// An index or range outside an axis, a step of 0 or more entries than axes is an
    /// error (`Error::InvalidView`), reported when the result is materialized.
    ///
    /// ```
    /// # use lazycl::prelude::*;
    /// # fn main() -> lazycl::Result<()> {
    /// let ctx = Context::new()?;
    /// let a = ctx.from_shape_slice([3, 4], &(0..12).collect::<Vec<i32>>())?;
    /// // [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]
    /// assert_eq!(a.slice(s![1.., ..;2]).to_vec()?, [4, 6, 8, 10]);
    /// assert_eq!(a.slice(s![-1, ..;-1]).to_vec()?, [11, 10, 9, 8]); // last row, reversed
    /// assert_eq!(a.slice(s![.., 1, NewAxis]).shape(), [3, 1]);
    /// // Views of lazy arrays are read where they are consumed: a stencil in one kernel.
    /// let sq = &a * &a;
    /// let diff = &sq.slice(s![.., 1..]) - &sq.slice(s![.., ..-1]);
    /// assert_eq!(diff.slice(s![0, ..]).to_vec()?, [1, 3, 5]);
    /// # Ok(())
    /// # }
    /// ```
    #[track_caller]
    pub fn slice(&self, info: impl AsRef<[SliceInfoElem]>) -> Array<T> {
        let info = info.as_ref();
        let rank = self.ndim();
        let named = info
            .iter()
            .filter(|e| !matches!(e, SliceInfoElem::NewAxis))
            .count();
        if named > rank {
            return self.view_error("slice", format!("{named} axes sliced, the array has {rank}"));
        }
        let mut axes: SmallVec<[SourceAxis; 4]> = SmallVec::new();
        let mut shape = Shape::new();
        let whole = std::iter::repeat(SliceInfoElem::Slice {
            start: 0,
            end: None,
            step: 1,
        });
        for elem in info.iter().copied().chain(whole.take(rank - named)) {
            let d = axes.len();
            match elem {
                SliceInfoElem::NewAxis => shape.push(1),
                SliceInfoElem::Index(i) => {
                    let len = self.shape()[d] as isize;
                    let at = if i < 0 { len + i } else { i };
                    if at < 0 || at >= len {
                        return self.view_error("slice", format!("index {i} of axis {d} (length {len})"));
                    }
                    axes.push(SourceAxis {
                        from: None,
                        start: at,
                        step: 1,
                    });
                }
                SliceInfoElem::Slice { start, end, step } => {
                    let s = match resolve_slice(self.shape()[d], start, end, step) {
                        Ok(s) => s,
                        Err(reason) => return self.view_error("slice", format!("axis {d}: {reason}")),
                    };
                    axes.push(SourceAxis {
                        from: Some(shape.len()),
                        start: s.first,
                        step: s.step,
                    });
                    shape.push(s.len);
                }
            }
        }
        self.view(ViewMap { axes }, shape)
    }

    /// The axes in the order `axes` gives (`axes[i]` is the source axis of the result's
    /// axis `i`): `permuted_axes([2, 0, 1])`. Lazy, no copy. Not a permutation of
    /// `0..ndim`: an error reported when the result is materialized.
    ///
    /// ```
    /// # use lazycl::prelude::*;
    /// # fn main() -> lazycl::Result<()> {
    /// let ctx = Context::new()?;
    /// let a = ctx.from_shape_slice([2, 3], &[1, 2, 3, 4, 5, 6])?;
    /// assert_eq!(a.t().to_vec()?, [1, 4, 2, 5, 3, 6]); // the transpose, read in place
    /// let b = a.reshape([1, 2, 3]).permuted_axes([2, 0, 1]);
    /// assert_eq!(b.shape(), [3, 1, 2]);
    /// assert_eq!(b.flip(0).to_vec()?, [3, 6, 2, 5, 1, 4]);
    /// # Ok(())
    /// # }
    /// ```
    #[track_caller]
    pub fn permuted_axes(&self, axes: impl AsRef<[usize]>) -> Array<T> {
        let order = axes.as_ref();
        let rank = self.ndim();
        let mut seen = vec![false; rank];
        let valid = order.len() == rank
            && order
                .iter()
                .all(|&a| a < rank && !std::mem::replace(&mut seen[a], true));
        if !valid {
            return self.view_error(
                "permuted_axes",
                format!("{order:?} is not a permutation of 0..{rank}"),
            );
        }
        let mut map = ViewMap::identity(rank);
        for (to, &from) in order.iter().enumerate() {
            map.axes[from].from = Some(to);
        }
        let shape = order.iter().map(|&a| self.shape()[a]).collect();
        self.view(map, shape)
    }

    /// The axes in reverse order (the transpose of a matrix). Lazy, no copy.
    #[track_caller]
    pub fn reversed_axes(&self) -> Array<T> {
        let order: Vec<usize> = (0..self.ndim()).rev().collect();
        self.permuted_axes(order)
    }

    /// The transpose: [`reversed_axes`](Array::reversed_axes), as ndarray's `t()`.
    #[track_caller]
    pub fn t(&self) -> Array<T> {
        self.reversed_axes()
    }

    /// A new array with axes `a` and `b` exchanged (ndarray's `swap_axes` swaps in
    /// place; this returns the view; negative axes count from the end, as numpy's
    /// `swapaxes`). Lazy, no copy.
    #[track_caller]
    pub fn swap_axes(&self, a: impl AsAxis, b: impl AsAxis) -> Array<T> {
        let rank = self.ndim();
        let (a, b) = match (
            self.view_axis("swap_axes", a, false),
            self.view_axis("swap_axes", b, false),
        ) {
            (Ok(a), Ok(b)) => (a, b),
            (Err(failed), _) | (_, Err(failed)) => return failed,
        };
        let mut order: Vec<usize> = (0..rank).collect();
        order.swap(a, b);
        self.permuted_axes(order)
    }

    /// The elements along `axis` in reverse order (numpy's `flip`; ndarray's
    /// `invert_axis` in place). Lazy, no copy.
    #[track_caller]
    pub fn flip(&self, axis: impl AsAxis) -> Array<T> {
        let d = match self.view_axis("flip", axis, false) {
            Ok(d) => d,
            Err(failed) => return failed,
        };
        let mut map = ViewMap::identity(self.ndim());
        let len = self.shape()[d] as isize;
        map.axes[d].start = (len - 1).max(0);
        map.axes[d].step = -1;
        self.view(map, self.node.shape.clone())
    }

    /// A new axis of length 1 at `axis` (`r.insert_axis(Axis(1))` has shape `[n, 1]`).
    /// Lazy: records a view, never touches the device.
    ///
    /// ```
    /// # use lazycl::prelude::*;
    /// # fn main() -> lazycl::Result<()> {
    /// let ctx = Context::new()?;
    /// let r = ctx.from_slice(&[1.0f32, 2.0, 3.0])?;
    /// let c = ctx.from_slice(&[10.0f32, 20.0])?;
    /// let outer = &c.insert_axis(Axis(1)) * &r; // [2, 1] * [3] → [2, 3]
    /// assert_eq!(outer.to_vec()?, [10.0, 20.0, 30.0, 20.0, 40.0, 60.0]);
    /// assert_eq!(outer.index_axis(Axis(1), 2).to_vec()?, [30.0, 60.0]);
    /// assert_eq!(r.broadcast_to(&[2, 3]).sum_axis(0).to_vec()?, [2.0, 4.0, 6.0]);
    /// # Ok(())
    /// # }
    /// ```
    #[track_caller]
    pub fn insert_axis(&self, axis: impl AsAxis) -> Array<T> {
        let d = match self.view_axis("insert_axis", axis, true) {
            Ok(d) => d,
            Err(failed) => return failed,
        };
        let mut info: Vec<SliceInfoElem> = vec![SliceInfoElem::from(..); self.ndim()];
        info.insert(d, SliceInfoElem::NewAxis);
        self.slice(info)
    }

    /// The sub-array at index 0 of `axis`, without that axis (ndarray's `remove_axis`,
    /// meant for axes of length 1). An empty axis or one out of range is an error.
    #[track_caller]
    pub fn remove_axis(&self, axis: impl AsAxis) -> Array<T> {
        self.index_axis_named("remove_axis", axis, 0)
    }

    /// The sub-array at `index` along `axis`, without that axis (ndarray's
    /// `index_axis`). Lazy, no copy.
    #[track_caller]
    pub fn index_axis(&self, axis: impl AsAxis, index: usize) -> Array<T> {
        self.index_axis_named("index_axis", axis, index)
    }

    #[track_caller]
    fn index_axis_named(&self, op: &str, axis: impl AsAxis, index: usize) -> Array<T> {
        let d = match self.view_axis(op, axis, false) {
            Ok(d) => d,
            Err(failed) => return failed,
        };
        if index >= self.shape()[d] {
            return self.view_error(op, format!("index {index} of axis {d}"));
        }
        let mut info: Vec<SliceInfoElem> = vec![SliceInfoElem::from(..); self.ndim()];
        info[d] = SliceInfoElem::Index(index as isize);
        self.slice(info)
    }

    /// Every axis of length 1 removed (numpy's `squeeze`). Lazy, no copy.
    #[track_caller]
    pub fn squeeze(&self) -> Array<T> {
        let info: Vec<SliceInfoElem> = self
            .shape()
            .iter()
            .map(|&n| {
                if n == 1 {
                    SliceInfoElem::Index(0)
                } else {
                    SliceInfoElem::from(..)
                }
            })
            .collect();
        self.slice(info)
    }
}

impl<T: Element> Array<T> {
    /// The same elements in row-major order with another shape of equal size. Lazy: a
    /// reshape that only adds or removes axes of length 1 is a view; any other reads the
    /// array's memory in its new shape, after computing it (or, for a view, gathering it
    /// into memory of its own) in the same flush — never a round trip through the host.
    /// A size mismatch is an error reported when the result is materialized.
    ///
    /// ```
    /// # use lazycl::prelude::*;
    /// # fn main() -> lazycl::Result<()> {
    /// let ctx = Context::new()?;
    /// let a = ctx.from_slice(&[1u32, 2, 3, 4, 5, 6])?;
    /// let m = a.reshape([2, 3]);
    /// assert_eq!(m.sum_axis(1).to_vec()?, [6, 15]);
    /// assert_eq!(m.t().reshape(6).to_vec()?, [1, 4, 2, 5, 3, 6]); // a view, gathered
    /// assert!(a.reshape([4, 2]).eval().is_err()); // 6 elements do not fill [4, 2]
    /// # Ok(())
    /// # }
    /// ```
    #[track_caller]
    pub fn reshape(&self, shape: impl IntoShape) -> Array<T> {
        let shape: Shape = shape.into_shape().into_iter().collect();
        if self.node.failed {
            return self.clone();
        }
        match checked_numel(&shape) {
            Ok(n) if n == self.len() => {}
            _ => {
                let e = Error::InvalidView {
                    op: format!("reshape to {:?}", &shape[..]),
                    shape: self.shape().to_vec(),
                    reason: "the element counts differ".into(),
                };
                return Array::failed(&self.node.ctx, shape, e);
            }
        }
        let unit = |s: &[usize]| s.iter().copied().filter(|&d| d != 1).collect::<Vec<_>>();
        if unit(&shape) == unit(self.shape()) {
            // Only axes of length 1 move: a view reading each source axis of length > 1
            // from the same-sized axis of the result, in order.
            let mut to = (0..shape.len()).filter(|&k| shape[k] != 1);
            let axes = self
                .shape()
                .iter()
                .map(|&n| SourceAxis {
                    from: if n == 1 { None } else { to.next() },
                    start: 0,
                    step: 1,
                })
                .collect();
            return self.view(ViewMap { axes }, shape);
        }
        if let (Some(buffer), Some(origin)) = (self.node.buffer(), self.node.origin()) {
            // The same memory, read in the new shape; a gradient reaches this array's
            // source through the reshape it keeps (which holds no memory of its own).
            let reshaped = Array::ready(&self.node.ctx, shape, buffer, origin);
            reshaped.node.keep_recipe(Op::Reshape(self.node.clone()));
            return reshaped;
        }
        Array::lazy(&self.node.ctx, shape, Op::Reshape(self.node.clone()))
    }
}
