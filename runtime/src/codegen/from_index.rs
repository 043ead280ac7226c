//! The text of values computed from their index ([`Value::FromIndex`]): the position
//! itself, converted to the element type (here), or random numbers (Philox of the
//! position: [`super::random`]).
//!
//! A value is read at an index expression ([`at_index`]: the kernel's own linear index,
//! or the offset and strides of [`KernelPlan::index_reads`]); a vector step whose lanes
//! are neighbours from a base index shares what the lanes can share ([`blocks`], printed
//! before the lanes: one Philox call per counter, one base position) and takes each
//! lane's value from it ([`from_block`]).

use super::helpers::{vt, Helpers};
use super::writer::Src;
use crate::graph::IndexFn;
use crate::plan::{KernelPlan, Value};

/// What value `i` computes from its index, and its slot of [`KernelPlan::index_reads`].
fn of(plan: &KernelPlan, i: usize) -> Option<(IndexFn, usize)> {
    match plan.values[i].value {
        Value::FromIndex { of, slot, .. } => Some((of, slot)),
        _ => None,
    }
}

/// Value `i` read at `idx` (an index expression); `sfx` names its operands' lane.
pub(super) fn at_index(plan: &KernelPlan, i: usize, idx: &str, sfx: &str, helpers: &mut Helpers) -> String {
    let t = vt(plan.values[i].dtype);
    match of(plan, i) {
        Some((IndexFn::Random(draw), _)) => super::random::at_index(plan, i, draw, idx, sfx, helpers),
        Some((IndexFn::Position, _)) => format!("/* position */ (({t})({idx}))"),
        None => format!("/* no value from an index */ ({t})0"),
    }
}

/// Lane `lane` of value `i` (read at the kernel's own index) in a vector step whose
/// [`blocks`] are in scope.
pub(super) fn from_block(plan: &KernelPlan, i: usize, lane: usize, helpers: &mut Helpers) -> String {
    let t = vt(plan.values[i].dtype);
    match of(plan, i) {
        Some((IndexFn::Random(draw), slot)) => super::random::from_block(plan, i, draw, slot, lane, helpers),
        Some((IndexFn::Position, slot)) => format!("/* position */ (({t})(P{slot} + {lane}u))"),
        None => format!("/* no value from an index */ ({t})0"),
    }
}

/// Whether value `i` is computed from its index and read at the kernel's own linear
/// index (so that a vector step's lanes can share its [`blocks`]).
pub(super) fn plain(plan: &KernelPlan, i: usize) -> bool {
    of(plan, i).is_some_and(|(_, slot)| plan.index_reads[slot].index.is_none())
}

/// What a vector step of lanes from index `base` (a multiple of four) shares among its
/// lanes, for the values `wanted` picks that are read at the kernel's own index: the
/// Philox calls of random numbers (`R{slot}_{h}`), the base position (`P{slot}`).
pub(super) fn blocks(plan: &KernelPlan, base: &str, w: usize, wanted: impl Fn(usize) -> bool, src: &mut Src) {
    for i in (0..plan.values.len()).filter(|&i| wanted(i) && plain(plan, i)) {
        match of(plan, i) {
            Some((IndexFn::Random(draw), slot)) => super::random::block(plan, i, draw, slot, base, w, src),
            Some((IndexFn::Position, slot)) => {
                src.line(format_args!("const ulong P{slot} = (ulong)({base});"))
            }
            None => {}
        }
    }
}
