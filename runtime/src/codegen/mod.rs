//! Code generation: a fused kernel plan becomes OpenCL C. Only runs on a cache miss.
//!
//! The entry points: [`fused_source`] prints a plan's program by its kind, and
//! [`combine_source`] the combine pass of a split reduction. Below them: the kernels'
//! parameters as data ([`abi`]), the rendering of ops ([`ops`]) and of a plan's values
//! as statements ([`values`]), and the writer the printers write through ([`writer`]).

use std::fmt::Write;

use crate::dtype::DType;
use crate::fuse::{KernelPlan, ReducePlan, Value};
use crate::graph::ReduceOp;
use crate::layout::VECTOR_WIDTH;

pub(crate) mod abi;
mod column;
mod elementwise;
mod finish_in;
mod ops;
mod row_column;
mod values;
mod writer;

pub(crate) use abi::{COMBINE_KERNEL_NAME, FUSED_KERNEL_NAME};

use abi::fused_signature;
use column::column_layout;
use ops::{arg_better, combine, identity, load_index, value_expr, vt, Helpers};

fn emit_values(plan: &KernelPlan, full: &str, helpers: &mut Helpers, body: &mut String, indent: &str) {
    emit_values_upto(plan, plan.values.len(), &[], full, helpers, body, indent);
}

/// [`emit_values`] for the values before index `upto` only; those in `given` are already
/// in scope as `h{i}` (computed once per row: [`row_column`]'s per-row values).
fn emit_values_upto(
    plan: &KernelPlan,
    upto: usize,
    given: &[usize],
    full: &str,
    helpers: &mut Helpers,
    body: &mut String,
    indent: &str,
) {
    for i in 0..upto {
        let e = if given.contains(&i) {
            format!("h{i}")
        } else {
            value_expr(plan, i, full, None, helpers)
        };
        let _ = writeln!(body, "{indent}const {} v{i} = {e};", vt(plan.values[i].1));
    }
}

/// Pragmas and helper functions.
fn prelude(plan: &KernelPlan, helpers: &Helpers) -> String {
    // Rust never contracts `a * b + c` into an fma; neither do we (mul_add does, explicitly).
    let mut src = String::from("#pragma OPENCL FP_CONTRACT OFF\n");
    if plan.values.iter().any(|(_, d)| *d == DType::F64) {
        src.push_str("#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n");
    }
    for h in helpers.iter() {
        src.push_str(h);
        src.push('\n');
    }
    src
}

/// Generates the complete OpenCL C program of a fused kernel.
///
/// Elementwise kernels are grid-stride loops. When every load is either full-size or a
/// single element (the iteration space collapses to one dim), the main loop handles
/// [`VECTOR_WIDTH`] neighbouring elements per work-item with vector loads and stores
/// (through `T4` pointers), then a scalar loop finishes the tail. Indices are 32-bit when
/// the element count allows.
pub(crate) fn fused_source(plan: &KernelPlan) -> String {
    if let Some(r) = plan.reduce {
        return reduce_source(plan, &r);
    }
    if let Some(f) = &plan.finishes {
        return finish_in::finish_in_source(plan, f);
    }
    elementwise::elementwise_source(plan)
}

/// Index decomposition of `(o, k)` into the collapsed dims `i0..`, kept dims from `o` and
/// reduced dims from `k`, then the full linear index `fidx`.
fn reduce_indices(plan: &KernelPlan, r: &ReducePlan, ix: &str, indent: &str) -> String {
    let rank = plan.dims.len();
    let mut s = String::new();
    for (var, reduced) in [("o", false), ("k", true)] {
        let dims: Vec<usize> = (0..rank)
            .filter(|&d| (r.red_mask & (1 << d) != 0) == reduced)
            .collect();
        if dims.is_empty() {
            continue;
        }
        let _ = writeln!(s, "{indent}{ix} q{var} = {var};");
        for (n, &d) in dims.iter().enumerate().rev() {
            if n == 0 {
                let _ = writeln!(s, "{indent}const {ix} i{d} = q{var};");
            } else {
                let _ = writeln!(s, "{indent}const {ix} i{d} = q{var} % d{d}; q{var} /= d{d};");
            }
        }
    }
    let _ = writeln!(s, "{indent}const {ix} fidx = {};", load_index(0, rank));
    s
}

/// The start of a loop body that handles [`VECTOR_WIDTH`] neighbouring elements along the
/// innermost dim: the indices of the first, one vector load per input that varies along
/// that dim (others are single loads, shared by the lanes), and every value per lane as
/// `v{i}_{lane}`. Aligned loads go through a vector pointer (buffers are aligned far beyond
/// the vector size), so that the compiler emits one wide load: `vload` is much slower on
/// NVIDIA.
fn vector_values(
    plan: &KernelPlan,
    r: &ReducePlan,
    ix: &str,
    ind: &str,
    aligned: bool,
    helpers: &mut Helpers,
) -> String {
    vector_values_upto(plan, plan.values.len(), &[], r, ix, ind, aligned, helpers)
}

/// [`vector_values`] for the values before index `upto` only; those in `given` are
/// already in scope as `h{i}`, the same in every lane.
#[allow(clippy::too_many_arguments)]
fn vector_values_upto(
    plan: &KernelPlan,
    upto: usize,
    given: &[usize],
    r: &ReducePlan,
    ix: &str,
    ind: &str,
    aligned: bool,
    helpers: &mut Helpers,
) -> String {
    let w = VECTOR_WIDTH;
    let rank = plan.dims.len();
    let last = 1u32 << (rank - 1);
    let vec_slots: Vec<bool> = plan.inputs.iter().map(|i| i.1 & last == 0).collect();
    let mut body = reduce_indices(plan, r, ix, ind);
    for (slot, (dt, mask, _)) in plan.inputs.iter().enumerate() {
        if vec_slots[slot] {
            let idx = if *mask == 0 {
                "fidx".to_string()
            } else {
                load_index(*mask, rank)
            };
            let v = vt(*dt);
            let load = if aligned {
                format!("((__global const {v}{w}*)in{slot})[({idx}) / {w}u]")
            } else {
                format!("vload{w}(0, in{slot} + {idx})")
            };
            let _ = writeln!(body, "{ind}const {v}{w} L{slot} = {load};");
        }
    }
    for lane in 0..w {
        for i in 0..upto {
            let e = if given.contains(&i) {
                format!("h{i}")
            } else {
                value_expr_vec(plan, i, lane, &vec_slots, helpers)
            };
            let _ = writeln!(body, "{ind}const {} v{i}_{lane} = {e};", vt(plan.values[i].1));
        }
    }
    body
}

/// A reduction kernel: the fused elementwise cone is evaluated per element and combined.
///
/// With `lanes > 0`, a work-group of `G` work-items handles `G / lanes` outputs; the lanes
/// of one output stride over its segment and combine in local memory. When the only
/// reduced dim is the innermost one, each lane takes [`VECTOR_WIDTH`] neighbouring
/// elements per step with vector loads. With `lanes == 0` the innermost dim is kept: when
/// it is the only kept dim, the column layout ([`column_layout`]) streams whole rows;
/// otherwise each work-item owns one (output, segment) pair and loops serially, so
/// neighbouring work-items read neighbouring addresses (four reduced elements per step,
/// so that several loads are in flight per work-item). Each output's elements are
/// split into `S` segments (a run-time argument); with `S > 1` this kernel writes partial
/// results, which the combine kernel finishes, or, with `finish_in_kernel`, the last
/// work-group of each block ([`finish_in_kernel`], [`column::column_finish`]). Float sums are
/// compensated (Kahan) in the per-work-item loops when those are long
/// ([`ReducePlan::compensated`]).
fn reduce_source(plan: &KernelPlan, r: &ReducePlan) -> String {
    let mut helpers = Helpers::default();
    let ix = if plan.narrow_index { "uint" } else { "ulong" };
    let d = r.in_dtype;
    let t = vt(d);
    let out = plan.outputs[0].0;
    let arg = r.op.is_arg();
    let kahan = r.compensated;
    // One accumulation step of value `v` found at reduced index `k` into accumulator
    // `acc{x}` (with its compensation `comp{x}` and arg index `acci{x}`).
    let step_into = |v: &str, k: &str, indent: &str, x: &str| -> String {
        let (a, c, ai) = (format!("acc{x}"), format!("comp{x}"), format!("acci{x}"));
        if arg {
            format!(
                "{indent}if ({}) {{ {a} = {v}; {ai} = {k}; }}\n",
                arg_better(r.op, d, &a, &ai, v, k)
            )
        } else if kahan {
            format!("{indent}{{ const {t} y = {v} - {c}; const {t} tt = {a} + y; {c} = (tt - {a}) - y; {a} = tt; }}\n")
        } else {
            format!("{indent}{a} = {};\n", combine(r.op, d, &a, v))
        }
    };
    let step = |v: &str, k: &str, indent: &str| step_into(v, k, indent, "");
    let ind = "            ";
    // The scalar loop body for reduced index k.
    let mut scalar_body = reduce_indices(plan, r, ix, ind);
    emit_values(plan, "fidx", &mut helpers, &mut scalar_body, ind);
    scalar_body.push_str(&step(&format!("v{out}"), "k", ind));
    // The vector loop body for reduced indices k .. k + VECTOR_WIDTH.
    let w = VECTOR_WIDTH;
    let mut vector_body = String::new();
    if r.vector {
        vector_body = vector_values(plan, r, ix, ind, r.aligned, &mut helpers);
        if arg {
            for lane in 0..w {
                vector_body.push_str(&step(&format!("v{out}_{lane}"), &format!("(k + {lane})"), ind));
            }
        } else {
            // Combine the four values pairwise first: one accumulation step (and one
            // compensation) per four elements, and a shorter dependency chain.
            let lane = |l: usize| format!("v{out}_{l}");
            let pair = combine(
                r.op,
                d,
                &combine(r.op, d, &lane(0), &lane(1)),
                &combine(r.op, d, &lane(2), &lane(3)),
            );
            let _ = writeln!(vector_body, "{ind}const {t} quad = {pair};");
            vector_body.push_str(&step("quad", "k", ind));
        }
    }
    // The serial layout takes four reduced elements per step the same way (not for the
    // arg reductions, which track an index per element).
    let mut serial_quad = String::new();
    if !arg {
        for j in 0..w {
            let _ = writeln!(
                serial_quad,
                "{ind}{t} p{j};\n{ind}{{\n{ind}const {ix} k = kb + {j}u;"
            );
            serial_quad.push_str(&reduce_indices(plan, r, ix, ind));
            emit_values(plan, "fidx", &mut helpers, &mut serial_quad, ind);
            let _ = writeln!(serial_quad, "{ind}p{j} = v{out};\n{ind}}}");
        }
        let pair = combine(
            r.op,
            d,
            &combine(r.op, d, "p0", "p1"),
            &combine(r.op, d, "p2", "p3"),
        );
        let _ = writeln!(serial_quad, "{ind}const {t} quad = {pair};");
        serial_quad.push_str(&step("quad", "kb", ind));
    }
    // The column layout: `column_width` neighbouring outputs per work-item, one vector
    // load per input and row when that is 4 (inputs broadcast along the innermost dim: one
    // scalar load), an accumulator per output.
    let mut column_body = String::new();
    // With rows shared by a row of work-items, per-row values computed once per row
    // before the column pass (`row_column::row_loop_hoisted`) are in scope as `h{i}`.
    let given = match plan.row {
        Some(row) if r.row_vectors == 0 && r.group_rows == 0 => row_column::row_loop_hoisted(plan, r, &row),
        _ => Vec::new(),
    };
    if r.columns {
        if r.column_width == w {
            column_body = vector_values_upto(plan, plan.values.len(), &given, r, ix, ind, true, &mut helpers);
            for lane in 0..w {
                column_body.push_str(&step_into(&format!("v{out}_{lane}"), "k", ind, &lane.to_string()));
            }
        } else {
            column_body = reduce_indices(plan, r, ix, ind);
            let len = plan.values.len();
            emit_values_upto(plan, len, &given, "fidx", &mut helpers, &mut column_body, ind);
            column_body.push_str(&step_into(&format!("v{out}"), "k", ind, "0"));
        }
    }
    let mut src = prelude(plan, &helpers);
    src.push_str("#define NONE ULONG_MAX\n");
    let finish = |indent: &str| -> String {
        if arg {
            format!("{indent}if (fin) {{ outi[o * S + s] = (acci == NONE ? 0 : acci); }} else {{ outv[o * S + s] = acc; outi[o * S + s] = acci; }}\n")
        } else if r.op == ReduceOp::Mean {
            format!("{indent}outv[o * S + s] = fin ? acc / ({t})n_red : acc;\n")
        } else {
            format!("{indent}outv[o * S + s] = acc;\n")
        }
    };
    let mut header = String::new();
    // A group size the layout's source is written for is declared, so that the compiler
    // fits its registers to it (NVIDIA would otherwise refuse a large group).
    let required = if r.group_rows > 0 {
        format!(
            " __attribute__((reqd_work_group_size({}, 1, 1)))",
            plan.group_size
        )
    } else {
        String::new()
    };
    let _ = writeln!(header, "{}", fused_signature(plan, &required));
    let _ = writeln!(
        header,
        "    const {ix} n_out = ({ix})n_out_, n_red = ({ix})n_red_, S = ({ix})S_;"
    );
    header.push_str(&narrow_dims(plan.dims.len(), ix));
    src.push_str(&header);
    let _ = writeln!(
        src,
        "    {t} acc = {}; {t} comp = ({t})0; ulong acci = NONE;\n    (void)comp; (void)acci;",
        identity(r.op, d)
    );
    if let Some(total) = &plan.row_total {
        let _ = writeln!(
            src,
            "    {} tacc = {};",
            vt(total.dtype),
            identity(total.op, total.dtype)
        );
    }
    // The layouts that take a reduction over the rows beside their row reduction: the
    // kernel's text, with that reduction's end before the closing brace.
    let with_total = |text: String| -> String {
        debug_assert!(
            text.ends_with("}\n"),
            "a layout's kernel ends with its closing brace"
        );
        match (&plan.row_total, text.strip_suffix("}\n")) {
            (Some(total), Some(body)) => format!("{body}{}}}\n", row_column::row_total_end(plan, total, ix)),
            _ => text,
        }
    };
    if let (true, Some(row)) = (r.row_vectors > 0, &plan.row) {
        src.push_str(&with_total(row_column::rows_per_item(
            plan,
            r,
            row,
            ix,
            &mut helpers,
        )));
        return src;
    }
    if let (true, Some(row)) = (r.group_rows > 0, &plan.row) {
        src.push_str(&with_total(row_column::group_rows(
            plan,
            r,
            row,
            ix,
            &mut helpers,
        )));
        return src;
    }
    if r.columns {
        let rows = plan
            .row
            .map(|row| row_column::row_loop(plan, r, &row, ix, &column_body, &mut helpers));
        let text = column_layout(r, plan.group_size, ix, &column_body, rows.as_deref());
        src.push_str(&with_total(text));
        return src;
    }
    if r.lanes == 0 {
        let _ = write!(
            src,
            "    const {ix} gid = get_global_id(0);\n    const {ix} o = gid % n_out, s = gid / n_out;\n    if (s >= S) return;\n    const {ix} chunk = (n_red + S - 1) / S;\n    const {ix} k0 = min(n_red, s * chunk), k1 = min(n_red, k0 + chunk);\n    {ix} kk = k0;\n{quad_loop}    for ({ix} k = kk; k < k1; k++) {{\n{scalar_body}    }}\n{fin}}}\n",
            quad_loop = if arg {
                String::new()
            } else {
                // (Counting quads here instead, as the lanes layout does, measured 0.64-0.70 of a
                // copy on the H200 against 0.74-0.76 for this form.)
                format!("    for (; kk + {w}u <= k1; kk += {w}u) {{\n        const {ix} kb = kk;\n{serial_quad}    }}\n")
            },
            fin = finish("    "),
        );
        return src;
    }
    let lanes = r.lanes;
    let g = plan.group_size;
    let _ = write!(
        src,
        "    __local {t} sv[{g}];\n    __local ulong si[{g}];\n    __local uint last_group;\n    (void)last_group;\n    const uint lid = get_local_id(0), lane = lid % {lanes}u, row = lid / {lanes}u;\n    const {ix} grp = get_group_id(0);\n    const {ix} o = (grp / S) * ({g}u / {lanes}u) + row, s = grp % S;\n    if (o < n_out) {{\n        // Segments start at multiples of {w} so that vector loads stay aligned.\n        const {ix} chunk = ((n_red + S - 1) / S + {w}u - 1) / {w}u * {w}u;\n        const {ix} k0 = min(n_red, s * chunk), k1 = min(n_red, k0 + chunk);\n        {ix} kk = k0;\n"
    );
    if r.vector {
        // The loop counts vectors (`q < k1 / 4`), not elements (`k + 3 < k1`): with the
        // latter NVIDIA's compiler streams the loads far worse (0.71 against 0.87 of a raw
        // read for 25,300-element rows on the H200).
        let _ = write!(
            src,
            "        // Each lane takes whole groups of {w}; only the last (k1 - k0) % {w} elements\n        // are left for the scalar loop.\n{lane_loop}            const {ix} k = q * {w}u;\n{vector_body}        }}\n        kk = k1 - (k1 - k0) % {w}u;\n",
            lane_loop = if r.contiguous_lanes {
                // CPUs: each lane streams one contiguous run (PoCL runs a work-item's loop
                // inside the loop over work-items, so interleaved lanes would stride).
                format!("        const {ix} q0 = k0 / {w}u, nq = k1 / {w}u - q0, per = (nq + {lanes}u - 1) / {lanes}u;\n        const {ix} qe = min(q0 + nq, q0 + (lane + 1u) * per);\n        for ({ix} q = q0 + lane * per; q < qe; q++) {{\n")
            } else {
                format!("        #pragma unroll 2\n        for ({ix} q = k0 / {w}u + lane; q < k1 / {w}u; q += {lanes}u) {{\n")
            },
        );
    }
    let _ = write!(
        src,
        "        for ({ix} k = kk + lane; k < k1; k += {lanes}u) {{\n{scalar_body}        }}\n    }}\n    sv[lid] = acc; si[lid] = acci;\n    barrier(CLK_LOCAL_MEM_FENCE);\n    for (uint st = {lanes}u / 2u; st > 0u; st >>= 1) {{\n        if (lane < st) {{\n{tree}        }}\n        barrier(CLK_LOCAL_MEM_FENCE);\n    }}\n    if (lane == 0u && o < n_out) {{\n        acc = sv[lid]; acci = si[lid];\n{fin}    }}\n",
        tree = tree_step(r.op, d, "            "),
        fin = finish("        "),
    );
    if r.finish_in_kernel {
        src.push_str(&finish_in_kernel(r, ix, lanes));
    }
    src.push_str("}\n");
    src
}

/// The end of a lanes-layout kernel that finishes its reduction itself: each work-group
/// counts itself done for its block of outputs (after a fence, so that its partials are
/// visible first); the last one to finish reads the block's partials (volatile: never
/// from a stale cache), combines them like the combine pass, writes the results and resets
/// the counter for the queue's next reduction. Every barrier is reached by every
/// work-item: only loads and stores depend on being last.
fn finish_in_kernel(r: &ReducePlan, ix: &str, lanes: u32) -> String {
    let d = r.in_dtype;
    let t = vt(d);
    let step = if r.op.is_arg() {
        format!(
            "            if ({}) {{ acc = pvv[k]; acci = piv[k]; }}\n",
            arg_better(r.op, d, "acc", "acci", "pvv[k]", "piv[k]")
        )
    } else {
        format!("            acc = {};\n", combine(r.op, d, "acc", "pvv[k]"))
    };
    let write = if r.op.is_arg() {
        "        fini[o] = (acci == NONE ? 0 : acci);\n".to_string()
    } else if r.op == ReduceOp::Mean {
        format!("        finv[o] = acc / ({t})n_red;\n")
    } else {
        "        finv[o] = acc;\n".to_string()
    };
    format!(
        "    mem_fence(CLK_GLOBAL_MEM_FENCE);\n    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);\n    if (lid == 0u) last_group = (atomic_inc(&done[grp / S]) == (uint)(S - 1u));\n    barrier(CLK_LOCAL_MEM_FENCE);\n    const uint last = last_group;\n    acc = {id}; acci = NONE;\n    if (last && o < n_out) {{\n        volatile __global const {t}* pvv = outv;\n        volatile __global const ulong* piv = outi;\n        (void)piv;\n        for ({ix} k = o * S + lane; k < (o + 1) * S; k += {lanes}u) {{\n{step}        }}\n    }}\n    sv[lid] = acc; si[lid] = acci;\n    barrier(CLK_LOCAL_MEM_FENCE);\n    for (uint st = {lanes}u / 2u; st > 0u; st >>= 1) {{\n        if (lane < st) {{\n{tree}        }}\n        barrier(CLK_LOCAL_MEM_FENCE);\n    }}\n    if (last && lane == 0u && o < n_out) {{\n        acc = sv[lid]; acci = si[lid];\n{write}    }}\n    if (last && lid == 0u) done[grp / S] = 0u;\n",
        id = identity(r.op, d),
        tree = tree_step(r.op, d, "            "),
    )
}

/// Lane `lane` of value `idx` in a vectorized reduction step: slots in `vec_slots` were
/// loaded as vectors `L{slot}`; other loads are the same element for every lane.
fn value_expr_vec(
    plan: &KernelPlan,
    idx: usize,
    lane: usize,
    vec_slots: &[bool],
    helpers: &mut Helpers,
) -> String {
    match plan.values[idx].0 {
        Value::Load { slot } if vec_slots[slot] => format!("L{slot}.s{lane}"),
        Value::Load { slot } => format!("in{slot}[{}]", load_index(plan.inputs[slot].1, plan.dims.len())),
        _ => value_expr(plan, idx, "", Some(lane), helpers),
    }
}

fn tree_step(op: ReduceOp, d: DType, indent: &str) -> String {
    if op.is_arg() {
        format!(
            "{indent}if ({}) {{ sv[lid] = sv[lid + st]; si[lid] = si[lid + st]; }}\n",
            arg_better(op, d, "sv[lid]", "si[lid]", "sv[lid + st]", "si[lid + st]")
        )
    } else {
        format!(
            "{indent}sv[lid] = {};\n",
            combine(op, d, "sv[lid]", "sv[lid + st]")
        )
    }
}

/// The second pass of a reduction split into `S` segments: reduces partials `[o * S + s]`
/// over `s` for each output `o`. A work-group of `group` items handles `group / lanes`
/// outputs; `lanes` (a power of two) is chosen from `S`, so that many outputs with few
/// segments each do not leave most work-items idle.
pub(crate) fn combine_source(op: ReduceOp, d: DType, group: u32, lanes: u32) -> String {
    let t = vt(d);
    let mut src = String::from("#pragma OPENCL FP_CONTRACT OFF\n");
    if d == DType::F64 {
        src.push_str("#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n");
    }
    src.push_str("#define NONE ULONG_MAX\n");
    let step = if op.is_arg() {
        format!(
            "            if ({}) {{ acc = pv[k]; acci = pi[k]; }}\n",
            arg_better(op, d, "acc", "acci", "pv[k]", "pi[k]")
        )
    } else {
        format!("            acc = {};\n", combine(op, d, "acc", "pv[k]"))
    };
    let fin = if op.is_arg() {
        "        outi[o] = (acci == NONE ? 0 : acci);\n".to_string()
    } else if op == ReduceOp::Mean {
        format!("        outv[o] = acc / ({t})n_total;\n")
    } else {
        "        outv[o] = acc;\n".to_string()
    };
    let _ = write!(
        src,
        "{signature}\n    __local {t} sv[{group}];\n    __local ulong si[{group}];\n    const uint lid = get_local_id(0), lane = lid % {lanes}u, row = lid / {lanes}u;\n    const ulong o = get_group_id(0) * ({group}u / {lanes}u) + row;\n    {t} acc = {id}; ulong acci = NONE;\n    (void)acci; (void)pi; (void)outi; (void)outv; (void)n_total;\n    if (o < n_out) {{\n        for (ulong k = o * S + lane; k < (o + 1) * S; k += {lanes}u) {{\n{step}        }}\n    }}\n    sv[lid] = acc; si[lid] = acci;\n    barrier(CLK_LOCAL_MEM_FENCE);\n    for (uint st = {lanes}u / 2u; st > 0u; st >>= 1) {{\n        if (lane < st) {{\n{tree}        }}\n        barrier(CLK_LOCAL_MEM_FENCE);\n    }}\n    if (lane == 0u && o < n_out) {{\n        acc = sv[lid]; acci = si[lid];\n{fin}    }}\n}}\n",
        signature = abi::combine_signature(d),
        id = identity(op, d),
        tree = tree_step(op, d, "            "),
    );
    src
}

/// The dims as locals of the index type (`uint` when indices fit in 32 bits), so that
/// index arithmetic in the loops stays 32-bit.
fn narrow_dims(rank: usize, ix: &str) -> String {
    (0..rank)
        .map(|k| format!("    const {ix} d{k} = ({ix})d{k}_;\n"))
        .collect()
}
