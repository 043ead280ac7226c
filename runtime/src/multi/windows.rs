//! One device's share of a multi-device flush: the rows of a few nodes it is asked for,
//! recorded as a lazy graph of that device's own context, which its own flush then
//! fuses like any other.
//!
//! Two passes over the lazy graph under the wanted nodes, iterative (a 10^5-node chain
//! must not overflow the stack): from the wanted nodes back to the arrays in memory,
//! each node's *hull* — every row any of its readers needs on this device (`rows`); then
//! forward, each node recorded once over its hull, its readers reading the rows they
//! need of it (a view where those are fewer), and each array in memory fetched over its
//! hull (`fetch`: local rows as views, other devices' rows copied across).

use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

use crate::backend::buffer::DeviceBuffer;
use crate::backend::context::Multi;
use crate::error::{Error, Result};
use crate::graph::parts::row_count;
use crate::graph::view::{SourceAxis, ViewMap};
use crate::graph::{Node, NodeRef, Op, Origin, State};
use crate::multi::fetch;
use crate::multi::operand_runs::{self, rows_shape, slice, Build, Window};

/// Rows `rows` of each node of `wants`, as nodes of device `device`'s context (lazy).
pub(crate) fn record(
    multi: &Multi,
    device: usize,
    wants: &[(NodeRef, Range<usize>)],
) -> Result<Vec<NodeRef>> {
    let order = graph_order(wants.iter().map(|(n, _)| n))?;
    let mut hull: HashMap<*const Node, Range<usize>> = HashMap::new();
    let widen = |hull: &mut HashMap<*const Node, Range<usize>>, n: &NodeRef, r: Range<usize>| {
        hull.entry(Arc::as_ptr(n))
            .and_modify(|h| *h = h.start.min(r.start)..h.end.max(r.end))
            .or_insert(r);
    };
    for (n, r) in wants {
        widen(&mut hull, n, r.clone());
    }
    for (node, op) in order.iter().rev() {
        let (Some(op), Some(rows)) = (op, hull.get(&Arc::as_ptr(node)).cloned()) else {
            continue;
        };
        let w = operand_runs::window(node, op, &rows);
        for (input, need) in op.inputs().into_iter().zip(w.operands) {
            if let Some(r) = need {
                widen(&mut hull, input, r);
            }
        }
    }
    let part = &multi.parts[device];
    let mut built: HashMap<*const Node, NodeRef> = HashMap::new();
    for (node, op) in &order {
        let Some(rows) = hull.get(&Arc::as_ptr(node)) else {
            continue;
        };
        let made = match op {
            None => fetch::rows(multi, device, node, rows)?,
            Some(op) => {
                let w = operand_runs::window(node, op, rows);
                let mut inputs: Vec<NodeRef> = Vec::new();
                for (input, need) in op.inputs().into_iter().zip(&w.operands) {
                    let Some(need) = need else { continue };
                    let p = Arc::as_ptr(input);
                    let (Some(have), Some(rows_of)) = (built.get(&p), hull.get(&p)) else {
                        return Err(Error::Internal(
                            "an operand was not recorded on its device".into(),
                        ));
                    };
                    inputs.push(slice(have, rows_of, need, &input.shape));
                }
                build(part, node, op, rows, &w, &inputs)?
            }
        };
        built.insert(Arc::as_ptr(node), made);
    }
    wants
        .iter()
        .map(|(n, r)| {
            let p = Arc::as_ptr(n);
            match (built.get(&p), hull.get(&p)) {
                (Some(b), Some(h)) => Ok(slice(b, h, r, &n.shape)),
                _ => Err(Error::Internal(
                    "a wanted node was not recorded on its device".into(),
                )),
            }
        })
        .collect()
}

/// Rows `rows` of one node, as a node of device `device`'s context (lazy).
pub(crate) fn record_one(
    multi: &Multi,
    device: usize,
    node: &NodeRef,
    rows: Range<usize>,
) -> Result<NodeRef> {
    record(multi, device, &[(node.clone(), rows)])?
        .pop()
        .ok_or_else(|| Error::Internal("a window asked for was not recorded".into()))
}

/// Records rows `rows` of `node` on the device of context `part`, from its operands'
/// rows (`inputs`: those `w` reads, in order).
fn build(
    part: &Arc<crate::backend::context::ContextInner>,
    node: &Node,
    op: &Op,
    rows: &Range<usize>,
    w: &Window,
    inputs: &[NodeRef],
) -> Result<NodeRef> {
    let shape = rows_shape(&node.shape, rows);
    let lazy = |shape, op| Node::new(part.clone(), node.dtype, shape, State::Lazy(op));
    let reshaped = |a: &NodeRef, shape: crate::graph::Shape| match (a.buffer(), a.origin()) {
        (Some(b), Some(o)) => Node::new(part.clone(), node.dtype, shape, State::Ready(b, o)),
        _ => lazy(shape, Op::Reshape(a.clone())),
    };
    Ok(match &w.build {
        // A view is recorded through `Node::view`, which composes it with a view it
        // reads (a view's source is never a view).
        Build::Same => match op {
            Op::View(map, _) => inputs[0].view((**map).clone(), shape),
            _ => lazy(shape, op.with_inputs(inputs)),
        },
        Build::Whole => {
            let all = lazy(node.shape.clone(), op.with_inputs(inputs));
            slice(&all, &(0..row_count(&node.shape)), rows, &node.shape)
        }
        Build::View(map) => inputs[0].view(map.clone(), shape),
        Build::Reshape { skip } => {
            let a = &inputs[0];
            let n: usize = shape.iter().product();
            if *skip == 0 && a.numel() == n {
                reshaped(a, shape)
            } else {
                let flat = reshaped(a, smallvec::smallvec![a.numel()]);
                let run = ViewMap {
                    axes: smallvec::smallvec![SourceAxis {
                        from: Some(0),
                        start: *skip as isize,
                        step: 1,
                    }],
                };
                reshaped(&flat.view(run, smallvec::smallvec![n]), shape)
            }
        }
        Build::Region(region) => lazy(
            shape,
            Op::Region(Arc::new(region.clone()), inputs.iter().cloned().collect()),
        ),
        Build::Operand => inputs[0].clone(),
        Build::Empty => {
            let buffer = DeviceBuffer::uninit(&part.cl, 0, part.queue(), "an empty part")?;
            Node::new(
                part.clone(),
                node.dtype,
                shape,
                State::Ready(buffer, Origin::Fill),
            )
        }
    })
}

/// The lazy graph under `roots` in topological order (operands first), each node with
/// its operation (`None`: an array in memory). A recording error is returned here.
pub(crate) fn graph_order<'a>(
    roots: impl Iterator<Item = &'a NodeRef>,
) -> Result<Vec<(NodeRef, Option<Op>)>> {
    let mut order = Vec::new();
    let mut seen: HashMap<*const Node, bool> = HashMap::new();
    let mut stack: Vec<(NodeRef, bool)> = roots.map(|n| (n.clone(), false)).collect();
    stack.reverse();
    while let Some((node, expanded)) = stack.pop() {
        let p = Arc::as_ptr(&node);
        if expanded {
            let op = match &*node.state() {
                State::Lazy(op) => Some(op.clone()),
                _ => None,
            };
            seen.insert(p, true);
            order.push((node, op));
            continue;
        }
        if seen.contains_key(&p) {
            continue;
        }
        seen.insert(p, false);
        let inputs: Vec<NodeRef> = match &*node.state() {
            State::Lazy(op) => op.inputs().into_iter().cloned().collect(),
            State::Parts(_) => Vec::new(),
            State::Failed(e) => return Err((**e).clone()),
            State::Ready(..) => {
                return Err(Error::Internal(
                    "a multi-device context's array has one device's memory".into(),
                ))
            }
            State::Dropped => return Err(Error::InvalidShape("a dropped array was used".into())),
        };
        stack.push((node, true));
        stack.extend(
            inputs
                .into_iter()
                .rev()
                .filter(|c| !seen.contains_key(&Arc::as_ptr(c)))
                .map(|c| (c, false)),
        );
    }
    Ok(order)
}
