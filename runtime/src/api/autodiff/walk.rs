//! Reverse-mode differentiation over the recorded graph: the nodes between an output and
//! the arrays differentiated against, in an order where every node comes before its
//! operands, and the cotangents pulled back through them one operation at a time
//! ([`super::rules`]), added where paths meet. Nothing runs: every cotangent is a lazy
//! array, and the backward pass fuses like any other recording.

use rustc_hash::{FxHashMap, FxHashSet};

use super::rules;
use crate::error::{Error, Result};
use crate::graph::{NodeRef, Op, State};

/// A node's identity within one walk.
fn key(n: &NodeRef) -> usize {
    std::sync::Arc::as_ptr(n) as usize
}

/// What the walk knows of one node it reached.
struct Reached {
    node: NodeRef,
    /// Its operation, when a gradient can pass through it.
    op: Option<Op>,
}

/// The cotangents of `wrt` given `seed`, the cotangent of `root` (same shape and type):
/// `None` where an array does not influence `root`. `oldest` is the serial of the oldest
/// array of `wrt`: a materialized array without its operation is a constant where it
/// cannot depend on any of them (it is older, or all its ancestors are newer), else an
/// error, since a gradient might have passed through it.
pub(crate) fn pull_back(
    root: &NodeRef,
    seed: NodeRef,
    wrt: &[NodeRef],
    oldest: u64,
) -> Result<Vec<Option<NodeRef>>> {
    let targets: FxHashSet<usize> = wrt.iter().map(key).collect();
    let order = post_order(root, &targets, oldest)?;
    // Which nodes reach a target (post-order: operands come first).
    let mut reaches: FxHashSet<usize> = FxHashSet::default();
    for r in &order {
        let k = key(&r.node);
        let through =
            r.op.as_ref()
                .is_some_and(|op| op.inputs().iter().any(|i| reaches.contains(&key(i))));
        if targets.contains(&k) || through {
            reaches.insert(k);
        }
    }
    let mut cotangents: FxHashMap<usize, NodeRef> = FxHashMap::default();
    if reaches.contains(&key(root)) {
        cotangents.insert(key(root), seed);
    }
    for r in order.iter().rev() {
        let k = key(&r.node);
        // (A target's cotangent is kept for the answer, and passes on to its operands:
        // another target may be among them.)
        let g = if targets.contains(&k) {
            cotangents.get(&k).cloned()
        } else {
            cotangents.remove(&k)
        };
        let (Some(op), Some(g)) = (&r.op, g) else {
            continue;
        };
        let inputs = op.inputs();
        let wanted: Vec<bool> = inputs.iter().map(|i| reaches.contains(&key(i))).collect();
        for (slot, contribution) in rules::pull(&r.node, op, &g, &wanted)? {
            let input = inputs[slot];
            let total = match cotangents.remove(&key(input)) {
                Some(before) => rules::add(&before, &contribution),
                None => contribution,
            };
            cotangents.insert(key(input), total);
        }
    }
    Ok(wrt.iter().map(|w| cotangents.get(&key(w)).cloned()).collect())
}

/// The nodes reachable from `root` through operations a gradient can pass, operands
/// before their users (an explicit stack: a chain of 100,000 nodes must not overflow
/// the thread's). The walk stops at nodes no gradient flows into (not floats, detached)
/// and at materialized nodes without their operation.
fn post_order(root: &NodeRef, targets: &FxHashSet<usize>, oldest: u64) -> Result<Vec<Reached>> {
    let mut order = Vec::new();
    let mut expanded: FxHashSet<usize> = FxHashSet::default();
    // A node to expand, or (with its operation) one whose operands are all in `order`.
    enum Step {
        Expand(NodeRef),
        Emit(Reached),
    }
    let mut stack = vec![Step::Expand(root.clone())];
    while let Some(step) = stack.pop() {
        let node = match step {
            Step::Emit(reached) => {
                order.push(reached);
                continue;
            }
            Step::Expand(node) => node,
        };
        if !expanded.insert(key(&node)) {
            continue;
        }
        let op = operation(&node, targets, oldest)?;
        let inputs: Vec<NodeRef> = op
            .as_ref()
            .map_or(Vec::new(), |op| op.inputs().into_iter().cloned().collect());
        stack.push(Step::Emit(Reached { node, op }));
        // (An operand expanded already is in `order`: the graph has no cycles.)
        stack.extend(
            inputs
                .into_iter()
                .filter(|i| !expanded.contains(&key(i)))
                .map(Step::Expand),
        );
    }
    Ok(order)
}

/// The operation a gradient passes through at `node`: `None` at a node of a type without
/// gradients, at a detached one, and at memory without an operation that cannot depend
/// on the targets (uploads, fills, arrays all of whose ancestors are newer than every
/// target). A recording error is returned; a computed array whose operation is gone and
/// that may depend on a target is an error naming it.
fn operation(node: &NodeRef, targets: &FxHashSet<usize>, oldest: u64) -> Result<Option<Op>> {
    if !node.dtype.is_float() || node.stops_gradient {
        return Ok(None);
    }
    if let Some(op) = node.operation() {
        return Ok(Some(op));
    }
    let computed = match &*node.state() {
        State::Failed(e) => return Err((**e).clone()),
        State::Ready(_, origin) => origin.eager().is_some(),
        State::Parts(_) => true,
        State::Lazy(_) | State::Dropped => false,
    };
    // (A target's own value is what is differentiated against, however it was made.)
    if computed && !targets.contains(&key(node)) && node.oldest_ancestor <= oldest && node.serial > oldest {
        return Err(Error::Gradient {
            op: format!("an array of shape {:?}", node.shape),
            at: node.at.to_string(),
            reason: "it was materialized before the gradient was asked for, and a materialized array \
                     keeps only its values, not how they were computed; ask for the gradient before \
                     reading it (nothing runs until then), or compute it inside \
                     `lazycl::value_and_grad`, which keeps what it needs"
                .into(),
        });
    }
    Ok(None)
}
