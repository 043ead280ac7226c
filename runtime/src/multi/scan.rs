//! A scan (`cumsum`, `cumprod` and their exclusive forms) along axis 0 of an array split
//! across devices: each device scans its own rows and totals them; device `k` then adds
//! (multiplies) into its rows the total of the devices before it, copied to it. So each
//! device reads its rows once more than a scan on one device would, and only a row of
//! totals per device crosses between devices. Nothing waits on the host.

use crate::backend::context::Multi;
use crate::error::Result;
use crate::exec;
use crate::graph::parts::{Parts, Piece};
use crate::graph::{BinaryOp, Node, NodeRef, Op, ReduceOp, ReduceSpec, ScanSpec, State};
use crate::multi::combine::{combined, holder, on_device, shares};
use crate::multi::windows;
use crate::stats::Counters;

/// Materializes `node`, the scan `spec` (along axis 0) of `operand`.
pub(crate) fn scan(multi: &Multi, node: &NodeRef, spec: ScanSpec, operand: &NodeRef) -> Result<()> {
    let Some(shares) = shares(multi, operand) else {
        return on_device(multi, holder(multi, operand), node);
    };
    let rest: crate::graph::Shape = operand.shape[1..].iter().copied().collect();
    let (join, total_op) = match spec.op {
        ReduceOp::Prod => (BinaryOp::Mul, ReduceOp::Prod),
        _ => (BinaryOp::Add, ReduceOp::Sum),
    };
    // Each device's scan of its rows, and their total.
    let mut scanned: Vec<NodeRef> = Vec::new();
    let mut totals: Vec<(usize, NodeRef)> = Vec::new();
    for (device, rows) in &shares {
        let part = &multi.parts[*device];
        let mine = windows::record_one(multi, *device, operand, rows.clone())?;
        let local = Node::new(
            part.clone(),
            node.dtype,
            mine.shape.clone(),
            State::Lazy(Op::Scan(spec, mine.clone())),
        );
        let total = Node::new(
            part.clone(),
            node.dtype,
            rest.clone(),
            State::Lazy(Op::Reduce(
                ReduceSpec {
                    op: total_op,
                    axes: 1,
                },
                mine,
            )),
        );
        exec::materialize(&[local.clone(), total.clone()])?;
        scanned.push(local);
        totals.push((*device, total));
    }
    // Device k's rows take the totals of the devices before it.
    let mut pieces = Vec::new();
    for (k, ((device, rows), local)) in shares.iter().zip(scanned).enumerate() {
        let node_k = if k == 0 {
            local
        } else {
            let carry = combined(multi, *device, &totals[..k], total_op)?;
            let part = &multi.parts[*device];
            let joined = Node::new(
                part.clone(),
                node.dtype,
                local.shape.clone(),
                State::Lazy(Op::Binary(join, local, carry)),
            );
            // On the bridge queue, behind the copies of the earlier totals.
            exec::materialize_on(&multi.bridges[*device], std::slice::from_ref(&joined))?;
            Counters::add(&part.counters.device_combines, 1);
            joined
        };
        pieces.push(Piece {
            device: *device,
            rows: rows.clone(),
            node: node_k,
        });
    }
    node.set_parts(std::sync::Arc::new(Parts { pieces }));
    Ok(())
}
