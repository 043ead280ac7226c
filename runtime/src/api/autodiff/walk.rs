//! Reverse-mode differentiation over the recorded graph: the nodes between an output and
//! the arrays differentiated against, in an order where every node comes before its
//! operands, and the cotangents pulled back through them one operation at a time
//! ([`super::rules`]), added where paths meet. Nothing runs: every cotangent is a lazy
//! array, and the backward pass fuses like any other recording.

use std::sync::Arc;

use rustc_hash::{FxHashMap, FxHashSet};

use super::{rules, shared};
use crate::error::{Error, Result};
use crate::graph::{CustomRule, NodeRef, Op, Origin, State};

/// A node's identity within one walk.
fn key(n: &NodeRef) -> usize {
    std::sync::Arc::as_ptr(n) as usize
}

/// The arrays asked about.
struct Targets {
    keys: FxHashSet<usize>,
    /// Their serials, sorted.
    serials: Vec<u64>,
}

impl Targets {
    fn new(wrt: &[NodeRef]) -> Targets {
        let mut serials: Vec<u64> = wrt.iter().map(|w| w.serial).collect();
        serials.sort_unstable();
        Targets {
            keys: wrt.iter().map(key).collect(),
            serials,
        }
    }

    fn contains(&self, n: &NodeRef) -> bool {
        self.keys.contains(&key(n))
    }

    /// Whether `n` may have been computed from one of them: one was made after the
    /// oldest of `n`'s ancestors and before `n` (or before the last write of its memory
    /// in place, whose inputs are not known; see `Node::ancestry`).
    fn may_reach(&self, n: &NodeRef) -> bool {
        let (floor, ceiling) = n.ancestry();
        let first = self.serials.partition_point(|&s| s < floor);
        self.serials.get(first).is_some_and(|&s| s < ceiling)
    }
}

/// What the walk knows of one node it reached.
struct Reached {
    node: NodeRef,
    /// How a gradient passes through it, when one can.
    op: Option<Pass>,
}

/// How a gradient passes through a node: its operation's rule, or the user's.
enum Pass {
    Op(Op),
    Rule(Arc<CustomRule>),
}

impl Pass {
    fn inputs(&self) -> Vec<&NodeRef> {
        match self {
            Pass::Op(op) => op.inputs().into_vec(),
            Pass::Rule(rule) => rule.inputs.iter().collect(),
        }
    }

    /// The cotangents of the operands `wanted` marks, given `g`, the node's.
    fn pull(&self, node: &NodeRef, g: &NodeRef, wanted: &[bool]) -> Result<Vec<(usize, NodeRef)>> {
        match self {
            Pass::Op(op) => rules::pull(node, op, g, wanted),
            Pass::Rule(rule) => {
                let got = (rule.pullback)(g)?;
                let wrong = |why: String| Error::Gradient {
                    op: "with_vjp".into(),
                    at: rule.at.to_string(),
                    reason: why,
                };
                if got.len() != rule.inputs.len() {
                    return Err(wrong(format!(
                        "the rule gave {} cotangents for {} inputs",
                        got.len(),
                        rule.inputs.len()
                    )));
                }
                let mut out = Vec::new();
                for (slot, (c, x)) in got.into_iter().zip(&rule.inputs).enumerate() {
                    if c.shape != x.shape {
                        return Err(wrong(format!(
                            "the cotangent of input {slot} has shape {:?}, the input {:?}",
                            c.shape, x.shape
                        )));
                    }
                    if wanted[slot] {
                        out.push((slot, crate::api::ops::cast_node(&c, x.dtype)));
                    }
                }
                Ok(out)
            }
        }
    }
}

/// The cotangents of `wrt` given `seed`, the cotangent of `root` (same shape and type):
/// `None` where an array does not influence `root`. A materialized array without its
/// operation is a constant where it cannot depend on any of `wrt` (each of them is newer
/// than it, or older than all its ancestors), else an error, since a gradient might have
/// passed through it.
pub(crate) fn pull_back(root: &NodeRef, seed: NodeRef, wrt: &[NodeRef]) -> Result<Vec<Option<NodeRef>>> {
    let targets = Targets::new(wrt);
    let order = post_order(root, &targets)?;
    // Which nodes reach a target (post-order: operands come first).
    let mut reaches: FxHashSet<usize> = FxHashSet::default();
    for r in &order {
        let k = key(&r.node);
        let through =
            r.op.as_ref()
                .is_some_and(|op| op.inputs().iter().any(|i| reaches.contains(&key(i))));
        if targets.keys.contains(&k) || through {
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
        let g = if targets.keys.contains(&k) {
            cotangents.get(&k).cloned()
        } else {
            cotangents.remove(&k)
        };
        let (Some(op), Some(g)) = (&r.op, g) else {
            continue;
        };
        let inputs = op.inputs();
        let wanted: Vec<bool> = inputs.iter().map(|i| reaches.contains(&key(i))).collect();
        for (slot, contribution) in op.pull(&r.node, &g, &wanted)? {
            let input = inputs[slot];
            let total = match cotangents.remove(&key(input)) {
                Some(before) => shared::add(&before, &contribution),
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
fn post_order(root: &NodeRef, targets: &Targets) -> Result<Vec<Reached>> {
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
        let op = operation(&node, targets)?;
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
/// on the targets (uploads, fills, arrays no target could be among the ancestors of). A recording error is returned; a computed array whose operation is gone and
/// that may depend on a target is an error naming it.
fn operation(node: &NodeRef, targets: &Targets) -> Result<Option<Pass>> {
    if !node.dtype.is_float() || node.stops_gradient {
        return Ok(None);
    }
    if let Some(rule) = node.rule() {
        return Ok(Some(Pass::Rule(rule)));
    }
    if let Some(op) = node.operation() {
        return Ok(Some(Pass::Op(op)));
    }
    let computed = match &*node.state() {
        State::Failed(e) => return Err((**e).clone()),
        State::Ready(_, origin) => origin.eager(),
        State::Parts(_) => Some(Origin::EVALUATION),
        State::Lazy(_) | State::Dropped => None,
    };
    // (A target's own value is what is differentiated against, however it was made.)
    if let Some(what) = computed.filter(|_| !targets.contains(node) && targets.may_reach(node)) {
        let how = match what {
            Origin::EVALUATION => "ask for the gradient before reading it (nothing runs until then), or compute it \
                                   inside `lazycl::value_and_grad`, which keeps what it needs"
                .to_string(),
            w if w.contains("#[kernel]") => format!(
                "{w} is not differentiated (its body is OpenCL C lazycl does not see); write the step with array \
                 operations or with `expr!` and `#[device_fn]`, whose derivatives lazycl writes, or give the launch's \
                 derivative yourself: `out.with_vjp(&[&x], |g| ..)`"
            ),
            w if w.contains("sort") || w.contains("selection") || w == "scatter_add" => format!(
                "{w} runs when called and keeps no operation; call it inside `lazycl::value_and_grad`, where sorts \
                 and selections differentiate by the positions they chose and `scatter_add` by its indices"
            ),
            w => format!(
                "{w} writes memory outside the recorded graph; compute the value with array operations, or give \
                 its derivative yourself: `y.with_vjp(&[&x], |g| ..)`"
            ),
        };
        return Err(Error::Gradient {
            op: format!("an array of shape {:?}", node.shape),
            at: node.at.to_string(),
            reason: format!(
                "it was computed by {what} before the gradient was asked for, and a materialized array keeps only \
                 its values, not how they were computed: {how}"
            ),
        });
    }
    Ok(None)
}
