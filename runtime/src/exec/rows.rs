//! Launching a row kernel: a work-group per `group / per_row` rows.

use std::sync::Arc;

use crate::backend::context::ContextInner;
use crate::backend::kernel::{CompiledKernel, KernelArg};
use crate::backend::queue::QueueInner;
use crate::backend::submit::Command;
use crate::error::{Error, Result};
use crate::plan::KernelPlan;

use super::bind::{Bindings, Io};

pub(super) fn launch_rows(
    ctx: &Arc<ContextInner>,
    queue: &Arc<QueueInner>,
    kernel: &CompiledKernel,
    plan: &KernelPlan,
    args: &mut Vec<KernelArg>,
    io: Io<'_>,
) -> Result<()> {
    let Some(r) = &plan.rows else {
        return Err(Error::Internal("a row kernel launched without its plan".into()));
    };
    let group = r.layout.group as usize;
    let writes = io.writes();
    Bindings {
        io,
        ..Bindings::default()
    }
    .bind(plan, args)?;
    kernel.launch(
        ctx,
        queue,
        Command::new(io.inputs, &writes),
        &[r.groups() * group],
        Some(&[group]),
        args,
    )?;
    Ok(())
}
