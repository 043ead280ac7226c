//! Captured steps: `Context::capture` turns a closure over arrays into a [`Step`] whose
//! runs launch the closure's kernels on new inputs without recording or planning
//! (`exec::step`).

use std::sync::{Arc, Mutex};

use crate::api::array::{copy_buffer, Array};
use crate::api::eval::NodeHandle;
use crate::api::ops::{CtxRef, Operand};
use crate::api::queue::Queue;
use crate::backend::buffer::DeviceBuffer;
use crate::backend::context::{Context, ContextInner};
use crate::backend::queue::QueueInner;
use crate::dtype::Element;
use crate::error::{Error, Result};
use crate::exec::step::{self, Captured, StepInput, Traced};
use crate::graph::eager::Watch;
use crate::graph::{Node, NodeRef, Op, Origin, Shape, State};

/// The arrays a captured step takes or returns: one [`Array`], or a tuple of up to eight
/// (element types may differ). Sealed: implemented for those types only.
pub trait StepArrays: Sized + sealed::Sealed {
    /// Gives `push` the arrays' graph nodes, in order.
    #[doc(hidden)]
    fn step_nodes(&self, push: &mut dyn FnMut(NodeHandle));
    /// The arrays of `nodes` (as many as this type holds, of its element types).
    #[doc(hidden)]
    fn from_step_nodes(nodes: &mut dyn Iterator<Item = NodeHandle>) -> Result<Self>;
}

/// What [`Step::run`] takes for a step whose inputs are `I`: for each input a
/// [`StepArg`], a reference to an array or a host value (`&x`, or `(&w, &b)`, or
/// `(&w, 0.1f32)` for a step over `(Array<f32>, Array<f32>)`). Sealed.
pub trait StepArgs<I: StepArrays>: sealed::Sealed {
    /// Gives `push` the arguments' graph nodes, in order.
    #[doc(hidden)]
    fn step_nodes(&self, ctx: CtxRef<'_>, push: &mut dyn FnMut(NodeHandle));
}

/// One input of a [`Step::run`] for an `Array<T>` of the closure: a reference to an
/// array, or a host value of type `T`. A host value (like a lazy [`Context::scalar`]) is
/// passed to the step's kernels as an argument: a run with a new value (a learning rate
/// that decays) uploads and launches nothing more. Sealed.
pub trait StepArg<T: Element>: sealed::Arg {
    /// The argument's graph node.
    #[doc(hidden)]
    fn step_node(&self, ctx: CtxRef<'_>) -> NodeHandle;
}

impl<T: Element> StepArg<T> for &Array<T> {
    fn step_node(&self, _: CtxRef<'_>) -> NodeHandle {
        NodeHandle(self.node.clone())
    }
}

impl<T: Element> StepArg<T> for T {
    fn step_node(&self, ctx: CtxRef<'_>) -> NodeHandle {
        NodeHandle(Operand::into_array(*self, ctx).node)
    }
}

/// The graph nodes of a step's arrays or arguments (at most eight: stored inline).
type StepNodes = smallvec::SmallVec<[NodeRef; 8]>;

/// The graph nodes of `arrays`, in order.
fn nodes_of(arrays: &impl StepArrays) -> StepNodes {
    let mut nodes = StepNodes::new();
    arrays.step_nodes(&mut |h| nodes.push(h.0));
    nodes
}

/// The graph nodes of a run's arguments `args` (host values become scalars of `ctx`).
fn args_of<I: StepArrays>(ctx: &Arc<ContextInner>, args: &impl StepArgs<I>) -> StepNodes {
    let mut nodes = StepNodes::new();
    args.step_nodes(CtxRef(ctx), &mut |h| nodes.push(h.0));
    nodes
}

/// The next of a step's nodes; an internal error if there are fewer than the type holds.
fn next_node(nodes: &mut dyn Iterator<Item = NodeHandle>) -> Result<NodeRef> {
    nodes
        .next()
        .map(|h| h.0)
        .ok_or_else(|| Error::Internal("a step was given fewer arrays than its type holds".into()))
}

/// The traits' seals: a step's arrays are counted by their type, so that a run can never
/// be handed fewer arrays than its closure takes.
mod sealed {
    pub trait Sealed {}
    pub trait Arg {}
}

impl<T: Element> sealed::Sealed for Array<T> {}
impl<T: Element> sealed::Arg for &Array<T> {}
impl<T: Element> sealed::Arg for T {}

impl<T: Element> StepArrays for Array<T> {
    fn step_nodes(&self, push: &mut dyn FnMut(NodeHandle)) {
        push(NodeHandle(self.node.clone()))
    }

    fn from_step_nodes(nodes: &mut dyn Iterator<Item = NodeHandle>) -> Result<Self> {
        Ok(Array::from_node(next_node(nodes)?))
    }
}

/// The arguments of a one-input step: the one argument itself (`&x`, or a host value).
impl<T: Element> sealed::Sealed for &Array<T> {}
impl<T: Element> sealed::Sealed for T {}

impl<T: Element> StepArgs<Array<T>> for &Array<T> {
    fn step_nodes(&self, ctx: CtxRef<'_>, push: &mut dyn FnMut(NodeHandle)) {
        push(self.step_node(ctx))
    }
}

impl<T: Element> StepArgs<Array<T>> for T {
    fn step_nodes(&self, ctx: CtxRef<'_>, push: &mut dyn FnMut(NodeHandle)) {
        push(self.step_node(ctx))
    }
}

macro_rules! step_tuple {
    ($($t:ident $a:ident $i:tt),*) => {
        impl<$($t: Element),*> sealed::Sealed for ($(Array<$t>,)*) {}
        impl<$($a: sealed::Arg),*> sealed::Sealed for ($($a,)*) {}

        impl<$($t: Element),*> StepArrays for ($(Array<$t>,)*) {
            fn step_nodes(&self, push: &mut dyn FnMut(NodeHandle)) {
                $(push(NodeHandle(self.$i.node.clone()));)*
            }

            fn from_step_nodes(nodes: &mut dyn Iterator<Item = NodeHandle>) -> Result<Self> {
                Ok(($(Array::<$t>::from_node(next_node(nodes)?),)*))
            }
        }

        impl<$($t: Element, $a: StepArg<$t>),*> StepArgs<($(Array<$t>,)*)> for ($($a,)*) {
            fn step_nodes(&self, ctx: CtxRef<'_>, push: &mut dyn FnMut(NodeHandle)) {
                $(push(self.$i.step_node(ctx));)*
            }
        }
    };
}
step_tuple!(A PA 0);
step_tuple!(A PA 0, B PB 1);
step_tuple!(A PA 0, B PB 1, C PC 2);
step_tuple!(A PA 0, B PB 1, C PC 2, D PD 3);
step_tuple!(A PA 0, B PB 1, C PC 2, D PD 3, E PE 4);
step_tuple!(A PA 0, B PB 1, C PC 2, D PD 3, E PE 4, F PF 5);
step_tuple!(A PA 0, B PB 1, C PC 2, D PD 3, E PE 4, F PF 5, G PG 6);
step_tuple!(A PA 0, B PB 1, C PC 2, D PD 3, E PE 4, F PF 5, G PG 6, H PH 7);

/// Traces kept per step, one per combination of input shapes and kinds (the oldest goes
/// first).
const TRACES_KEPT: usize = 8;

/// A computation over arrays captured once and run many times (`Context::capture`): a
/// run launches the kernels the closure's graph needs with the new inputs' memory bound,
/// and records, collects and plans nothing. Its first run with inputs of new shapes
/// traces: it calls the closure and evaluates what it returns as an ordinary flush.
///
/// What a run replays as it was traced: the closure's structure (a branch on data
/// decided when traced stays decided), its scalars (a learning rate computed inside is a
/// constant), and the arrays it reads besides its inputs (their memory, as it is when
/// the run's kernels execute). Pass whatever changes between runs as an input: an array,
/// or a host value ([`StepArg`]: `step.run((&w, lr))`), which the closure sees as a 0-d
/// array and the kernels take as an argument. A step is `Send + Sync` (its closure must
/// be): threads may run one step at once, each run on its own inputs. Refused,
/// with [`Error::InvalidStep`] naming what the closure did: a step that draws random
/// numbers (every run would draw the same ones), and one whose closure runs anything on
/// the device when called instead of recording it — an evaluation (`eval`, `assign`, a
/// read), a sort (`sort`, `argsort`, `topk`), a compaction, `scatter_add` or `bincount`,
/// `slice_mut(..).assign`, a `#[kernel]` launch — since every run would read what that
/// produced when traced. Uploads and fills (`from_slice`, `zeros`) inside the closure are
/// constants and allowed.
pub struct Step<'f, I: StepArrays, O: StepArrays> {
    ctx: Arc<ContextInner>,
    f: Box<dyn Fn(I) -> Result<O> + Send + Sync + 'f>,
    traces: Mutex<Vec<Trace>>,
}

/// A traced step for inputs of these shapes and kinds.
struct Trace {
    inputs: Vec<TracedInput>,
    captured: Arc<Captured>,
}

/// What a trace was made for, per input: its shape, and whether it was a host value (a
/// kernel argument) or memory.
#[derive(Debug, PartialEq)]
struct TracedInput {
    shape: Shape,
    scalar: bool,
}

impl TracedInput {
    fn of(node: &Node, bound: &StepInput) -> TracedInput {
        TracedInput {
            shape: node.shape.clone(),
            scalar: matches!(bound, StepInput::Scalar(_)),
        }
    }

    /// Whether a run's input `node`, bound as `bound`, is of the kind traced.
    fn fits(&self, node: &Node, bound: &StepInput) -> bool {
        self.shape == node.shape && self.scalar == matches!(bound, StepInput::Scalar(_))
    }
}

impl Context {
    /// Captures `f`, a step over arrays (one array or a tuple of up to eight, in and out),
    /// as a [`Step`]: its runs launch `f`'s kernels on new inputs with only their memory
    /// bound, the host work of as many bound `#[kernel]` launches, where an implicit flush
    /// also records, collects and looks up its graph's structure. For loops whose step is
    /// the same every iteration (a training step, a solver's iteration). Nothing runs
    /// until the first [`Step::run`].
    ///
    /// ```
    /// # use lazycl::prelude::*;
    /// # fn main() -> lazycl::Result<()> {
    /// let ctx = Context::new()?;
    /// let target = ctx.from_slice(&[1.0f32, -3.0])?;
    /// // One gradient step of (w - target)², with the step size as an input.
    /// let step = ctx.capture(|(w, lr): (Array<f32>, Array<f32>)| {
    ///     let grad = 2.0 * (&w - &target);
    ///     Ok(&w - lr * grad)
    /// });
    /// let mut w = ctx.zeros::<f32>(2)?;
    /// w = step.run((&w, 0.25f32))?; // traces: one ordinary flush
    /// let before = ctx.stats();
    /// // A host value is a kernel argument: a step size that halves uploads nothing.
    /// w = step.run((&w, 0.125f32))?;
    /// w = step.run((&w, 0.0625f32))?;
    /// let d = ctx.stats() - before;
    /// assert_eq!((d.steps_replayed, d.kernels_launched, d.bytes_uploaded), (2, 2, 0));
    /// assert_eq!((d.flushes_planned, d.plans_reused), (0, 0)); // nothing recorded
    /// assert_eq!(w.to_vec()?, [0.671875, -2.015625]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn capture<'f, I, O, F>(&self, f: F) -> Step<'f, I, O>
    where
        I: StepArrays,
        O: StepArrays,
        F: Fn(I) -> Result<O> + Send + Sync + 'f,
    {
        Step {
            ctx: self.inner.clone(),
            f: Box::new(f),
            traces: Mutex::new(Vec::new()),
        }
    }
}

impl<I: StepArrays, O: StepArrays> Step<'_, I, O> {
    /// Runs the step on `inputs` (references to its input arrays, or host values) on the
    /// context's default queue; returns its outputs without waiting. Inputs that are still
    /// lazy are evaluated first (one flush), but host values (and lazy
    /// [`Context::scalar`]s), which are bound as kernel arguments. Inputs of shapes or
    /// kinds (host value or memory) not seen before trace the step again.
    pub fn run<A: StepArgs<I>>(&self, inputs: A) -> Result<O> {
        let queue = self.ctx.queue().clone();
        self.run_impl(&queue, &args_of(&self.ctx, &inputs))
    }

    /// Like [`run`](Step::run), on `queue`.
    pub fn run_on<A: StepArgs<I>>(&self, queue: &Queue, inputs: A) -> Result<O> {
        queue.check_context(&self.ctx, || "Step::run_on".into())?;
        crate::api::array::one_device(&self.ctx, "Step::run_on")?;
        self.run_impl(&queue.inner, &args_of(&self.ctx, &inputs))
    }

    fn run_impl(&self, queue: &Arc<QueueInner>, nodes: &StepNodes) -> Result<O> {
        for (i, n) in nodes.iter().enumerate() {
            self.ctx.tag.check(
                &n.ctx.tag,
                || "Step::run".into(),
                || format!("input {} of {} (shape {:?})", i + 1, nodes.len(), n.shape),
            )?;
        }
        if crate::multi::is_multi(&self.ctx) {
            // Several devices: the closure runs and its outputs are evaluated, each time
            // (no trace is kept: every device's flush replays its own plans).
            let outputs = (self.f)(I::from_step_nodes(&mut nodes.iter().cloned().map(NodeHandle))?)?;
            crate::multi::materialize(&nodes_of(&outputs))?;
            return Ok(outputs);
        }
        // Inputs still lazy are evaluated, but for host values, bound as arguments.
        let lazy: Vec<NodeRef> = nodes
            .iter()
            .filter(|n| matches!(&*n.state(), State::Lazy(op) if !matches!(op, Op::Scalar(_))))
            .cloned()
            .collect();
        if !lazy.is_empty() {
            crate::exec::materialize_on(queue, &lazy)?;
        }
        let bound = nodes
            .iter()
            .map(|n| match &*n.state() {
                State::Ready(b, _) => Ok(StepInput::Memory(b.clone())),
                State::Lazy(Op::Scalar(bits)) => Ok(StepInput::Scalar(*bits)),
                State::Failed(e) => Err((**e).clone()),
                _ => Err(Error::Internal("a step's input was not materialized".into())),
            })
            .collect::<Result<smallvec::SmallVec<[StepInput; 4]>>>()?;
        let found = self
            .traces
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .find(|t| {
                t.inputs.len() == nodes.len()
                    && t.inputs
                        .iter()
                        .zip(nodes.iter().zip(&bound))
                        .all(|(t, (n, b))| t.fits(n, b))
            })
            .map(|t| t.captured.clone());
        match found {
            Some(captured) => {
                let out = step::replay(&captured, queue, nodes, &bound)?;
                O::from_step_nodes(&mut out.into_iter().map(NodeHandle))
            }
            None => self.trace(queue, nodes, &bound),
        }
    }

    /// Calls the closure on placeholders of `nodes` and evaluates what it returns,
    /// keeping the trace for later runs on inputs of these shapes and kinds. The
    /// placeholders of memory share the inputs' memory, unless that memory is another leaf
    /// of the flush too (then they get copies, and the closure is called again); those of
    /// host values are lazy scalars of their own.
    fn trace(&self, queue: &Arc<QueueInner>, nodes: &[NodeRef], bound: &[StepInput]) -> Result<O> {
        for own_memory in [false, true] {
            let mut placeholders = Vec::with_capacity(nodes.len());
            for (n, input) in nodes.iter().zip(bound) {
                let state = match input {
                    StepInput::Scalar(bits) => State::Lazy(Op::Scalar(*bits)),
                    StepInput::Memory(b) => {
                        let memory = if own_memory {
                            let bytes = n.numel() * n.dtype.size();
                            let copy = DeviceBuffer::uninit(
                                &self.ctx.cl,
                                bytes,
                                queue,
                                "a step's copy of an input",
                            )?;
                            copy_buffer(queue, b, &copy, bytes)?;
                            copy
                        } else {
                            b.clone()
                        };
                        let origin = n.origin().unwrap_or(Origin::WrittenBy("a captured step's input"));
                        State::Ready(memory, origin)
                    }
                };
                placeholders.push(Node::new(self.ctx.clone(), n.dtype, n.shape.clone(), state));
            }
            // (Flushes handed over before are finished first: one the closure's first
            // command took back would run here, watched, as if the closure had asked.)
            self.ctx.jobs().settle()?;
            let watch = Watch::open();
            let outputs = (self.f)(I::from_step_nodes(
                &mut placeholders.iter().cloned().map(NodeHandle),
            )?)?;
            if let Some(what) = watch.seen() {
                return Err(Error::InvalidStep {
                    reason: format!(
                        "the closure ran {what} on the device when called, outside the lazy \
                         graph a run replays: every run would read the result it had when traced \
                         instead of computing it from its own inputs; run it outside the step and \
                         pass its result as an input"
                    ),
                });
            }
            drop(watch);
            let roots = nodes_of(&outputs);
            for (i, r) in roots.iter().enumerate() {
                self.ctx.tag.check(
                    &r.ctx.tag,
                    || "capturing a step".into(),
                    || format!("output {} of {} (shape {:?})", i + 1, roots.len(), r.shape),
                )?;
            }
            match step::trace(queue, &placeholders, &roots)? {
                Traced::Captured(captured) => {
                    let inputs: Vec<TracedInput> = nodes
                        .iter()
                        .zip(bound)
                        .map(|(n, b)| TracedInput::of(n, b))
                        .collect();
                    let mut traces = self.traces.lock().unwrap_or_else(|e| e.into_inner());
                    // (Another thread may have traced these inputs meanwhile: one is kept.)
                    if !traces.iter().any(|t| t.inputs == inputs) {
                        if traces.len() == TRACES_KEPT {
                            traces.remove(0);
                        }
                        traces.push(Trace {
                            inputs,
                            captured: Arc::new(captured),
                        });
                    }
                    return Ok(outputs);
                }
                Traced::Aliased => continue,
            }
        }
        Err(Error::Internal(
            "a step's inputs shared memory with its graph after being copied".into(),
        ))
    }
}

impl<I: StepArrays, O: StepArrays> std::fmt::Debug for Step<'_, I, O> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let traces = self.traces.lock().unwrap_or_else(|e| e.into_inner());
        let inputs: Vec<_> = traces.iter().map(|t| &t.inputs).collect();
        f.debug_struct("Step").field("traced_inputs", &inputs).finish()
    }
}
