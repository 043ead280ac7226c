//! The text of random numbers (a [`Value::FromIndex`] of `IndexFn::Random`, reached
//! through [`super::from_index`]): Philox4x32-10 of the counter that
//! holds the element's index, and the element's value from its words (`lazycl-clc`'s
//! helpers, which fix the bit layout: docs/MATH.md, "Random numbers").
//!
//! Element `i` of a random node is drawn from counter `i / per` (`per` = 4 elements per
//! call, 2 where each takes two words), as element `i % per` of its words. Read at any
//! index, a value is one Philox call of its own ([`at_index`]); a vector step whose lanes
//! are four neighbours from an index that is a multiple of four, reading a random node
//! at the kernel's own linear index, calls Philox once per counter for all four
//! ([`block`], named `R{slot}_{h}`, and [`from_block`]): one call per four `f32`.

use lazycl_clc::{self as clc, Draw};

use super::helpers::{vt, Helpers};
use super::writer::Src;
use crate::dtype::DType;
use crate::plan::{KernelPlan, Value};

/// Elements of one Philox call (4, or 2 where each takes two words).
fn per_call(draw: Draw, dtype: DType) -> usize {
    4 / draw.words(dtype) as usize
}

/// The text of scalar operand `v`: its kernel argument (a random node's operands are
/// scalars), else the value's name in scope (`v{v}{sfx}`).
fn operand(plan: &KernelPlan, v: usize, sfx: &str) -> String {
    match plan.values[v].value {
        Value::Scalar { slot } => format!("s{slot}"),
        _ => format!("v{v}{sfx}"),
    }
}

/// `(seed, offset, [lo, range])` of random value `i`.
fn operands(plan: &KernelPlan, i: usize, sfx: &str) -> Vec<String> {
    match &plan.values[i].value {
        Value::FromIndex { args, .. } => args.iter().map(|&a| operand(plan, a, sfx)).collect(),
        _ => Vec::new(),
    }
}

/// The value of random value `i` from the words `r` of its counter, as element `j` of
/// them.
fn value(
    plan: &KernelPlan,
    i: usize,
    draw: Draw,
    ops: &[String],
    r: &str,
    j: &str,
    helpers: &mut Helpers,
) -> String {
    let dtype = plan.values[i].dtype;
    let mut args: Vec<&str> = vec![r, j];
    if draw == Draw::Integers {
        args.extend(ops.iter().skip(2).map(String::as_str));
    }
    helpers.call(clc::random_value(draw, dtype), &args)
}

/// Random value `i`, drawn as `draw`, read at `idx` (an index expression): one Philox
/// call.
pub(super) fn at_index(
    plan: &KernelPlan,
    i: usize,
    draw: Draw,
    idx: &str,
    sfx: &str,
    helpers: &mut Helpers,
) -> String {
    let dtype = plan.values[i].dtype;
    let ops = operands(plan, i, sfx);
    let [seed, offset, ..] = &ops[..] else {
        return format!("/* a random value without its seed */ ({})0", vt(dtype));
    };
    let per = per_call(draw, dtype);
    let shift = per.trailing_zeros();
    let counter = format!("((ulong)({idx}) >> {shift})");
    let r = helpers.call(clc::philox_stream(), &[&counter, seed, offset]);
    let j = format!("((uint)({idx}) & {}u)", per - 1);
    value(plan, i, draw, &ops, &r, &j, helpers)
}

/// Lane `lane` of random value `i` (drawn as `draw`, read slot `slot`, at the kernel's
/// own index) in a vector step whose [`block`] is in scope.
pub(super) fn from_block(
    plan: &KernelPlan,
    i: usize,
    draw: Draw,
    slot: usize,
    lane: usize,
    helpers: &mut Helpers,
) -> String {
    let ops = operands(plan, i, "");
    let per = per_call(draw, plan.values[i].dtype);
    let r = format!("R{slot}_{}", lane / per);
    value(plan, i, draw, &ops, &r, &format!("{}u", lane % per), helpers)
}

/// The Philox calls a vector step of `w` lanes from index `base` (a multiple of `w`)
/// shares among its lanes for random value `i` (drawn as `draw`, read slot
/// `slot`, at the kernel's own index): `R{slot}_{h}`, counter `base / per + h`.
pub(super) fn block(
    plan: &KernelPlan,
    i: usize,
    draw: Draw,
    slot: usize,
    base: &str,
    w: usize,
    src: &mut Src,
) {
    let ops = operands(plan, i, "");
    let [seed, offset, ..] = &ops[..] else {
        return;
    };
    let per = per_call(draw, plan.values[i].dtype);
    let shift = per.trailing_zeros();
    let name = clc::philox_stream().name;
    for h in 0..w.div_ceil(per) {
        src.line(format_args!(
            "const uint4 R{slot}_{h} = {name}(((ulong)({base}) >> {shift}) + {h}ul, {seed}, {offset});"
        ));
    }
}
