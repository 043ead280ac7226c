//! Launching a row kernel: a work-group per `group / per_row` rows.

use crate::backend::submit::Command;
use crate::error::Result;
use crate::plan::row_kernel::RowsPlan;

use super::bind::{Bindings, Launch};

/// Launches row kernel `r`.
pub(super) fn launch_rows(mut l: Launch<'_>, r: &RowsPlan) -> Result<()> {
    let group = r.layout.group as usize;
    let io = l.io;
    let writes = io.writes();
    l.bind(Bindings::default())?;
    l.enqueue(
        Command::new(io.inputs, &writes),
        &[r.groups() * group],
        Some(&[group]),
    )
}
