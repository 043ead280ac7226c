//! The statements reduction kernels and the passes that finish them share: taking a value
//! into an accumulator, storing accumulators as partials or results, the lanes of
//! outputs, and learning which work-group finished last.

use super::ops::{arg_better, combine};
use super::writer::Src;
use crate::dtype::DType;
use crate::graph::ReduceOp;

/// Value `v` at index `vi` taken into accumulator `acc` (with index `acci`): for an arg
/// reduction, if it is the better one ([`arg_better`]), else combined.
pub(super) fn take(op: ReduceOp, d: DType, (acc, acci): (&str, &str), (v, vi): (&str, &str)) -> String {
    if op.is_arg() {
        format!(
            "if ({}) {{ {acc} = {v}; {acci} = {vi}; }}",
            arg_better(op, d, acc, acci, v, vi)
        )
    } else {
        format!("{acc} = {};", combine(op, d, acc, v))
    }
}

/// Accumulator `acc` stored at `outv[at]`: the result with one segment (`fin`; a mean
/// divided by its length), else a partial, as it is.
pub(super) fn store_partial(op: ReduceOp, t: &str, acc: &str, at: &str) -> String {
    if op == ReduceOp::Mean {
        format!("outv[{at}] = fin ? {acc} / ({t})n_red : {acc};")
    } else {
        format!("outv[{at}] = {acc};")
    }
}

/// An arg reduction's best value `acc` at index `acci` stored at `[at]`: the index
/// alone with one segment (`fin`; 0 where there was none), else both, for the pass that
/// combines them.
pub(super) fn store_arg_partial(acc: &str, acci: &str, at: &str) -> String {
    format!("if (fin) {{ outi[{at}] = ({acci} == NONE ? 0 : {acci}); }} else {{ outv[{at}] = {acc}; outi[{at}] = {acci}; }}")
}

/// Where the pass that finishes a split reduction stores its results.
pub(super) struct Results {
    values: &'static str,
    indices: &'static str,
    /// The name of the reduced length (a mean's divisor).
    length: &'static str,
}

/// The reduction's own kernel (its last work-group): `finv`, `fini`.
pub(super) const IN_KERNEL: Results = Results {
    values: "finv",
    indices: "fini",
    length: "n_red",
};

/// The combine pass: `outv`, `outi`.
pub(super) const COMBINE_PASS: Results = Results {
    values: "outv",
    indices: "outi",
    length: "n_total",
};

impl Results {
    /// Accumulator `acc{x}` (index `acci{x}`) stored as the final result `[at]`: for an
    /// arg reduction the index (0 where there was none), for a mean divided by the length.
    pub(super) fn store(&self, op: ReduceOp, t: &str, x: &str, at: &str) -> String {
        let Results {
            values,
            indices,
            length,
        } = self;
        if op.is_arg() {
            format!("{indices}[{at}] = (acci{x} == NONE ? 0 : acci{x});")
        } else if op == ReduceOp::Mean {
            format!("{values}[{at}] = acc{x} / ({t}){length};")
        } else {
            format!("{values}[{at}] = acc{x};")
        }
    }
}

/// Work-item `lid` as lane `lane` of output `o`, `group / lanes` outputs per work-group
/// (the layout of the passes that combine partials).
pub(super) fn lanes_of_outputs(src: &mut Src, group: u32, lanes: u32) {
    src.line(format_args!(
        "const uint lid = get_local_id(0), lane = lid % {lanes}u, row = lid / {lanes}u;"
    ));
    src.line(format_args!(
        "const ulong o = get_group_id(0) * ({group}u / {lanes}u) + row;"
    ));
}

/// Each work-group counts itself done in `counter` (after a fence, so that what it
/// stored before is visible first); the one that finds every other already counted sets
/// `flag`, a local of the group. Every work-item reaches both barriers: only loads and
/// stores may depend on being last.
pub(super) fn count_finished_group(src: &mut Src, flag: &str, counter: &str) {
    src.line("mem_fence(CLK_GLOBAL_MEM_FENCE);");
    src.line("barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);");
    src.line(format_args!(
        "if (lid == 0u) {flag} = (atomic_inc(&{counter}) == (uint)(S - 1u));"
    ));
    src.line("barrier(CLK_LOCAL_MEM_FENCE);");
}
