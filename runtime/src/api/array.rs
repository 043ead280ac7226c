//! [`Array<T>`]: the typed handle users hold (made by the constructors in `construct`).
//! It wraps one node of the lazy graph, which is either device memory or a recorded
//! expression.

use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

use ndarray::{ArrayD, Dimension, IxDyn};

use crate::api::queue::Queue;
use crate::backend::buffer::DeviceBuffer;
use crate::backend::cl;
use crate::backend::context::{Context, ContextInner};
use crate::backend::kernel::ArrayArg;
use crate::backend::queue::QueueInner;
use crate::backend::submit::Command;
use crate::dtype::{DType, Element};
use crate::error::{Error, Result};
use crate::exec;
use crate::graph::{Node, NodeRef, Op, Origin, Shape, State};
use crate::multi;
use crate::stats::{Counters, WaitReason};

/// An n-dimensional array of `T` on an OpenCL device, possibly not computed yet.
///
/// Arithmetic on arrays records a lazy expression; nothing runs until the array is
/// materialized with [`eval`](Array::eval), [`to_vec`](Array::to_vec),
/// [`to_ndarray`](Array::to_ndarray) or [`item`](Array::item). Cloning is cheap and
/// arrays have value semantics: writing into one (through a `&mut` kernel argument or
/// [`assign`](Array::assign)) never changes another.
///
/// The operators `+ - * / %` (and `& | ^ !` on integers and masks, unary `-` on signed
/// types) take arrays and scalars on either side, by value or by reference, and
/// broadcast by numpy's rules:
///
/// ```
/// use lazycl::prelude::*;
///
/// # fn main() -> lazycl::Result<()> {
/// let ctx = Context::new()?;
/// let a = ctx.from_shape_slice([2, 3], &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])?;
/// let row = ctx.from_slice(&[10.0f32, 20.0, 30.0])?;
///
/// let b = 2.0 * (&a + &row) - 1.0; // [2, 3] + [3] broadcasts; nothing runs yet
/// assert!(!b.is_materialized());
/// assert_eq!(b.shape(), [2, 3]);
/// assert_eq!(b.to_vec()?, [21.0, 43.0, 65.0, 27.0, 49.0, 71.0]); // one kernel, one read
///
/// let c = b.clone(); // value semantics: `c` keeps b's values
/// let mut b = b;
/// b.assign(0.0)?;
/// assert_eq!(c.sum().item()?, 276.0);
/// # Ok(())
/// # }
/// ```
///
/// Comparisons give `Array<bool>` masks; in `+ - * / %` with a numeric array a mask counts
/// as 0 and 1 of that array's type (numpy's rule; the cast fuses). Math follows the names
/// of `f32`'s methods:
///
/// ```
/// # use lazycl::prelude::*;
/// # fn main() -> lazycl::Result<()> {
/// let ctx = Context::new()?;
/// let x = ctx.from_slice(&[-4.0f32, -0.5, 0.5, 9.0])?;
/// let relu = x.gt(0.0).select(&x, 0.0); // numpy's where(x > 0, x, 0)
/// assert_eq!(relu.to_vec()?, [0.0, 0.0, 0.5, 9.0]);
/// let step = &x * x.gt(0.0); // the mask as 0.0 and 1.0
/// assert_eq!(step.to_vec()?, [0.0, 0.0, 0.5, 9.0]);
/// let y = x.abs().clamp(0.0, 2.0).powi(2);
/// assert_eq!(y.to_vec()?, [4.0, 0.25, 0.25, 4.0]);
/// let e = x.exp();
/// let host: Vec<f32> = [-4.0f32, -0.5, 0.5, 9.0].iter().map(|v| v.exp()).collect();
/// for (got, want) in e.to_vec()?.iter().zip(&host) {
///     assert!((got - want).abs() <= 1e-6 * want); // OpenCL's exp: within 3 ulp
/// }
/// assert_eq!(x.cast::<i32>().to_vec()?, [-4, 0, 0, 9]); // Rust's `as`
/// # Ok(())
/// # }
/// ```
pub struct Array<T: Element> {
    pub(crate) node: NodeRef,
    _t: PhantomData<T>,
}

impl<T: Element> Clone for Array<T> {
    fn clone(&self) -> Self {
        Array::from_node(self.node.clone())
    }
}

impl<T: Element> fmt::Debug for Array<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = match &*self.node.state() {
            State::Ready(..) => "ready",
            State::Parts(..) => "ready on several devices",
            State::Lazy(_) => "lazy",
            State::Failed(_) => "failed",
            State::Dropped => "dropped",
        };
        write!(f, "Array<{}>{:?} ({state})", T::DTYPE, self.node.shape)
    }
}

impl<T: Element> Array<T> {
    pub(crate) fn from_node(node: NodeRef) -> Self {
        Array {
            node,
            _t: PhantomData,
        }
    }

    /// An array of `buffer`, which `origin` wrote.
    #[track_caller]
    pub(crate) fn ready(
        ctx: &Arc<ContextInner>,
        shape: impl Into<Shape>,
        buffer: Arc<DeviceBuffer>,
        origin: Origin,
    ) -> Self {
        Self::from_node(Node::new(
            ctx.clone(),
            T::DTYPE,
            shape.into(),
            State::Ready(buffer, origin),
        ))
    }

    /// [`Array::ready`] of memory that device kernels outside the graph computed from
    /// `from` (a sort's keys, a compaction's values): gradients know it may depend on
    /// what `from` depends on.
    #[track_caller]
    pub(crate) fn ready_from(
        ctx: &Arc<ContextInner>,
        shape: impl Into<Shape>,
        buffer: Arc<DeviceBuffer>,
        origin: Origin,
        from: &NodeRef,
    ) -> Self {
        Self::from_node(Node::made_from(
            ctx.clone(),
            T::DTYPE,
            shape.into(),
            State::Ready(buffer, origin),
            &[from],
        ))
    }

    #[track_caller]
    pub(crate) fn lazy(ctx: &Arc<ContextInner>, shape: impl Into<Shape>, op: Op) -> Self {
        Self::from_node(Node::new(ctx.clone(), T::DTYPE, shape.into(), State::Lazy(op)))
    }

    /// An array whose recording failed with `error`, which names the caller's line.
    #[track_caller]
    pub(crate) fn failed(ctx: &Arc<ContextInner>, shape: impl Into<Shape>, error: Error) -> Self {
        let error = error.recorded_at(std::panic::Location::caller());
        Self::from_node(Node::new(
            ctx.clone(),
            T::DTYPE,
            shape.into(),
            State::Failed(Box::new(error)),
        ))
    }

    /// The dimensions, outermost first (empty for a 0-d array).
    pub fn shape(&self) -> &[usize] {
        &self.node.shape
    }

    /// Number of dimensions.
    pub fn ndim(&self) -> usize {
        self.node.shape.len()
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.node.numel()
    }

    /// Whether the array has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The element type.
    pub fn dtype(&self) -> DType {
        T::DTYPE
    }

    /// The context the array belongs to.
    pub fn context(&self) -> Context {
        Context::from_inner(self.node.ctx.clone())
    }

    /// Whether the array is backed by device memory (not a pending expression).
    pub fn is_materialized(&self) -> bool {
        // An `eval()` this thread handed to the dispatch thread counts as done.
        self.node.ctx.jobs().wait();
        matches!(&*self.node.state(), State::Ready(..) | State::Parts(..))
    }

    /// Enqueues everything this array needs on the default queue and returns without
    /// waiting; afterwards the array is backed by device memory. Reports recording errors
    /// (shape mismatches). Where the context's [`Dispatch`](crate::Dispatch) hands it over
    /// (by default on a GPU: the first `eval()` after a pause) the flush itself
    /// (planning, building, enqueueing) runs on the context's dispatch thread, and its own
    /// errors come from the next call that submits or reads.
    ///
    /// ```
    /// # use lazycl::prelude::*;
    /// # fn main() -> lazycl::Result<()> {
    /// let ctx = Context::new()?;
    /// let x = ctx.from_slice(&[1.0f32, 2.0])?;
    /// let y = &x + 1.0;
    /// assert!(!y.is_materialized()); // recorded, not computed
    /// y.eval()?; // its kernel is enqueued; the host goes on
    /// assert!(y.is_materialized());
    /// let bad = &x + &ctx.from_slice(&[1.0f32, 2.0, 3.0])?;
    /// assert!(bad.eval().is_err()); // shapes [2] and [3] do not broadcast
    /// # Ok(())
    /// # }
    /// ```
    pub fn eval(&self) -> Result<&Self> {
        crate::api::handover::eval_nodes(None, std::slice::from_ref(&self.node))?;
        Ok(self)
    }

    /// Like [`eval`](Array::eval), on `queue`.
    pub fn eval_on(&self, queue: &Queue) -> Result<&Self> {
        queue.check_context(&self.node.ctx, || "Array::eval_on".into())?;
        one_device(&self.node.ctx, "Array::eval_on")?;
        crate::api::handover::eval_nodes(Some(&queue.inner), std::slice::from_ref(&self.node))?;
        Ok(self)
    }

    /// An [`Event`](crate::backend::queue::Event) that completes once this array's data is on the device:
    /// materializes it first (on the default queue) if needed, never waits. Use it to
    /// order work on other queues or threads after the array, or to poll for completion.
    pub fn ready_event(&self) -> Result<crate::backend::queue::Event> {
        let buffer = self.materialized_buffer("Array::ready_event")?;
        let last_write = buffer.access().last_write(); // the lock is released here
        match last_write {
            Some(mark) => mark.event(),
            // Never written by a command (an upload is complete at creation): a marker on
            // the default queue, which completes with the work queued there so far.
            None => self.context().queue().marker(),
        }
    }

    /// Materializes and copies the elements to the host, in row-major order.
    ///
    /// Waits only for the command that wrote the array (and what was queued before it
    /// on its queue): the read is queued right behind the writer, on the writer's queue,
    /// so work on other queues never delays it. An array no command has written (a fresh
    /// upload) is read on a queue of its own and waits for nothing.
    pub fn to_vec(&self) -> Result<Vec<T>> {
        if multi::is_multi(&self.node.ctx) {
            return self.gather();
        }
        let buffer = self.materialized_buffer("Array::to_vec")?;
        let n = self.len();
        let ctx = &self.node.ctx;
        if n == 0 {
            return Ok(Vec::new());
        }
        let bytes = n * T::DTYPE.size();
        let writer = buffer.access().writer().cloned();
        let queue = match &writer {
            Some(q) => q,
            // Never written by a command (a fresh upload): nothing to wait for.
            None => ctx.transfer_queue()?,
        };
        ctx.counters.count_wait(WaitReason::Read);
        Counters::add(&ctx.counters.bytes_downloaded, bytes as u64);
        if T::DTYPE == DType::Bool {
            // Never trust device bytes to be valid `bool`s: read bytes, then compare.
            let mut raw = vec![0u8; n];
            queue.read_blocking(buffer.mem(), bytes, raw.as_mut_ptr().cast())?;
            let bools: Vec<bool> = raw.into_iter().map(|b| b != 0).collect();
            // SAFETY: T is bool here (checked through DTYPE), so Vec<bool> is Vec<T>.
            let out = unsafe { std::mem::transmute::<Vec<bool>, Vec<T>>(bools) };
            return Ok(out);
        }
        let mut out: Vec<T> = vec![T::default(); n];
        queue.read_blocking(buffer.mem(), bytes, out.as_mut_ptr().cast())?;
        Ok(out)
    }

    /// Materializes and copies to the host as an `ndarray::ArrayD` of the same shape.
    pub fn to_ndarray(&self) -> Result<ArrayD<T>> {
        let data = self.to_vec()?;
        ArrayD::from_shape_vec(IxDyn(self.shape()), data).map_err(|e| Error::InvalidShape(e.to_string()))
    }

    /// Like [`to_ndarray`](Array::to_ndarray) with a fixed dimensionality, e.g. `Ix2`.
    pub fn to_ndarray_dim<D: Dimension>(&self) -> Result<ndarray::Array<T, D>> {
        let a = self.to_ndarray()?;
        let ndim = a.ndim();
        a.into_dimensionality::<D>().map_err(|_| {
            Error::InvalidShape(format!(
                "a {ndim}-d array cannot be read as {}-d",
                D::NDIM.map_or("dynamic".into(), |n| n.to_string())
            ))
        })
    }

    /// The single element of a one-element array (e.g. a full reduction), read to the host.
    pub fn item(&self) -> Result<T> {
        if let State::Failed(e) = &*self.node.state() {
            // A recording error (its shape may be anything) comes first.
            return Err((**e).clone());
        }
        if self.len() != 1 {
            return Err(Error::InvalidShape(format!(
                "item() needs exactly one element, the array has shape {:?}",
                self.shape()
            )));
        }
        Ok(self.to_vec()?[0])
    }

    /// Materializes (enqueues on the default queue) and returns the device buffer.
    /// `op`, the user's operation, needs the memory (an error on several devices).
    pub(crate) fn materialized_buffer(&self, op: &str) -> Result<Arc<DeviceBuffer>> {
        self.materialized_buffer_on(None, op)
    }

    fn materialized_buffer_on(&self, queue: Option<&Queue>, op: &str) -> Result<Arc<DeviceBuffer>> {
        // This thread's `eval()`s handed to the dispatch thread come first.
        self.node.ctx.jobs().settle()?;
        if let Some(b) = self.node.buffer() {
            return Ok(b);
        }
        one_device(&self.node.ctx, op)?;
        match queue {
            Some(q) => {
                q.check_context(&self.node.ctx, || "materializing a kernel argument".into())?;
                exec::materialize_on(&q.inner, std::slice::from_ref(&self.node))?
            }
            None => materialize(std::slice::from_ref(&self.node))?,
        }
        self.node
            .buffer()
            .ok_or_else(|| Error::InvalidShape("array was not materialized".into()))
    }

    /// The buffer as a read-only kernel argument (materializing the array on the default
    /// queue if needed).
    pub fn kernel_arg(&self) -> Result<ArrayArg> {
        self.kernel_arg_on(None)
    }

    /// The buffer as a read-only kernel argument, materializing the array on `queue`
    /// (default: the context's default queue) if needed.
    pub fn kernel_arg_on(&self, queue: Option<&Queue>) -> Result<ArrayArg> {
        self.refuse_view("a #[kernel] argument")?;
        Ok(ArrayArg {
            buffer: self.materialized_buffer_on(queue, "a #[kernel] argument")?,
            len: self.len(),
            writable: false,
        })
    }

    /// The buffer as a writable kernel argument. If another array shares this array's
    /// storage (a clone, or a pending expression that reads it), this array first gets a
    /// private copy, so the write is never visible through the other handles.
    pub fn kernel_arg_mut(&mut self) -> Result<ArrayArg> {
        self.kernel_arg_mut_on(None)
    }

    /// Like [`kernel_arg_mut`](Array::kernel_arg_mut), materializing on `queue`.
    pub fn kernel_arg_mut_on(&mut self, queue: Option<&Queue>) -> Result<ArrayArg> {
        self.refuse_view("a mutable #[kernel] argument")?;
        Ok(ArrayArg {
            buffer: self.private_buffer(queue, "a #[kernel] launch (a &mut argument)")?,
            len: self.len(),
            writable: true,
        })
    }

    /// A view is read in place by lazy expressions, but a `#[kernel]` sees plain memory:
    /// the user chooses the copy.
    fn refuse_view(&self, what: &str) -> Result<()> {
        if matches!(&*self.node.state(), State::Lazy(Op::View(..))) {
            return Err(Error::InvalidView {
                op: format!("passing a view as {what}"),
                shape: self.shape().to_vec(),
                reason: "a kernel reads plain memory; call .to_contiguous() first (one copy kernel)".into(),
            });
        }
        Ok(())
    }

    /// This array's device memory, materialized on `queue` (default: the default queue)
    /// if needed, and private to this handle: when another array (a clone, a pending
    /// expression or view that reads it, a reshape sharing it) can observe it, this array
    /// first gets a copy of its own, so that writing into it changes nothing else. The
    /// caller is about to write into it: `writer` says how, for `explain`.
    pub(crate) fn private_buffer(
        &mut self,
        queue: Option<&Queue>,
        writer: &'static str,
    ) -> Result<Arc<DeviceBuffer>> {
        let buffer = self.materialized_buffer_on(queue, writer)?;
        // Count: `self.node` is ours; `buffer` is the clone just taken plus the node's own.
        if Arc::strong_count(&self.node) > 1 || Arc::strong_count(&buffer) > 2 {
            let ctx = self.node.ctx.clone();
            let bytes = self.len() * T::DTYPE.size();
            let q = queue.map_or(ctx.queue(), |q| &q.inner);
            let copy = DeviceBuffer::uninit(&ctx.cl, bytes, q, "a copy of an array written in place")?;
            copy_buffer(q, &buffer, &copy, bytes)?;
            *self = Array::ready(
                &ctx,
                self.shape().to_vec(),
                copy.clone(),
                Origin::WrittenBy(writer),
            );
            return Ok(copy);
        }
        self.node.set_origin(Origin::WrittenBy(writer));
        Ok(buffer)
    }
}

impl<T: Element> Array<T> {
    /// A multi-device array's elements: its devices' rows, read one piece at a time.
    fn gather(&self) -> Result<Vec<T>> {
        materialize(std::slice::from_ref(&self.node))?;
        let parts = self
            .node
            .parts()
            .ok_or_else(|| Error::Internal("a multi-device array was not materialized".into()))?;
        let rows = crate::graph::parts::row_count(self.shape());
        let per_row = if self.ndim() == 0 {
            1
        } else {
            self.shape()[1..].iter().product()
        };
        let mut out = Vec::with_capacity(self.len());
        for (piece, used) in multi::cover(&parts, rows)? {
            let data = Array::<T>::from_node(piece.node).to_vec()?;
            out.extend_from_slice(&data[used.start * per_row..used.end * per_row]);
        }
        Ok(out)
    }
}

/// Materializes `nodes` (of one context) on its default queue, or on each device's for a
/// multi-device context; returns without waiting.
pub(crate) fn materialize(nodes: &[NodeRef]) -> Result<()> {
    match nodes.first() {
        Some(n) if multi::is_multi(&n.ctx) => multi::materialize(nodes),
        _ => exec::materialize(nodes),
    }
}

/// `Ok` unless `ctx` spans several devices: `op` needs the array in one device's memory.
pub(crate) fn one_device(ctx: &ContextInner, op: &str) -> Result<()> {
    match &ctx.multi {
        None => Ok(()),
        Some(m) => Err(Error::MultiDevice {
            op: op.to_string(),
            devices: m.parts.len(),
            reason: "the array is split by rows across the devices, and this needs it in one \
                     device's memory; read it with to_ndarray() and upload it to a one-device \
                     context"
                .into(),
        }),
    }
}

/// Enqueues a device-to-device copy of `bytes` bytes on `queue`.
pub(crate) fn copy_buffer(
    queue: &Arc<QueueInner>,
    src: &DeviceBuffer,
    dst: &DeviceBuffer,
    bytes: usize,
) -> Result<()> {
    if bytes == 0 {
        return Ok(());
    }
    queue.submit(Command::new(&[src], &[dst]), |q, wait, want| {
        cl::copy_buffer(q, src.mem(), dst.mem(), bytes, wait, want)
    })?;
    Counters::add(&src.ctx.counters.transfers_enqueued, 1);
    Ok(())
}
