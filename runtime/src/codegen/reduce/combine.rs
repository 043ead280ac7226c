//! The combine pass, the second kernel of a reduction split into segments; and the
//! combining of lanes and partials that the kernels finishing a reduction themselves
//! share with it.

use crate::codegen::abi::combine_signature;
use crate::codegen::accumulators::{lanes_of_outputs, take, COMBINE_PASS};
use crate::codegen::ops::{identity, vt};
use crate::codegen::values::pragmas;
use crate::codegen::writer::Src;
use crate::dtype::DType;
use crate::graph::ReduceOp;

/// The program of the combine pass: reduces partials `[o * S + s]` over `s` for each
/// output `o`. A work-group of `group` items handles `group / lanes` outputs; `lanes` (a
/// power of two) is chosen from `S`, so that many outputs with few segments each do not
/// leave most work-items idle.
pub(crate) fn combine_source(op: ReduceOp, d: DType, group: u32, lanes: u32) -> String {
    let t = vt(d);
    let mut src = Src::at(0);
    src.text(&pragmas(d.real() == DType::F64));
    src.line("#define NONE UINT_MAX");
    src.open(combine_signature(op, d));
    src.line(format_args!("__local {t} sv[{group}];"));
    src.line(format_args!("__local uint si[{group}];"));
    lanes_of_outputs(&mut src, group, lanes);
    src.line(format_args!("{t} acc = {}; uint acci = NONE;", identity(op, d)));
    src.line("(void)acci; (void)n_total;");
    src.open("if (o < n_out) {");
    combine_partials(&mut src, op, d, "uint", lanes, ("pv", "pi"));
    src.close();
    combine_lanes(&mut src, op, d, lanes, "", &COMBINE_PASS.store(op, t, "", "o"));
    src.close();
    src.into_string()
}

/// Output `o`'s lanes each take every `lanes`-th of its partials `[o * S + s]` into `acc`
/// (the buffers of their values and indices named by the pair; the loop's index of type
/// `ix`).
pub(super) fn combine_partials(
    src: &mut Src,
    op: ReduceOp,
    d: DType,
    ix: &str,
    lanes: u32,
    (values, indices): (&str, &str),
) {
    src.open(format_args!(
        "for ({ix} k = o * S + lane; k < (o + 1) * S; k += {lanes}u) {{"
    ));
    let (v, vi) = (format!("{values}[k]"), format!("{indices}[k]"));
    src.line(take(op, d, ("acc", "acci"), (&v, &vi)));
    src.close();
}

/// The lanes of each output combine their accumulators in local memory (a tree), and
/// the first lane stores the result with `store`, where `when` (empty, or a condition
/// and `&&`) holds too.
pub(super) fn combine_lanes(src: &mut Src, op: ReduceOp, d: DType, lanes: u32, when: &str, store: &str) {
    src.line("sv[lid] = acc; si[lid] = acci;");
    src.line("barrier(CLK_LOCAL_MEM_FENCE);");
    src.open(format_args!(
        "for (uint st = {lanes}u / 2u; st > 0u; st >>= 1) {{"
    ));
    src.open("if (lane < st) {");
    src.line(take(
        op,
        d,
        ("sv[lid]", "si[lid]"),
        ("sv[lid + st]", "si[lid + st]"),
    ));
    src.close();
    src.line("barrier(CLK_LOCAL_MEM_FENCE);");
    src.close();
    src.open(format_args!("if ({when}lane == 0u && o < n_out) {{"));
    src.line("acc = sv[lid]; acci = si[lid];");
    src.line(store);
    src.close();
}
