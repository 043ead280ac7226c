//! A multi-device context's flush (`Context::multi`). Its arrays are recorded once, as
//! on one device; materializing them splits the work by rows:
//!
//! 1. every reduction or scan along axis 0 in the graph is computed first, in graph
//!    order, each device reducing (scanning) its rows and the partials combined across
//!    devices (`combine`, `scan`);
//! 2. then each device records its rows of the roots on its own context (`windows`,
//!    with each operation's rule in `rows` and arrays' rows fetched by `fetch`) and
//!    flushes them: one fused flush per device, each on that device's queue;
//! 3. each root becomes its devices' pieces (`graph::parts`).
//!
//! Copies between devices wait on the devices, never on the host (`backend::bridge`).

pub(crate) mod assign;
pub(crate) mod combine;
pub(crate) mod fetch;
pub(crate) mod operand_runs;
pub(crate) mod scan;
pub(crate) mod windows;

use crate::backend::context::ContextInner;
use crate::error::{Error, Result};
use crate::exec;
use crate::graph::parts::{row_count, split_rows, Parts, Piece};
use crate::graph::{NodeRef, Op};

/// Whether `ctx` is a multi-device context.
#[inline]
pub(crate) fn is_multi(ctx: &ContextInner) -> bool {
    ctx.multi.is_some()
}

/// Materializes `roots`, nodes of one multi-device context; returns without waiting.
pub(crate) fn materialize(roots: &[NodeRef]) -> Result<()> {
    let Some(first) = roots.first() else {
        return Ok(());
    };
    exec::same_context(roots)?;
    let Some(multi) = first.ctx.multi.as_ref() else {
        return Err(Error::Internal(
            "a one-device array reached a multi-device flush".into(),
        ));
    };
    for (node, op) in windows::graph_order(roots.iter())? {
        match op.filter(combine::crosses_devices) {
            Some(Op::Reduce(spec, operand)) => combine::reduce(multi, &node, spec, &operand)?,
            Some(Op::Scan(spec, operand)) => scan::scan(multi, &node, spec, &operand)?,
            _ => {}
        }
    }
    let mut lazy: Vec<NodeRef> = Vec::new();
    for r in roots {
        if r.parts().is_none() && !lazy.iter().any(|l| std::sync::Arc::ptr_eq(l, r)) {
            lazy.push(r.clone());
        }
    }
    if lazy.is_empty() {
        return Ok(());
    }
    let mut pieces: Vec<Vec<Piece>> = vec![Vec::new(); lazy.len()];
    for device in 0..multi.parts.len() {
        let mut wants = Vec::new();
        let mut which = Vec::new();
        for (k, r) in lazy.iter().enumerate() {
            let rows = share(multi, device, &r.shape);
            if let Some(rows) = rows {
                wants.push((r.clone(), rows));
                which.push(k);
            }
        }
        if wants.is_empty() {
            continue;
        }
        let made = windows::record(multi, device, &wants)?;
        exec::materialize(&made)?;
        for ((k, (_, rows)), node) in which.into_iter().zip(wants).zip(made) {
            pieces[k].push(Piece { device, rows, node });
        }
    }
    for (r, p) in lazy.iter().zip(pieces) {
        if p.is_empty() {
            return Err(Error::Internal("an array was computed on no device".into()));
        }
        r.set_parts(std::sync::Arc::new(Parts { pieces: p }));
    }
    Ok(())
}

/// The rows of an array of `shape` that device `device` computes (`None`: none). A 0-d
/// array is the first device's; an array of no rows has one empty piece there.
fn share(
    multi: &crate::backend::context::Multi,
    device: usize,
    shape: &[usize],
) -> Option<std::ops::Range<usize>> {
    if shape.is_empty() || row_count(shape) == 0 {
        return (device == 0).then(|| 0..row_count(shape));
    }
    let rows = split_rows(shape[0], &multi.weights).swap_remove(device);
    (!rows.is_empty()).then_some(rows)
}

/// The pieces of `parts` that cover rows `0..n` once each, in order, with the rows of
/// each piece's own that are used.
pub(crate) fn cover(parts: &Parts, n: usize) -> Result<Vec<(Piece, std::ops::Range<usize>)>> {
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < n {
        let p = parts
            .pieces
            .iter()
            .filter(|p| p.rows.contains(&pos))
            .max_by_key(|p| p.rows.end)
            .ok_or_else(|| Error::Internal(format!("row {pos} is on no device")))?;
        let end = p.rows.end.min(n);
        out.push((p.clone(), pos - p.rows.start..end - p.rows.start));
        pos = end;
    }
    Ok(out)
}
