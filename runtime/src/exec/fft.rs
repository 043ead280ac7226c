//! Launching a transform pass: one work-group per [`FftPlan::vectors`] vectors, of the
//! plan's own size.

use crate::backend::submit::Command;
use crate::error::Result;
use crate::plan::FftPlan;

use super::bind::{Bindings, Launch};

/// Launches pass `f`: its groups, whatever the device (a group's vectors fill it).
pub(crate) fn launch_fft(mut l: Launch<'_>, f: &FftPlan) -> Result<()> {
    let io = l.io;
    let writes = io.writes();
    l.bind(Bindings::default())?;
    let group = f.group_size() as usize;
    if f.groups() == 0 {
        return Ok(());
    }
    l.enqueue(
        Command::new(io.inputs, &writes),
        &[f.groups() * group],
        Some(&[group]),
    )
}
