//! Sorting: `sort`, `argsort` (numpy's names; ndarray has none) and `sort_by_key`, along
//! the last axis or any axis; `api::topk` takes a sort's first `k` where it does not
//! select them. A sort is a stable radix sort on the device (`plan::sort`): equal
//! keys keep their order, integers sort by value, floats too with `-0.0` before `+0.0`
//! and every NaN last (first in descending order).
//!
//! A sort evaluates its operand when called (enqueued, never waited on) and returns
//! arrays already computed on the device; a sort along another axis than the last sorts a
//! contiguous copy with that axis last and returns a view of the result in the operand's
//! order.

use std::sync::Arc;

use crate::api::array::Array;
use crate::api::views::AsAxis;
use crate::backend::buffer::DeviceBuffer;
use crate::dtype::{Element, Index, Numeric};
use crate::error::{Error, Result};
use crate::exec::sort::{sort_rows, Sorted};
use crate::graph::{NodeRef, Op, Origin, State, TakeSpec};
use crate::plan::sort::{sort_plan, Order, Payload, SortLimit};
use ndarray::SliceInfoElem;

/// Keys sorted along the last axis and the values moved with them ([`sort_by_key`]).
pub struct SortedByKey<K: Numeric, V: Element> {
    /// The keys, sorted.
    pub keys: Array<K>,
    /// The values, in the keys' new order.
    pub values: Array<V>,
}

/// A one-dimensional array sorted and the positions that sort it
/// ([`Array::sort_with_positions`]).
pub(crate) struct SortedPositions<T: Numeric> {
    /// The elements, sorted.
    pub(crate) keys: Array<T>,
    /// Where each sorted element was.
    pub(crate) positions: Array<Index>,
}

/// What a sort is asked for.
#[derive(Clone, Copy)]
pub(super) struct Request<'a> {
    /// The user's operation, as errors name it.
    pub(super) op: &'a str,
    pub(super) axis: usize,
    pub(super) order: Order,
    pub(super) payload: Payload,
    pub(super) keys_out: bool,
}

/// The arrays a sort made, in the operand's axis order.
pub(super) struct Made<T: Element> {
    pub(super) keys: Option<Array<T>>,
    /// The payload's buffer, in the sorted order (the axis last).
    pub(super) payload: Option<Arc<DeviceBuffer>>,
}

impl<T: Numeric> Array<T> {
    /// This array sorted along its last axis, each row independently (numpy's
    /// `np.sort(a)`): stable, NaN last.
    ///
    /// ```
    /// # use lazycl::prelude::*;
    /// # fn main() -> lazycl::Result<()> {
    /// let ctx = Context::new()?;
    /// let a = ctx.from_shape_slice([2, 3], &[3.0f32, -1.0, f32::NAN, 2.0, 0.5, 2.0])?;
    /// let s = a.sort()?.to_vec()?;
    /// assert_eq!(&s[..2], &[-1.0, 3.0]);
    /// assert!(s[2].is_nan());
    /// assert_eq!(&s[3..], &[0.5, 2.0, 2.0]);
    /// # Ok(())
    /// # }
    /// ```
    #[track_caller]
    pub fn sort(&self) -> Result<Array<T>> {
        self.sort_axis(self.ndim().saturating_sub(1))
    }

    /// `axis` of this array for sorting operation `op` (negative counts from the end); a
    /// 0-d array's is left for the sort to refuse, naming its rank.
    #[track_caller]
    pub(super) fn sorted_axis(&self, op: &str, axis: impl AsAxis) -> Result<usize> {
        match self.ndim() {
            0 => Ok(0),
            _ => crate::api::views::resolve_axis(op, axis.axis_value(), self.shape(), false),
        }
    }

    /// This array sorted along `axis`, each lane independently (numpy's `np.sort(a,
    /// axis)`).
    #[track_caller]
    pub fn sort_axis(&self, axis: impl AsAxis) -> Result<Array<T>> {
        // (Inside `value_and_grad`, a float sort also moves the positions, by which the
        // sorted values keep how they were picked.)
        let positions = self.node.ctx.keeps_recipes() && T::DTYPE.is_float();
        let req = Request {
            op: "sort",
            axis: self.sorted_axis("sort_axis", axis)?,
            order: Order::Ascending,
            payload: if positions { Payload::Index } else { Payload::None },
            keys_out: true,
        };
        let made = self.sort_with(req, None::<&Array<u32>>)?;
        let keys = made
            .keys
            .clone()
            .ok_or_else(|| Error::Internal("a sort stored no keys".into()))?;
        if positions && made.payload.is_some() {
            let at: Array<u32> = self.payload_array(req.axis, &made)?;
            keep_picked(self, req.axis, &keys, &at.node);
        }
        Ok(keys)
    }

    /// The positions that sort this array along its last axis (numpy's `np.argsort(a,
    /// kind="stable")`), as `u32`: `a.take_along_axis(-1, &a.argsort()?)` is `a.sort()`.
    ///
    /// ```
    /// # use lazycl::prelude::*;
    /// # fn main() -> lazycl::Result<()> {
    /// let ctx = Context::new()?;
    /// let a = ctx.from_slice(&[30i64, 10, 20, 10])?;
    /// assert_eq!(a.argsort()?.to_vec()?, vec![1, 3, 2, 0]);
    /// # Ok(())
    /// # }
    /// ```
    #[track_caller]
    pub fn argsort(&self) -> Result<Array<u32>> {
        self.argsort_axis(self.ndim().saturating_sub(1))
    }

    /// The positions that sort this array along `axis`.
    #[track_caller]
    pub fn argsort_axis(&self, axis: impl AsAxis) -> Result<Array<u32>> {
        let req = Request {
            op: "argsort",
            axis: self.sorted_axis("argsort_axis", axis)?,
            order: Order::Ascending,
            payload: Payload::Index,
            keys_out: false,
        };
        let made = self.sort_with(req, None::<&Array<u32>>)?;
        self.payload_array(req.axis, &made)
    }

    /// This one-dimensional array sorted and the positions that sort it, from one sort
    /// (the sets of `api::sets` need both). `op` names the user's operation in errors.
    #[track_caller]
    pub(crate) fn sort_with_positions(&self, op: &str) -> Result<SortedPositions<T>> {
        let req = Request {
            op,
            axis: 0,
            order: Order::Ascending,
            payload: Payload::Index,
            keys_out: true,
        };
        let made = self.sort_with(req, None::<&Array<u32>>)?;
        let positions = self.payload_array(0, &made)?;
        let keys = made
            .keys
            .ok_or_else(|| Error::Internal("a sort stored no keys".into()))?;
        Ok(SortedPositions { keys, positions })
    }

    /// Sorts along `req.axis`, moving `values` (a buffer in the sort's order) or an index
    /// payload with the keys.
    #[track_caller]
    pub(super) fn sort_with(
        &self,
        req: Request<'_>,
        values: Option<&Array<impl Element>>,
    ) -> Result<Made<T>> {
        if T::Compute::DTYPE != T::DTYPE {
            // (Types narrower than 32 bits sort as their compute type, which orders them
            // the same: the keys are cast back.)
            let made = self.cast::<T::Compute>().sort_with(req, values)?;
            return Ok(Made {
                keys: made.keys.map(|k| k.cast::<T>()),
                payload: made.payload,
            });
        }
        let ctx = self.node.ctx.clone();
        let shape = self.shape().to_vec();
        if shape.is_empty() {
            return Err(Error::InvalidShape(format!(
                "{}: a zero-dimensional array has no axis to sort along",
                req.op
            )));
        }
        if req.axis >= shape.len() {
            return Err(Error::InvalidShape(format!(
                "{}: axis {} is out of range for an array of shape {shape:?}",
                req.op, req.axis
            )));
        }
        let len = shape[req.axis];
        let rows = self.len().checked_div(len).unwrap_or(0);
        let key_buffer = axis_last_buffer(self, req.axis)?;
        let value_buffer = match values {
            Some(v) => Some(axis_last_buffer(v, req.axis)?),
            None => None,
        };
        let sorted = if rows == 0 || len == 0 {
            Sorted {
                keys: None,
                values: None,
            }
        } else {
            let plan = sort_plan(
                T::DTYPE,
                req.order,
                req.payload,
                req.keys_out,
                rows,
                len,
                &ctx.profile,
            )
            .map_err(|limit| limit_error(req.op, &shape, limit))?;
            sort_rows(&ctx, ctx.queue(), &plan, &key_buffer, value_buffer.as_ref())?
        };
        self.made(req, sorted)
    }

    /// What a sort asked for by `req` made, from the buffers it `sorted` into (none:
    /// nothing to sort, and a buffer of one byte stands for the empty result).
    #[track_caller]
    fn made(&self, req: Request<'_>, sorted: Sorted) -> Result<Made<T>> {
        let ctx = &self.node.ctx;
        let keys = match (req.keys_out, sorted.keys) {
            (true, Some(b)) => Some(moved_back(self, req.axis, b)?),
            (true, None) => Some(moved_back(
                self,
                req.axis,
                DeviceBuffer::uninit(&ctx.cl, 1, ctx.queue(), "an empty sort result")?,
            )?),
            (false, _) => None,
        };
        let payload = match (req.payload, sorted.values) {
            (Payload::None, _) => None,
            (_, Some(b)) => Some(b),
            (_, None) => Some(DeviceBuffer::uninit(
                &ctx.cl,
                1,
                ctx.queue(),
                "an empty sort result",
            )?),
        };
        Ok(Made { keys, payload })
    }

    /// The payload of a sort as an array of `U`, in this array's axis order.
    #[track_caller]
    pub(super) fn payload_array<U: Element>(&self, axis: usize, made: &Made<T>) -> Result<Array<U>> {
        let b = made
            .payload
            .clone()
            .ok_or_else(|| Error::Internal("a sort moved no payload".into()))?;
        moved_back(self, axis, b)
    }
}

/// Inside `value_and_grad` (while the context keeps recipes), `values` — `like`'s
/// elements along `axis` at `positions`, both [`placed`] — keep how they were picked (a
/// take along the axis), so that a gradient passes to `like` by the positions. Floats
/// only; values in a narrower type (cast back from a wider sort) keep nothing, and a
/// gradient through them is the error of any materialized array.
pub(super) fn keep_picked<T: Element>(like: &Array<T>, axis: usize, values: &Array<T>, positions: &NodeRef) {
    if !like.node.ctx.keeps_recipes() || !T::DTYPE.is_float() || like.ndim() == 0 {
        return;
    }
    let rank = like.ndim();
    let data = match axis == rank - 1 {
        true => like.clone(),
        false => like.permuted_axes(axis_last(rank, axis)),
    };
    // (`placed` puts a permuted view over memory laid out with the axis last.)
    let laid_last = |n: &NodeRef| match n.operation() {
        Some(Op::View(_, source)) => source,
        _ => n.clone(),
    };
    let memory = laid_last(&values.node);
    if !matches!(&*memory.state(), State::Ready(..)) {
        return;
    }
    memory.keep_recipe(Op::Take {
        spec: TakeSpec {
            axis: rank - 1,
            along: true,
            search: None,
        },
        data: data.node,
        indices: laid_last(positions),
    });
}

/// `buffer`, holding `like`'s shape with `axis` moved last, as an array in `like`'s order.
#[track_caller]
fn moved_back<T: Element, U: Element>(
    like: &Array<T>,
    axis: usize,
    buffer: Arc<DeviceBuffer>,
) -> Result<Array<U>> {
    Ok(placed(like, like.shape(), axis, buffer, "a sort"))
}

/// `buffer`, holding `shape` with `axis` moved last, as an array of `shape` (in `like`'s
/// context) made by `origin`.
#[track_caller]
pub(super) fn placed<T: Element, U: Element>(
    like: &Array<T>,
    shape: &[usize],
    axis: usize,
    buffer: Arc<DeviceBuffer>,
    origin: &'static str,
) -> Array<U> {
    let last = shape.len() - 1;
    let order = axis_last(shape.len(), axis);
    let sorted_shape: Vec<usize> = order.iter().map(|&d| shape[d]).collect();
    let a = Array::ready_from(
        &like.node.ctx,
        sorted_shape,
        buffer,
        Origin::Algorithm(origin),
        &like.node,
    );
    if axis == last {
        a
    } else {
        a.permuted_axes(inverse(&order))
    }
}

/// The memory of `a` with `axis` moved last: a permuted view, materialized contiguous.
#[track_caller]
fn axis_last_buffer<U: Element>(a: &Array<U>, axis: usize) -> Result<Arc<DeviceBuffer>> {
    let moved = if axis == a.ndim() - 1 {
        a.clone()
    } else {
        a.permuted_axes(axis_last(a.ndim(), axis))
    };
    moved.materialized_buffer("a sort (sort, argsort, topk, sort_by_key)")
}

/// The order of `ndim` axes with `axis` moved last.
#[track_caller]
pub(super) fn axis_last(ndim: usize, axis: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..ndim).filter(|&d| d != axis).collect();
    order.push(axis);
    order
}

/// The first `k` elements of `a` along `axis` (a view).
#[track_caller]
pub(super) fn first_along<U: Element>(a: &Array<U>, axis: usize, k: usize) -> Array<U> {
    let info: Vec<SliceInfoElem> = (0..a.ndim())
        .map(|d| SliceInfoElem::Slice {
            start: 0,
            end: (d == axis).then_some(k as isize),
            step: 1,
        })
        .collect();
    a.slice(info)
}

/// The permutation that undoes `order`.
#[track_caller]
fn inverse(order: &[usize]) -> Vec<usize> {
    let mut inv = vec![0; order.len()];
    for (i, &o) in order.iter().enumerate() {
        inv[o] = i;
    }
    inv
}

#[track_caller]
pub(super) fn limit_error(op: &str, shape: &[usize], limit: SortLimit) -> Error {
    Error::InvalidShape(match limit {
        SortLimit::KeyType(d) => format!("{op}: {d:?} keys have no order to sort by"),
        SortLimit::RowTooLong(n) => format!(
            "{op}: an array of shape {shape:?} has {n} elements along the sorted axis; at most 2^30 - 1 are sorted"
        ),
        SortLimit::LocalMemory(bytes) => {
            format!("{op}: the device's {bytes} bytes of local memory hold no sort tile")
        }
    })
}

/// The keys sorted along their last axis, each row independently and stably, and
/// `values` (of the keys' shape) moved with them (Thrust's and CUB's `sort_by_key`).
///
/// ```
/// # use lazycl::prelude::*;
/// # fn main() -> lazycl::Result<()> {
/// let ctx = Context::new()?;
/// let keys = ctx.from_slice(&[3u32, 1, 2, 1])?;
/// let names = ctx.from_slice(&[30.0f64, 10.0, 20.0, 11.0])?;
/// let s = sort_by_key(&keys, &names)?;
/// assert_eq!(s.keys.to_vec()?, vec![1, 1, 2, 3]);
/// assert_eq!(s.values.to_vec()?, vec![10.0, 11.0, 20.0, 30.0]);
/// # Ok(())
/// # }
/// ```
#[track_caller]
pub fn sort_by_key<K: Numeric, V: Element>(keys: &Array<K>, values: &Array<V>) -> Result<SortedByKey<K, V>> {
    keys.node.ctx.tag.check(
        &values.node.ctx.tag,
        || "sort_by_key".into(),
        || format!("the values (shape {:?})", values.shape()),
    )?;
    if keys.shape() != values.shape() {
        return Err(Error::ShapeMismatch {
            op: "sort_by_key (keys and values)".into(),
            left: keys.shape().to_vec(),
            right: values.shape().to_vec(),
            why: "differ: each key needs its value".into(),
        });
    }
    let axis = keys.ndim().saturating_sub(1);
    let req = Request {
        op: "sort_by_key",
        axis,
        order: Order::Ascending,
        payload: Payload::Values {
            bytes: V::DTYPE.size() as u32,
        },
        keys_out: true,
    };
    let made = keys.sort_with(req, Some(values))?;
    let moved = keys.payload_array(axis, &made)?;
    Ok(SortedByKey {
        keys: made
            .keys
            .ok_or_else(|| Error::Internal("a sort stored no keys".into()))?,
        values: moved,
    })
}
