//! Replaying planned flushes. A flush whose collected graph has the signature of one
//! planned before on this context (`plan::signature`: the same operations, types, shapes,
//! views and roots; any buffers and scalar values) runs that flush's plans, tiles chosen,
//! without planning: only its buffers and scalars are bound anew. Iterative programs
//! record the same step every iteration, so they plan once.

use std::sync::Arc;

use crate::backend::context::ContextInner;
use crate::codegen::abi::{self, Param};
use crate::plan::describe::kernel_kind;
use crate::plan::KernelPlan;

/// A flush's plans, ready to launch (every GEMM's tile chosen).
pub(crate) struct Replay {
    pub(crate) kernels: Vec<KernelPlan>,
    /// Each kernel's kind in one line (`plan::describe`), written once per structure and
    /// shared with every array its flushes materialize (`graph::Origin`).
    pub(crate) kinds: Arc<[String]>,
    /// Each kernel's parameter list (`codegen::abi::params`), so that a replayed launch
    /// only binds its buffers, sizes and scalars in that order.
    pub(crate) params: Vec<Vec<Param>>,
}

impl Replay {
    pub(crate) fn new(kernels: Vec<KernelPlan>) -> Replay {
        let kinds = kernels.iter().map(kernel_kind).collect();
        let params = kernels.iter().map(|k| abi::params(k).collect()).collect();
        Replay {
            kernels,
            kinds,
            params,
        }
    }
}

/// The plans kept for `signature`, if any.
pub(crate) fn find(ctx: &ContextInner, signature: &[u64]) -> Option<Arc<Replay>> {
    let found = ctx
        .replays
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(signature)?;
    found.downcast::<Replay>().ok()
}

/// Keeps `replay` for later flushes of `signature`.
pub(crate) fn keep(ctx: &ContextInner, signature: Vec<u64>, replay: Arc<Replay>) {
    ctx.replays
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(signature, replay);
}
