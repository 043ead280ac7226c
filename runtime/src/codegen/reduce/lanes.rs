//! The lanes layout: `lanes` work-items of a work-group cooperate on each output, each
//! striding over the output's segment; a tree in local memory combines them.

use super::combine::combine_lanes;
use super::Reduction;
use crate::codegen::values::Values;
use crate::codegen::writer::Src;
use crate::layout::VECTOR_WIDTH;
use crate::plan::VectorLoads;

/// The kernel's body after the header: a work-group of `G` work-items handles `G / lanes`
/// outputs; with `vector` (the only reduced dim is the innermost one), each lane first
/// takes whole vectors of [`VectorLoads::width`] neighbouring elements, and a scalar loop
/// takes the rest.
pub(super) fn lanes_layout(
    red: &Reduction,
    lanes: u32,
    vector: Option<VectorLoads>,
    v: &mut Values,
    src: &mut Src,
) {
    let (ix, t) = (red.ix, red.t);
    let w = vector.map_or(VECTOR_WIDTH, |v| v.width);
    let g = red.plan.group_size;
    src.line(format_args!("__local {t} sv[{g}];"));
    src.line(format_args!("__local uint si[{g}];"));
    src.line("__local uint last_group;");
    src.line("(void)last_group;");
    src.line(format_args!(
        "const uint lid = get_local_id(0), lane = lid % {lanes}u, row = lid / {lanes}u;"
    ));
    src.line(format_args!("const {ix} grp = get_group_id(0);"));
    src.line(format_args!(
        "const {ix} o = (grp / S) * ({g}u / {lanes}u) + row, s = grp % S;"
    ));
    src.open("if (o < n_out) {");
    src.line(format_args!(
        "// Segments start at multiples of {w} so that vector loads stay aligned."
    ));
    src.line(format_args!(
        "const {ix} chunk = ((n_red + S - 1) / S + {w}u - 1) / {w}u * {w}u;"
    ));
    src.line(format_args!(
        "const {ix} k0 = min(n_red, s * chunk), k1 = min(n_red, k0 + chunk);"
    ));
    src.line(format_args!("{ix} kk = k0;"));
    if let Some(loads) = vector {
        vector_loop(red, lanes, loads, v, src);
    }
    src.open(format_args!("for ({ix} k = kk + lane; k < k1; k += {lanes}u) {{"));
    red.element_step(v, src);
    src.close();
    src.close();
    combine_lanes(src, red.r.op, red.d, lanes, "", &red.store("", "o * S + s"));
}

/// Each lane's whole vectors of its segment. The loop counts vectors (`q < k1 / w`), not
/// elements (`k + w - 1 < k1`): with the latter NVIDIA's compiler streams the loads far worse.
fn vector_loop(red: &Reduction, lanes: u32, loads: VectorLoads, v: &mut Values, src: &mut Src) {
    let (ix, w) = (red.ix, loads.width);
    src.line(format_args!(
        "// Each lane takes whole groups of {w}; only the last (k1 - k0) % {w} elements"
    ));
    src.line("// are left for the scalar loop.");
    if loads.contiguous {
        // CPUs: each lane streams one contiguous run (PoCL runs a work-item's loop inside
        // the loop over work-items, so interleaved lanes would stride).
        src.line(format_args!(
            "const {ix} q0 = k0 / {w}u, nq = k1 / {w}u - q0, per = (nq + {lanes}u - 1) / {lanes}u;"
        ));
        src.line(format_args!(
            "const {ix} qe = min(q0 + nq, q0 + (lane + 1u) * per);"
        ));
        src.open(format_args!("for ({ix} q = q0 + lane * per; q < qe; q++) {{"));
    } else {
        src.line("#pragma unroll 2");
        src.open(format_args!(
            "for ({ix} q = k0 / {w}u + lane; q < k1 / {w}u; q += {lanes}u) {{"
        ));
    }
    src.line(format_args!("const {ix} k = q * {w}u;"));
    red.vector_step(v, w, loads.aligned, src);
    src.close();
    src.line(format_args!("kk = k1 - (k1 - k0) % {w}u;"));
}
