//! `eval()`'s side of background dispatch (ARCHITECTURE.md, *Background dispatch*):
//! whether it hands its flush over (`Dispatch::hands_over`), and what it checks on the
//! caller's thread before it hands a flush to the context's dispatch thread
//! (`backend::dispatch`).

use std::sync::Arc;

use crate::backend::buffer::DeviceBuffer;
use crate::backend::queue::QueueInner;
use crate::error::Result;
use crate::exec;
use crate::graph::{NodeRef, State};

/// `eval()`'s flush of `nodes` on `queue` (`None`: the default queue): handed to the
/// context's dispatch thread, where its dispatch mode says so, once what can be checked
/// at once is (recording errors, one context, the queue's context, the roots' sizes);
/// else run here (and always on a multi-device context, and while a step's closure is
/// traced), after the jobs this thread handed over before.
pub(crate) fn eval_nodes(queue: Option<&Arc<QueueInner>>, nodes: &[NodeRef]) -> Result<()> {
    let Some(first) = nodes.first() else {
        return Ok(());
    };
    let ctx = first.ctx.clone();
    if crate::multi::is_multi(&ctx) {
        return crate::multi::materialize(nodes);
    }
    // (While a step's closure is traced, its evaluations run here, where the step's watch
    // notices them: `graph::eager`.)
    if !ctx.dispatch.hands_over() || crate::graph::eager::watching() {
        let flushed = match queue {
            Some(q) => exec::materialize_on(q, nodes),
            None => exec::materialize(nodes),
        };
        ctx.dispatch.flushed();
        return flushed;
    }
    exec::same_context(nodes)?;
    let mut lazy = false;
    for n in nodes {
        match &*n.state() {
            State::Failed(e) => return Err((**e).clone()),
            State::Lazy(_) => lazy = true,
            _ => continue,
        }
        // A lazy root is computed into memory of its own shape: whether it can be is
        // known now (an operand too large to compute is found by the flush).
        crate::plan::check_iteration_space(&n.shape)?;
        let bytes = n.numel().saturating_mul(n.dtype.size());
        DeviceBuffer::check_size(&ctx.cl, bytes, "a kernel's output")?;
    }
    if !lazy {
        return Ok(());
    }
    let queue = queue.unwrap_or(ctx.queue()).clone();
    queue
        .context
        .check(&ctx.tag, || "eval".into(), || "the arrays".into())?;
    // The job owns its roots (the only copy of them an `eval()` makes).
    let nodes = nodes.to_vec();
    ctx.jobs()
        .hand_over(Box::new(move || exec::materialize_on(&queue, &nodes)))
}
