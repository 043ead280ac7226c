//! Materializing from the user's side: [`eval`] of several arrays, [`Queue::eval`], and
//! `assign` (in place where nothing else can observe the target). What a flush would do
//! is `explain`'s (`api::explain`).

use std::sync::Arc;

use crate::api::array::Array;
use crate::api::queue::Queue;
use crate::backend::queue::QueueInner;
use crate::dtype::Element;
use crate::error::{Error, Result};
use crate::exec;
use crate::graph::shape::broadcasts_to;
use crate::graph::NodeRef;
use crate::plan::GKind;

/// Several arrays that can be materialized together (they share kernels where possible).
pub trait EvalList {
    /// The graph nodes of the arrays.
    #[doc(hidden)]
    fn nodes(&self) -> Vec<NodeHandle>;
}

/// An array of any element type, as seen by [`eval`]. Opaque.
#[doc(hidden)]
pub struct NodeHandle(pub(crate) NodeRef);

impl<T: Element> EvalList for &Array<T> {
    fn nodes(&self) -> Vec<NodeHandle> {
        vec![NodeHandle(self.node.clone())]
    }
}
impl<T: Element> EvalList for [&Array<T>] {
    fn nodes(&self) -> Vec<NodeHandle> {
        self.iter().map(|a| NodeHandle(a.node.clone())).collect()
    }
}
impl<T: Element, const N: usize> EvalList for [&Array<T>; N] {
    fn nodes(&self) -> Vec<NodeHandle> {
        self.iter().map(|a| NodeHandle(a.node.clone())).collect()
    }
}
impl<T: Element> EvalList for Vec<&Array<T>> {
    fn nodes(&self) -> Vec<NodeHandle> {
        self.iter().map(|a| NodeHandle(a.node.clone())).collect()
    }
}
impl<T: Element> EvalList for Vec<Array<T>> {
    fn nodes(&self) -> Vec<NodeHandle> {
        self.iter().map(|a| NodeHandle(a.node.clone())).collect()
    }
}

macro_rules! eval_tuple {
    ($($t:ident $i:tt),*) => {
        impl<'a, $($t: Element),*> EvalList for ($(&'a Array<$t>,)*) {
            fn nodes(&self) -> Vec<NodeHandle> {
                vec![$(NodeHandle(self.$i.node.clone())),*]
            }
        }
    };
}
eval_tuple!(A 0);
eval_tuple!(A 0, B 1);
eval_tuple!(A 0, B 1, C 2);
eval_tuple!(A 0, B 1, C 2, D 3);
eval_tuple!(A 0, B 1, C 2, D 3, E 4);
eval_tuple!(A 0, B 1, C 2, D 3, E 4, F 5);
eval_tuple!(A 0, B 1, C 2, D 3, E 4, F 5, G 6);
eval_tuple!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7);

/// Materializes several arrays in one flush on the default queue: arrays of one shape
/// computed from a common graph share one kernel. Returns without waiting (when the
/// context's [`Dispatch`](crate::Dispatch) hands the flush over, before it has run).
/// [`Queue::eval`] does the same on a chosen queue.
///
/// `arrays` is a tuple of references (`&(&a, &b)`, element types may differ), a slice
/// (`&[&a, &b][..]`) or a `Vec` of arrays of one type.
///
/// ```
/// # use lazycl::prelude::*;
/// # fn main() -> lazycl::Result<()> {
/// let ctx = Context::new()?;
/// let x = ctx.from_slice(&[1.0f32, -2.0, 3.0])?;
/// let y = &x * 2.0;
/// let positive = y.gt(0.0);
/// let before = ctx.stats();
/// lazycl::eval(&(&y, &positive))?; // an f32 and a bool result of one graph
/// assert_eq!((ctx.stats() - before).kernels_launched, 1); // computed by one kernel
/// assert_eq!(y.to_vec()?, [2.0, -4.0, 6.0]);
/// assert_eq!(positive.to_vec()?, [true, false, true]);
/// # Ok(())
/// # }
/// ```
pub fn eval<L: EvalList + ?Sized>(arrays: &L) -> Result<()> {
    let nodes: Vec<NodeRef> = arrays.nodes().into_iter().map(|h| h.0).collect();
    crate::api::handover::eval_nodes(None, &nodes)
}

impl<T: Element> Array<T> {
    /// Sets this array to `value` (broadcast to this array's shape), evaluated now on the
    /// default queue (enqueued, not waited for). Writes into this array's own device
    /// memory when no other handle can observe it and `value` does not read it; otherwise
    /// into a pooled buffer. Either way a loop of `assign`s allocates nothing after its
    /// first steps.
    ///
    /// ```
    /// # use lazycl::prelude::*;
    /// # fn main() -> lazycl::Result<()> {
    /// let ctx = Context::new()?;
    /// let target = ctx.from_slice(&[1.0f32, -3.0])?;
    /// let mut w = ctx.zeros::<f32>(2)?;
    /// for _ in 0..3 {
    ///     // One gradient step of (w - target)² per iteration, written into `w`.
    ///     let grad = 2.0 * (&w - &target);
    ///     w.assign(&w - 0.25 * grad)?;
    /// }
    /// assert_eq!(w.to_vec()?, [0.875, -2.625]);
    /// w.assign(0.0)?; // a scalar broadcasts
    /// assert_eq!(w.to_vec()?, [0.0, 0.0]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn assign(&mut self, value: impl crate::api::ops::Operand<T>) -> Result<()> {
        let queue = self.node.ctx.queue().clone();
        self.assign_impl(&queue, value)
    }

    /// Like [`assign`](Array::assign), evaluated on `queue`.
    pub fn assign_on(&mut self, queue: &Queue, value: impl crate::api::ops::Operand<T>) -> Result<()> {
        queue.check_context(&self.node.ctx, || "Array::assign_on".into())?;
        crate::api::array::one_device(&self.node.ctx, "Array::assign_on")?;
        self.assign_impl(&queue.inner, value)
    }

    fn assign_impl(
        &mut self,
        queue: &Arc<QueueInner>,
        value: impl crate::api::ops::Operand<T>,
    ) -> Result<()> {
        let ctx = self.node.ctx.clone();
        let v = value.into_array(crate::api::ops::CtxRef(&ctx));
        ctx.tag.check(
            &v.node.ctx.tag,
            || "Array::assign".into(),
            || format!("the value (shape {:?})", v.shape()),
        )?;
        self.assign_on_queue(queue, v)
    }

    /// `assign` of a value of this array's context.
    pub(crate) fn assign_on_queue(&mut self, queue: &Arc<QueueInner>, v: Array<T>) -> Result<()> {
        if let Some(e) = v.recording_error() {
            return Err(e);
        }
        // A flush still pending on the dispatch thread holds the arrays it reads: after
        // it, whether another handle can observe this array is exact.
        self.node.ctx.jobs().settle()?;
        let target_shape = self.shape().to_vec();
        let v = if v.shape() == target_shape.as_slice() {
            v
        } else if broadcasts_to(v.shape(), &target_shape) {
            v.broadcast_to(&target_shape)
        } else {
            return Err(Error::ShapeMismatch {
                op: "assign".into(),
                left: v.shape().to_vec(),
                right: target_shape,
                why: "do not fit: the value's shape cannot be broadcast to the array's (trailing axes must be equal, or 1 in the value)".into(),
            });
        };
        if crate::multi::is_multi(&self.node.ctx) {
            // Rows on several devices: the value's own pieces become the array's.
            crate::multi::materialize(std::slice::from_ref(&v.node))?;
            *self = v;
            return Ok(());
        }
        let unique = Arc::strong_count(&self.node) == 1;
        if unique {
            if let Some(buffer) = self.node.buffer() {
                let reads_self = crate::plan::collect::collect(std::slice::from_ref(&v.node))?
                    .graph
                    .iter()
                    .any(|g| {
                        Arc::ptr_eq(&g.node, &self.node)
                            || matches!(&g.kind, GKind::Ready(b) if Arc::ptr_eq(b, &buffer))
                    });
                if !reads_self && Arc::strong_count(&buffer) == 2 {
                    exec::materialize_into(queue, &v.node, buffer)?;
                    *self = Array::from_node(v.node);
                    return Ok(());
                }
            }
        }
        exec::materialize_on(queue, std::slice::from_ref(&v.node))?;
        *self = v;
        Ok(())
    }
}

impl Queue {
    /// Materializes several arrays on this queue (like [`eval`]); returns at once.
    pub fn eval<L: EvalList + ?Sized>(&self, arrays: &L) -> Result<()> {
        let nodes: Vec<_> = arrays.nodes().into_iter().map(|h| h.0).collect();
        crate::api::array::one_device(&self.ctx, "Queue::eval")?;
        crate::api::handover::eval_nodes(Some(&self.inner), &nodes)
    }
}
