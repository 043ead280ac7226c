//! Tiled elementwise kernels ([`KernelPlan::tiled`]): a work-group covers a `TILE x TILE`
//! tile of the two innermost dims (`r`, the second-innermost, and `c`), for each index
//! of the outer dims in turn. Inputs read transposed (contiguous along `r`) are first
//! staged through local memory: the work-items read them along `r`, which coalesces,
//! into `t{slot}[c][r]` (one column of padding against bank conflicts). After a barrier
//! each work-item computes four neighbouring elements of one row of the tile: vector
//! loads and stores for every other input and the outputs (as the elementwise vector
//! step does), the staged inputs from the tile; the last elements of a row that has no
//! four left one at a time.

use super::abi::{fused_signature, narrow_dims};
use super::ops::vt;
use super::values::Values;
use super::views;
use super::writer::Src;
use crate::layout::VECTOR_WIDTH;
use crate::plan::{KernelPlan, Value, TILE, TILE_ROWS};
use lazycl_clc::VectorAt;

/// The program of a tiled elementwise plan.
pub(super) fn tiled_source(plan: &KernelPlan) -> String {
    let mut v = Values::new(plan);
    let ix = v.ix;
    let rank = plan.dims.len();
    let staged = plan.transposed_inputs();
    let mut src = Src::at(0);
    src.text(&v.prelude());
    let attributes = format!(" __attribute__((reqd_work_group_size({TILE}, {TILE_ROWS}, 1)))");
    src.open(fused_signature(plan, &attributes));
    narrow_dims(rank, ix, &mut src);
    for (slot, input) in plan.inputs.iter().enumerate().filter(|(s, _)| staged[*s]) {
        src.line(format_args!(
            "__local {} t{slot}[{TILE}][{}];",
            vt(input.dtype),
            TILE + 1
        ));
    }
    src.line(format_args!(
        "const {ix} tx = get_local_id(0), ty = get_local_id(1);"
    ));
    src.line(format_args!(
        "const {ix} c0 = get_group_id(0) * {TILE}u, r0 = get_group_id(1) * {TILE}u;"
    ));
    let outer: Vec<String> = (0..rank - 2).map(|k| format!("d{k}")).collect();
    let outer = if outer.is_empty() {
        "1".to_string()
    } else {
        outer.join(" * ")
    };
    src.line(format_args!("const {ix} nz = {outer};"));
    src.open(format_args!(
        "for ({ix} z = get_group_id(2); z < nz; z += get_num_groups(2)) {{"
    ));
    outer_indices(rank - 2, ix, &mut src);
    stage(plan, &staged, ix, &mut src);
    src.line("barrier(CLK_LOCAL_MEM_FENCE);");
    compute(&mut v, plan, &staged, &mut src);
    // The next outer index overwrites the tiles.
    src.line("barrier(CLK_LOCAL_MEM_FENCE);");
    src.close();
    src.close();
    src.into_string()
}

/// Stages the `staged` inputs' elements of the tile: work-item (tx, ty) reads element
/// `(r0 + tx, c0 + ty + j)` into `t[ty + j][tx]`.
fn stage(plan: &KernelPlan, staged: &[bool], ix: &str, src: &mut Src) {
    let rank = plan.dims.len();
    let (r, c) = (rank - 2, rank - 1);
    src.open(format_args!(
        "for ({ix} j = 0; j < {TILE}u; j += {TILE_ROWS}u) {{"
    ));
    src.line(format_args!("const {ix} i{r} = r0 + tx, i{c} = c0 + ty + j;"));
    src.open(format_args!("if (i{r} < d{r} && i{c} < d{c}) {{"));
    for (slot, input) in plan.inputs.iter().enumerate().filter(|(s, _)| staged[*s]) {
        if let Some(a) = &input.strided {
            let load = views::load(plan, slot, a, vt(input.dtype), None);
            src.line(format_args!("t{slot}[ty + j][tx] = {load};"));
        }
    }
    src.close();
    src.close();
}

/// Computes the tile: the work-group's items cover the tile's rows, `TILE / 4` of them
/// per row, each taking four neighbouring elements (vector loads and stores where the
/// row has them all, else one at a time), its `staged` inputs at `t[tc + l][tr]`.
fn compute(v: &mut Values, plan: &KernelPlan, staged: &[bool], src: &mut Src) {
    let ix = v.ix;
    let rank = plan.dims.len();
    let (r, c) = (rank - 2, rank - 1);
    let w = VECTOR_WIDTH;
    src.line(format_args!(
        "const {ix} lid = ty * {TILE}u + tx, tr = lid / {per_row}u, tc = lid % {per_row}u * {w}u;",
        per_row = TILE / w
    ));
    src.line(format_args!("const {ix} i{r} = r0 + tr, i{c} = c0 + tc;"));
    src.open(format_args!("if (i{r} < d{r}) {{"));
    src.line(format_args!("const {ix} gid = (z * d{r} + i{r}) * d{c} + i{c};"));
    src.open(format_args!("if (i{c} + {}u < d{c}) {{", w - 1));
    src.line(format_args!("const {ix} fidx = gid;"));
    v.lane_values(plan.values.len(), &[], w, false, staged, src);
    for (k, output) in plan.outputs.iter().enumerate() {
        let parts: Vec<String> = (0..w).map(|l| format!("v{}_{l}", output.value)).collect();
        let value = format!("({})({})", output.dtype.vector(w), parts.join(", "));
        src.line(super::views::vector_store(
            plan,
            k,
            w,
            VectorAt::Element("gid"),
            &value,
        ));
    }
    src.close();
    // The last elements of a row: one at a time.
    src.open("else {");
    src.open(format_args!("for ({ix} e = 0; i{c} + e < d{c}; e++) {{"));
    src.line(format_args!(
        "const {ix} i{c} = c0 + tc + e, gid = (z * d{r} + i{r}) * d{c} + i{c};"
    ));
    for i in (0..plan.values.len()).filter(|&i| !plan.values[i].in_branch) {
        let e = match plan.values[i].value {
            Value::Load { slot } if staged[slot] => format!("t{slot}[tc + e][tr]"),
            _ => v.expr(i, "gid", None),
        };
        src.line(format_args!("const {} v{i} = {e};", vt(plan.values[i].dtype)));
    }
    for k in 0..plan.outputs.len() {
        src.line(super::views::store(
            plan,
            k,
            "gid",
            &format!("v{}", plan.outputs[k].value),
        ));
    }
    src.close();
    src.close();
    src.close();
}

/// The indices `i0 .. i{outer - 1}` of outer index `z`.
fn outer_indices(outer: usize, ix: &str, src: &mut Src) {
    if outer == 0 {
        return;
    }
    src.line(format_args!("{ix} zr = z;"));
    for k in (1..outer).rev() {
        src.line(format_args!("const {ix} i{k} = zr % d{k}; zr /= d{k};"));
    }
    src.line(format_args!("const {ix} i0 = zr;"));
}
