//! Elementwise kernels: grid-stride loops over the elements, vectorized where every
//! load is full-size or a single element.

use super::abi::{fused_signature, narrow_dims};
use super::ops::vt;
use super::values::Values;
use super::writer::Src;
use crate::plan::KernelPlan;
use lazycl_clc::VectorAt;

/// The program of an elementwise plan.
///
/// Elementwise kernels are grid-stride loops. When the iteration space collapses to one
/// dim (every load is either full-size or a single element), the main loop handles
/// [`KernelPlan::vector_width`] neighbouring elements per work-item (16 bytes of the
/// narrowest type) with vector loads and stores (through vector pointers), then a scalar
/// loop finishes the tail. Indices are 32-bit when
/// the element count allows.
pub(super) fn elementwise_source(plan: &KernelPlan) -> String {
    let mut v = Values::new(plan);
    let ix = v.ix;
    let rank = plan.dims.len();
    let w = plan.vector_width();
    let mut src = Src::at(0);
    src.text(&v.prelude());
    src.open(fused_signature(plan, ""));
    src.line(format_args!("const {ix} nn = ({ix})n;"));
    narrow_dims(rank, ix, &mut src);
    // (Adds through an index go one element at a time.)
    let scatters = plan.outputs.iter().any(|o| o.scatter.is_some());
    let start = if rank == 1 && !scatters {
        src.line(format_args!("const {ix} nv = nn / {w}u;"));
        src.open(format_args!(
            "for ({ix} q = get_global_id(0); q < nv; q += get_global_size(0)) {{"
        ));
        vector_step(&mut v, &mut src);
        src.close();
        format!("nv * {w}u + get_global_id(0)")
    } else {
        "get_global_id(0)".to_string()
    };
    let private: Vec<(usize, u32)> = plan
        .outputs
        .iter()
        .enumerate()
        .filter_map(|(k, o)| o.scatter.and_then(|s| s.private).map(|n| (k, n)))
        .collect();
    for &(k, n) in &private {
        src.line(format_args!("__local {} acc{k}[{n}];", vt(plan.outputs[k].dtype)));
        src.line(format_args!(
            "for (uint i = get_local_id(0); i < {n}u; i += get_local_size(0)) acc{k}[i] = 0;"
        ));
    }
    if !private.is_empty() {
        src.line("barrier(CLK_LOCAL_MEM_FENCE);");
    }
    src.open(format_args!(
        "for ({ix} gid = {start}; gid < nn; gid += get_global_size(0)) {{"
    ));
    element_step(&mut v, &mut src);
    src.close();
    // Each group's private copies, added into the arrays where nonzero.
    if !private.is_empty() {
        src.line("barrier(CLK_LOCAL_MEM_FENCE);");
    }
    for &(k, n) in &private {
        let t = plan.outputs[k].dtype;
        src.open(format_args!(
            "for (uint i = get_local_id(0); i < {n}u; i += get_local_size(0)) {{"
        ));
        src.line(format_args!("const {} x = acc{k}[i];", vt(t)));
        src.line(format_args!(
            "if (x != 0) {{ {} }}",
            super::views::atomic_add(t, &format!("&out{k}[i]"), "__global", "x")
        ));
        src.close();
    }
    src.close();
    src.into_string()
}

/// Vector `q` of a one-dim plan: one vector load per full-size input, every value per
/// lane (`v{i}_{lane}`), one vector store per output.
fn vector_step(v: &mut Values, src: &mut Src) {
    let plan = v.plan;
    let w = plan.vector_width();
    if plan.reads_views() {
        // Lane `l` is element `i0 + l` (for strided loads, box tests, region stores).
        src.line(format_args!("const {} i0 = q * {w}u;", v.ix));
    }
    for (slot, input) in plan.inputs.iter().enumerate() {
        if let Some(a) = input.strided.as_ref().filter(|a| a.vectorizable()) {
            let load = super::views::vector_load(plan, slot, a, w);
            src.line(format_args!("const {} L{slot} = {load};", input.dtype.vector(w)));
        }
        if input.is_full() {
            // A vector pointer, not vload: buffers are aligned far beyond the vector
            // size, and NVIDIA's compiler emits one wide load only for the pointer.
            let t = input.dtype.vector(w);
            let load = super::views::input_vector(plan, slot, w, VectorAt::Vector("q"));
            src.line(format_args!("const {t} L{slot} = {load};"));
        }
    }
    // (One Philox call per counter for the lanes' random numbers, one base position.)
    let base = format!("q * {w}u");
    super::from_index::blocks(plan, &base, w, |i| !plan.values[i].in_branch, src);
    for lane in 0..w {
        for i in (0..plan.values.len()).filter(|&i| !plan.values[i].in_branch) {
            let e = v.expr(i, "", Some(lane));
            src.line(format_args!(
                "const {} v{i}_{lane} = {e};",
                vt(plan.values[i].dtype)
            ));
        }
    }
    for (k, output) in plan.outputs.iter().enumerate() {
        if let Some(a) = &output.store {
            for l in 0..w {
                let at = super::views::store_offset(plan, k, a, Some(l));
                src.line(super::views::store(
                    plan,
                    k,
                    &at,
                    &format!("v{}_{l}", output.value),
                ));
            }
            continue;
        }
        let parts: Vec<String> = (0..w).map(|l| format!("v{}_{l}", output.value)).collect();
        let value = format!("({})({})", output.dtype.vector(w), parts.join(", "));
        src.line(super::views::vector_store(
            plan,
            k,
            w,
            VectorAt::Vector("q"),
            &value,
        ));
    }
}

/// Element `gid`: its indices where a load needs them, every value, the outputs' stores.
pub(super) fn element_step(v: &mut Values, src: &mut Src) {
    v.element_indices(src);
    v.all("gid", src);
    for (k, output) in v.plan.outputs.iter().enumerate() {
        match (&output.store, output.scatter) {
            (Some(a), Some(s)) => src.line(super::views::scatter_add(
                v.plan,
                k,
                a,
                output.dtype,
                &format!("v{}", s.index),
                &format!("v{}", output.value),
            )),
            (Some(a), None) => {
                let at = super::views::store_offset(v.plan, k, a, None);
                src.line(super::views::store(v.plan, k, &at, &format!("v{}", output.value)))
            }
            (None, _) => src.line(super::views::store(
                v.plan,
                k,
                "gid",
                &format!("v{}", output.value),
            )),
        }
    }
}
