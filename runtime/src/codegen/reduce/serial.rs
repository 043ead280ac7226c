//! The serial layout of a reduction whose innermost dim is kept: one work-item per
//! (output, segment) pair loops over the segment, so that neighbouring work-items read
//! neighbouring addresses.

use super::Reduction;
use crate::codegen::ops::combine_four;
use crate::codegen::values::Values;
use crate::codegen::writer::Src;
use crate::layout::VECTOR_WIDTH;

/// The kernel's body after the header: four reduced elements per step while four are
/// left (not for the arg reductions, which track an index per element), then one at a
/// time. The step is counted in elements (`kk + 4 <= k1`), not in quads as the lanes
/// layout counts: this form streams faster here.
pub(super) fn serial_layout(red: &Reduction, v: &mut Values, src: &mut Src) {
    let (ix, w) = (red.ix, VECTOR_WIDTH);
    src.line(format_args!("const {ix} gid = get_global_id(0);"));
    src.line(format_args!("const {ix} o = gid % n_out, s = gid / n_out;"));
    src.line("if (s >= S) return;");
    src.line(format_args!("const {ix} chunk = (n_red + S - 1) / S;"));
    src.line(format_args!(
        "const {ix} k0 = min(n_red, s * chunk), k1 = min(n_red, k0 + chunk);"
    ));
    src.line(format_args!("{ix} kk = k0;"));
    if !red.arg {
        src.open(format_args!("for (; kk + {w}u <= k1; kk += {w}u) {{"));
        src.line(format_args!("const {ix} kb = kk;"));
        // The loop bodies stand at the depth of the lanes layout's.
        src.shifted(1, |src| quad_step(red, v, src));
        src.close();
    }
    src.open(format_args!("for ({ix} k = kk; k < k1; k++) {{"));
    src.shifted(1, |src| red.element_step(v, src));
    src.close();
    src.line(red.store("", "o * S + s"));
}

/// Reduced elements `kb .. kb + 4`, each in a block of its own (`p{j}`), combined
/// pairwise into one accumulation step.
fn quad_step(red: &Reduction, v: &mut Values, src: &mut Src) {
    let (ix, t, out) = (red.ix, red.t, red.out);
    for j in 0..VECTOR_WIDTH {
        src.line(format_args!("{t} p{j};"));
        src.line("{");
        src.line(format_args!("const {ix} k = kb + {j}u;"));
        v.at_element(red.r, red.plan.values.len(), &[], src);
        src.line(format_args!("p{j} = v{out};"));
        src.line("}");
    }
    let quad = combine_four(red.r.op, red.d, ["p0", "p1", "p2", "p3"]);
    src.line(format_args!("const {t} quad = {quad};"));
    src.line(red.step("quad", "kb"));
}
