//! Captured steps (`Context::capture`): a flush traced once from a closure, then launched
//! again with new inputs without recording, collecting, signing or looking anything up.
//! A run binds the new inputs' buffers, takes its outputs from the pool and launches the
//! kernels it keeps: the host work of as many bound `#[kernel]` launches.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::backend::buffer::DeviceBuffer;
use crate::backend::context::ContextInner;
use crate::backend::kernel::CompiledKernel;
use crate::backend::queue::QueueInner;
use crate::dtype::{DType, ScalarBits};
use crate::error::{Error, Result};
use crate::graph::{IndexFn, Node, NodeRef, Shape, State};
use crate::plan::{GKind, Leaves, OpCode};
use crate::stats::Counters;

use super::build::{has_work, kernel_for};
use super::launch::launch_kernels;
use super::replay::Replay;
use super::{flush_origin, plan, run, Flush, FLUSHES};

/// What a run of a captured step needs: the traced flush's plans and kernels, its
/// graph's leaves, and where each output comes from.
pub(crate) struct Captured {
    ctx: Arc<ContextInner>,
    replay: Arc<Replay>,
    /// Each plan's kernel (`None`: an empty kernel, launched by nobody), held here so a
    /// run looks nothing up.
    kernels: Vec<Option<Arc<CompiledKernel>>>,
    leaves: Vec<Leaf>,
    outputs: Vec<StepOutput>,
}

/// A node of the traced graph, as a run binds it.
enum Leaf {
    /// Memory read by every run: an array the closure read besides its inputs.
    Buffer(Arc<DeviceBuffer>),
    /// A scalar, as it was when traced.
    Scalar(ScalarBits),
    /// Input `i` of the step: the run's memory or value.
    Input(usize),
    /// Computed by the flush.
    Computed,
}

/// What a run binds for one of the step's inputs.
pub(crate) enum StepInput {
    /// A materialized array: its memory.
    Memory(Arc<DeviceBuffer>),
    /// A host value (a lazy 0-d scalar array): a kernel argument.
    Scalar(ScalarBits),
}

/// Where an output of a run comes from.
enum StepOutput {
    /// Materialized by the flush at graph index `node`.
    Computed { node: usize, dtype: DType, shape: Shape },
    /// The run's input `i`, returned as it is.
    Input(usize),
    /// An array the closure read and returned unchanged.
    Constant(NodeRef),
}

/// What tracing found.
pub(crate) enum Traced {
    Captured(Captured),
    /// An input's memory is also another leaf of the flush (the same array passed twice,
    /// or read by the closure besides): the plan would read them as one, so the trace
    /// must be made again from inputs in memory of their own. Nothing was launched.
    Aliased,
}

/// Plans and launches the flush of `roots` (the outputs the closure recorded) on `queue`,
/// `inputs` being the placeholders the closure was given (materialized nodes; lazy
/// scalars for host values); keeps what later runs need.
/// The roots are materialized like any flush's. A placeholder that is a lazy scalar (a
/// host value) becomes a scalar leaf, which runs bind to their own value.
pub(crate) fn trace(queue: &Arc<QueueInner>, inputs: &[NodeRef], roots: &[NodeRef]) -> Result<Traced> {
    let Some(first) = inputs.first().or(roots.first()) else {
        return Err(Error::InvalidStep {
            reason: "the step has no inputs and no outputs".into(),
        });
    };
    let ctx = first.ctx.clone();
    let Some(flush) = plan(roots)? else {
        return Err(Error::InvalidStep {
            reason: "the step returned no arrays".into(),
        });
    };
    if flush
        .graph
        .iter()
        .any(|g| matches!(g.kind, GKind::Op(OpCode::FromIndex(IndexFn::Random(_)), _)))
    {
        return Err(Error::InvalidStep {
            reason: "it draws random numbers: a run replays the scalars the closure recorded, \
                     seeds and offsets included, so every run would draw the same numbers; draw \
                     them outside the step and pass them as an input"
                .into(),
        });
    }
    let leaves = leaves_of(&flush, inputs);
    if aliased(&flush, &leaves) {
        return Ok(Traced::Aliased);
    }
    let outputs = outputs_of(&flush, &leaves);
    let replay = run(queue, flush, &[])?;
    let kernels = replay
        .kernels
        .iter()
        .map(|p| has_work(p).then(|| kernel_for(&ctx, p)).transpose())
        .collect::<Result<_>>()?;
    Ok(Traced::Captured(Captured {
        ctx,
        replay,
        kernels,
        leaves,
        outputs,
    }))
}

/// How a run binds each node of `flush`'s graph, `inputs` being the step's placeholders.
fn leaves_of(flush: &Flush, inputs: &[NodeRef]) -> Vec<Leaf> {
    let input_at = |gi: usize| inputs.iter().position(|n| Arc::ptr_eq(n, &flush.graph[gi].node));
    let mut leaves = Vec::with_capacity(flush.graph.len());
    for (gi, g) in flush.graph.iter().enumerate() {
        leaves.push(match (&g.kind, input_at(gi)) {
            (GKind::Ready(_) | GKind::Scalar(_), Some(i)) => Leaf::Input(i),
            (GKind::Ready(b), None) => Leaf::Buffer(b.clone()),
            (GKind::Scalar(bits), _) => Leaf::Scalar(*bits),
            (GKind::Op(..), _) => Leaf::Computed,
        });
    }
    leaves
}

/// Whether an input's memory is also another leaf of `flush` ([`Traced::Aliased`]).
fn aliased(flush: &Flush, leaves: &[Leaf]) -> bool {
    let buffer_of = |leaf: &Leaf, gi: usize| match leaf {
        Leaf::Input(_) | Leaf::Buffer(_) => flush.graph.buffer(gi).map(|b| b.mem()),
        _ => None,
    };
    leaves.iter().enumerate().any(|(gi, leaf)| {
        let Leaf::Input(_) = leaf else {
            return false;
        };
        let mem = buffer_of(leaf, gi);
        leaves
            .iter()
            .enumerate()
            .any(|(gj, other)| gj != gi && mem.is_some() && buffer_of(other, gj) == mem)
    })
}

/// Where each output of a run comes from: each of `flush`'s roots.
fn outputs_of(flush: &Flush, leaves: &[Leaf]) -> Vec<StepOutput> {
    flush
        .roots
        .iter()
        .map(|&gi| {
            let g = &flush.graph[gi];
            match (&leaves[gi], &g.kind) {
                (Leaf::Input(i), _) => StepOutput::Input(*i),
                (_, GKind::Ready(_)) => StepOutput::Constant(g.node.clone()),
                _ => StepOutput::Computed {
                    node: gi,
                    dtype: g.node.dtype,
                    shape: g.node.shape.clone(),
                },
            }
        })
        .collect()
}

/// A run's view of the traced graph's leaves: the step's own, and this run's inputs.
struct RunLeaves<'a> {
    leaves: &'a [Leaf],
    inputs: &'a [StepInput],
}

impl Leaves for RunLeaves<'_> {
    fn len(&self) -> usize {
        self.leaves.len()
    }

    fn buffer(&self, i: usize) -> Option<&Arc<DeviceBuffer>> {
        match self.leaves.get(i)? {
            Leaf::Buffer(b) => Some(b),
            Leaf::Input(k) => match self.inputs.get(*k)? {
                StepInput::Memory(b) => Some(b),
                StepInput::Scalar(_) => None,
            },
            _ => None,
        }
    }

    fn scalar(&self, i: usize) -> Option<ScalarBits> {
        match self.leaves.get(i)? {
            Leaf::Scalar(bits) => Some(*bits),
            Leaf::Input(k) => match self.inputs.get(*k)? {
                StepInput::Scalar(bits) => Some(*bits),
                StepInput::Memory(_) => None,
            },
            _ => None,
        }
    }
}

/// Launches `step`'s kernels on `queue` over `inputs` (nodes bound as `bound` says, of the
/// shapes, types and kinds traced); returns its outputs, in the closure's order.
pub(crate) fn replay(
    step: &Captured,
    queue: &Arc<QueueInner>,
    inputs: &[NodeRef],
    bound: &[StepInput],
) -> Result<smallvec::SmallVec<[NodeRef; 8]>> {
    let ctx = &step.ctx;
    queue.context.check(
        &ctx.tag,
        || "running a captured step".into(),
        || "the step".into(),
    )?;
    let leaves = RunLeaves {
        leaves: &step.leaves,
        inputs: bound,
    };
    let find = |ki: usize, _: &_| Ok(step.kernels[ki].clone());
    let mut produced = launch_kernels(ctx, queue, &leaves, &step.replay, find, &[])?;
    Counters::add(&ctx.counters.steps_replayed, 1);
    let number = FLUSHES.fetch_add(1, Ordering::Relaxed);
    let mut out = smallvec::SmallVec::<[NodeRef; 8]>::with_capacity(step.outputs.len());
    for (k, o) in step.outputs.iter().enumerate() {
        out.push(match o {
            // (An output returned twice is one array, as in any flush.)
            StepOutput::Computed { node, .. } if step.outputs[..k].iter().any(|e| same(e, *node)) => {
                let j = step.outputs[..k].iter().position(|e| same(e, *node));
                j.map_or_else(|| Err(internal()), |j| Ok(out[j].clone()))?
            }
            StepOutput::Computed { node, dtype, shape } => match produced[*node].take() {
                Some((b, kernel)) => {
                    let origin = flush_origin(number, kernel, &step.replay);
                    Node::new(ctx.clone(), *dtype, shape.clone(), State::Ready(b, origin))
                }
                None => return Err(internal()),
            },
            StepOutput::Input(i) => inputs[*i].clone(),
            StepOutput::Constant(n) => n.clone(),
        });
    }
    Ok(out)
}

/// Whether `output` is the one computed at graph index `node`.
fn same(output: &StepOutput, node: usize) -> bool {
    matches!(output, StepOutput::Computed { node: n, .. } if *n == node)
}

fn internal() -> Error {
    Error::Internal("a captured step's output was not produced".into())
}
