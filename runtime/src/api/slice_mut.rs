//! Writing into a region of an array in place: `a.slice_mut(s![.., 1..3]).assign(&e)`.
//! The kernel that computes `e` stores straight into the region of `a`'s device memory
//! (through the region's index map), so nothing else is written and no temporary holds
//! `e`, unless `e` reads `a` itself (then `e` is computed first, so that the kernel never
//! reads what it overwrites).

use std::sync::Arc;

use ndarray::SliceInfoElem;

use crate::api::array::Array;
use crate::api::ops::{CtxRef, Operand};
use crate::api::queue::Queue;
use crate::backend::queue::QueueInner;
use crate::dtype::Element;
use crate::error::{Error, Result};
use crate::exec;
use crate::graph::{Op, State};

/// A region of an array, to be written in place ([`Array::slice_mut`]).
pub struct SliceMut<'a, T: Element> {
    array: &'a mut Array<T>,
    /// The selection, as given.
    info: Vec<SliceInfoElem>,
    /// The region as a view of the array (its shape, and any error of the selection).
    region: Array<T>,
}

impl<T: Element> Array<T> {
    /// A region of this array to write in place, selected as by [`slice`](Array::slice):
    /// `a.slice_mut(s![.., 1..3]).assign(&expr)` or `.fill(0.0)`.
    ///
    /// ```
    /// # use lazycl::prelude::*;
    /// # fn main() -> lazycl::Result<()> {
    /// let ctx = Context::new()?;
    /// let mut grid = ctx.zeros::<f32>([3, 3])?;
    /// let v = ctx.from_slice(&[1.0f32, 2.0, 3.0])?;
    /// grid.slice_mut(s![1, ..]).assign(&v * 10.0)?; // only row 1 is written
    /// grid.slice_mut(s![.., 0]).fill(-1.0)?;
    /// assert_eq!(grid.to_vec()?, [-1.0, 0.0, 0.0, -1.0, 20.0, 30.0, -1.0, 0.0, 0.0]);
    /// # Ok(())
    /// # }
    /// ```
    #[track_caller]
    pub fn slice_mut(&mut self, info: impl AsRef<[SliceInfoElem]>) -> SliceMut<'_, T> {
        let info = info.as_ref().to_vec();
        let region = self.slice(&info);
        SliceMut {
            array: self,
            info,
            region,
        }
    }
}

impl<T: Element> SliceMut<'_, T> {
    /// The region's shape.
    pub fn shape(&self) -> &[usize] {
        self.region.shape()
    }

    /// Sets the region to `value` (broadcast to the region's shape), evaluated now on
    /// the default queue (enqueued, not waited for); the rest of the array keeps its
    /// values. One kernel computes `value` and stores it into the region.
    ///
    /// A bad slice or a value that does not broadcast to the region is an error, and
    /// the array is left unchanged.
    #[track_caller]
    pub fn assign(self, value: impl Operand<T>) -> Result<()> {
        self.assign_on_inner(None, value)
    }

    /// Like [`assign`](SliceMut::assign), evaluated on `queue`.
    #[track_caller]
    pub fn assign_on(self, queue: &Queue, value: impl Operand<T>) -> Result<()> {
        queue.check_context(&self.array.node.ctx, || "SliceMut::assign_on".into())?;
        self.assign_on_inner(Some(queue), value)
    }

    /// Sets every element of the region to `value`.
    #[track_caller]
    pub fn fill(self, value: T) -> Result<()> {
        self.assign(value)
    }

    #[track_caller]
    fn assign_on_inner(self, queue: Option<&Queue>, value: impl Operand<T>) -> Result<()> {
        let SliceMut { array, info, region } = self;
        let ctx = array.node.ctx.clone();
        let q: Arc<QueueInner> = queue.map_or(ctx.queue(), |q| &q.inner).clone();
        if let Some(e) = region.recording_error() {
            return Err(e);
        }
        let v = value.into_array(CtxRef(&ctx));
        ctx.tag.check(
            &v.node.ctx.tag,
            || "SliceMut::assign".into(),
            || format!("the value (shape {:?})", v.shape()),
        )?;
        let v = v.broadcast_to(region.shape());
        if let Some(e) = v.recording_error() {
            return Err(match e {
                Error::ShapeMismatch { left, right, .. } => Error::ShapeMismatch {
                    op: "slice_mut(..).assign".into(),
                    left,
                    right,
                    why: "do not fit: the value's shape cannot be broadcast to the region's".into(),
                },
                other => other,
            });
        }
        let whole = !matches!(&*region.node.state(), State::Lazy(Op::View(..)));
        // The region must not hold the array while its memory is claimed.
        drop(region);
        if whole {
            return array.assign_on_queue(&q, v);
        }
        if crate::multi::is_multi(&ctx) {
            if queue.is_some() {
                crate::api::array::one_device(&ctx, "SliceMut::assign_on")?;
            }
            return assign_split(array, &info, v);
        }
        let buffer = array.private_buffer(queue, "slice_mut(..).assign")?;
        // The region's map into the array's own memory (the array is materialized now: a
        // selection of a view would have composed into a map over the view's source).
        let region = array.slice(&info);
        let map = match &*region.node.state() {
            State::Lazy(Op::View(map, _)) => Some(map.clone()),
            _ => None,
        };
        drop(region);
        let Some(map) = map else {
            // The whole array after all (a selection that undid the view's map).
            return array.assign_on_queue(&q, v);
        };
        // A value that reads the array is computed first: the kernel must not read what
        // it overwrites.
        let v = if v.reads_buffer(&buffer)? {
            let copy = v.to_contiguous();
            exec::materialize_on(&q, std::slice::from_ref(&copy.node))?;
            copy
        } else {
            v
        };
        // The kernel that stores into the region computes a lazy elementwise node: a
        // materialized value is copied by one, and so is a reduction or scan (their
        // kernels write whole arrays of their own), computed first.
        let whole_kernel = matches!(&*v.node.state(), State::Lazy(Op::Reduce(..) | Op::Scan(..)));
        if whole_kernel {
            exec::materialize_on(&q, std::slice::from_ref(&v.node))?;
        }
        let v = if v.is_materialized() { v.to_contiguous() } else { v };
        exec::materialize_into_region(&q, &v.node, buffer, &map, array.shape())
    }
}

/// `slice_mut(..).assign` on an array split across devices (`multi::assign`).
#[track_caller]
fn assign_split<T: Element>(array: &mut Array<T>, info: &[SliceInfoElem], v: Array<T>) -> Result<()> {
    crate::multi::materialize(std::slice::from_ref(&array.node))?;
    let region = array.slice(info);
    let map = match &*region.node.state() {
        State::Lazy(Op::View(map, source)) if Arc::ptr_eq(source, &array.node) => Some(map.clone()),
        _ => None,
    };
    let Some(map) = map else {
        // The whole array after all.
        drop(region);
        let q = array.node.ctx.queue().clone();
        return array.assign_on_queue(&q, v);
    };
    let shape = region.shape().to_vec();
    drop(region);
    *array = Array::from_node(crate::multi::assign::region(&array.node, &map, &shape, &v.node)?);
    Ok(())
}

impl<T: Element> Array<T> {
    /// Whether computing this array reads `buffer` (the array itself or a view of it).
    #[track_caller]
    pub(crate) fn reads_buffer(&self, buffer: &Arc<crate::backend::buffer::DeviceBuffer>) -> Result<bool> {
        let graph = crate::plan::collect::collect(std::slice::from_ref(&self.node))?;
        Ok(graph
            .graph
            .iter()
            .any(|g| matches!(&g.kind, crate::plan::GKind::Ready(b) if Arc::ptr_eq(b, buffer))))
    }
}
