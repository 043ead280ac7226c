//! A reduction along axis 0 (and perhaps other axes) of an array split across devices:
//! each device reduces its own rows (its producers fused in, as on one device), and the
//! first device combines the partial results, copied to it, in one more small kernel.
//! Nothing waits on the host: the copies wait for the partials on the devices.

use std::sync::Arc;

use crate::backend::context::Multi;
use crate::error::Result;
use crate::exec;
use crate::graph::parts::{row_count, split_rows, Parts, Piece};
use crate::graph::view::{SourceAxis, ViewMap};
use crate::graph::{BinaryOp, InlineScalar, Node, NodeRef, Op, ReduceOp, ReduceSpec, Side, State};
use crate::multi::windows;
use crate::stats::Counters;

/// Whether `op` reduces or scans along axis 0 of an operand that has one: such a node is
/// combined across devices before anything reads it (`reduce`, `multi::scan`).
pub(crate) fn crosses_devices(op: &Op) -> bool {
    match op {
        Op::Reduce(spec, a) => spec.axes & 1 == 1 && !a.shape.is_empty(),
        Op::Scan(spec, a) => spec.axis == 0 && !a.shape.is_empty(),
        _ => false,
    }
}

/// Materializes `node`, the reduction `spec` of `operand` along axis 0 and maybe others.
pub(crate) fn reduce(multi: &Multi, node: &NodeRef, spec: ReduceSpec, operand: &NodeRef) -> Result<()> {
    let partial_op = match spec.op {
        ReduceOp::Mean => ReduceOp::Sum,
        ReduceOp::Sum | ReduceOp::Prod | ReduceOp::Min | ReduceOp::Max => spec.op,
        // An index needs the values beside it: the first device reduces the whole.
        ReduceOp::ArgMin | ReduceOp::ArgMax => return on_device(multi, 0, node),
    };
    let Some(shares) = shares(multi, operand) else {
        return on_device(multi, holder(multi, operand), node);
    };
    let mut partials: Vec<NodeRef> = Vec::new();
    for (device, rows) in &shares {
        let rows_of_device = windows::record_one(multi, *device, operand, rows.clone())?;
        let partial = Node::new(
            multi.parts[*device].clone(),
            node.dtype,
            node.shape.clone(),
            State::Lazy(Op::Reduce(
                ReduceSpec {
                    op: partial_op,
                    axes: spec.axes,
                },
                rows_of_device,
            )),
        );
        exec::materialize(std::slice::from_ref(&partial))?;
        partials.push(partial);
    }
    let held: Vec<(usize, NodeRef)> = shares.iter().map(|(d, _)| *d).zip(partials).collect();
    let part = &multi.parts[0];
    let mut total = combined(multi, 0, &held, partial_op)?;
    if spec.op == ReduceOp::Mean {
        let count: usize = (0..operand.shape.len())
            .filter(|d| spec.axes & (1 << d) != 0)
            .map(|d| operand.shape[d])
            .product();
        let bits = match node.dtype {
            crate::dtype::DType::F64 => crate::dtype::Element::to_arg_bits(count as f64),
            _ => crate::dtype::Element::to_arg_bits(count as f32),
        };
        total = Node::new(
            part.clone(),
            node.dtype,
            node.shape.clone(),
            State::Lazy(Op::WithScalar(
                BinaryOp::Div,
                total,
                InlineScalar {
                    bits,
                    dtype: node.dtype,
                    side: Side::Right,
                },
            )),
        );
    }
    // On the first device's bridge queue, behind the copies: its default queue goes on.
    exec::materialize_on(&multi.bridges[0], std::slice::from_ref(&total))?;
    Counters::add(&part.counters.device_combines, 1);
    node.set_parts(whole_on(0, total, &node.shape));
    Ok(())
}

/// The devices that hold rows of `operand` (split by the weights), with their rows, when
/// there are two or more; `None` when one device holds every row (or there are none).
pub(crate) fn shares(multi: &Multi, operand: &Node) -> Option<Vec<(usize, std::ops::Range<usize>)>> {
    let held: Vec<(usize, std::ops::Range<usize>)> = split_rows(operand.shape[0], &multi.weights)
        .into_iter()
        .enumerate()
        .filter(|(_, r)| !r.is_empty())
        .collect();
    (held.len() > 1).then_some(held)
}

/// The device that holds every row of `operand` when [`shares`] found one (the first
/// device when there are no rows).
pub(crate) fn holder(multi: &Multi, operand: &Node) -> usize {
    split_rows(operand.shape[0], &multi.weights)
        .iter()
        .position(|r| !r.is_empty())
        .unwrap_or(0)
}

/// The reduction `op` along a new first axis of `partials` (each a materialized node of
/// the device beside it, all of one shape), as a lazy node of device `device`: the
/// partials of other devices are copied there.
pub(crate) fn combined(
    multi: &Multi,
    device: usize,
    partials: &[(usize, NodeRef)],
    op: ReduceOp,
) -> Result<NodeRef> {
    let first = &partials[0].1;
    let stacked = Node::new(
        multi.parts[device].clone(),
        first.dtype,
        std::iter::once(partials.len())
            .chain(first.shape.iter().copied())
            .collect(),
        State::Parts(Arc::new(Parts {
            pieces: partials
                .iter()
                .enumerate()
                .map(|(k, (d, p))| Piece {
                    device: *d,
                    rows: k..k + 1,
                    node: with_leading_axis(p),
                })
                .collect(),
        })),
    );
    let all = windows::record_one(multi, device, &stacked, 0..partials.len())?;
    Ok(Node::new(
        multi.parts[device].clone(),
        first.dtype,
        first.shape.clone(),
        State::Lazy(Op::Reduce(ReduceSpec { op, axes: 1 }, all)),
    ))
}

/// Device `device` computes all of `node` (fetching every row it reads).
pub(crate) fn on_device(multi: &Multi, device: usize, node: &NodeRef) -> Result<()> {
    let all = 0..row_count(&node.shape);
    let made = windows::record_one(multi, device, node, all)?;
    exec::materialize(std::slice::from_ref(&made))?;
    node.set_parts(whole_on(device, made, &node.shape));
    Ok(())
}

/// An array held whole by one device.
pub(crate) fn whole_on(device: usize, node: NodeRef, shape: &[usize]) -> Arc<Parts> {
    Arc::new(Parts {
        pieces: vec![Piece {
            device,
            rows: 0..row_count(shape),
            node,
        }],
    })
}

/// `node` (materialized) with an axis of length 1 in front: the same memory.
fn with_leading_axis(node: &NodeRef) -> NodeRef {
    let shape: crate::graph::Shape = std::iter::once(1).chain(node.shape.iter().copied()).collect();
    let axes = (0..node.shape.len())
        .map(|d| SourceAxis {
            from: Some(d + 1),
            start: 0,
            step: 1,
        })
        .collect();
    match (node.buffer(), node.origin()) {
        (Some(b), Some(o)) => Node::new(node.ctx.clone(), node.dtype, shape, State::Ready(b, o)),
        _ => node.view(ViewMap { axes }, shape),
    }
}
