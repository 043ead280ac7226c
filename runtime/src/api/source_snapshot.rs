//! The generated OpenCL C of a fixed set of flushes, planned for two device profiles (an
//! H200 and PoCL on a 2-core CPU, fixed here so that the machine running the test does
//! not matter), compared with the text in `source_snapshot.txt`. A change to planning or
//! codegen that changes any kernel shows here as a diff of that file; one meant to keep
//! every kernel (a restructuring) must leave it unchanged.
//!
//! `LAZYCL_UPDATE_SNAPSHOTS=1 cargo test -p lazycl-runtime source_snapshot` rewrites the
//! file after an intended change; review its diff before committing it.

use std::fmt::Write as _;

use crate::api::array::Array;
use crate::backend::context::Context;
use crate::codegen::{combine_source, fused_source, gemm_combine_source};
use crate::dtype::{DType, Element};
use crate::graph::{NodeRef, SearchSide};
use crate::plan::compact::{compact_plan, Picked};
use crate::plan::select::select_plan;
use crate::plan::sort::{sort_plan, Order, Payload, SortKernel};
use crate::plan::{DeviceProfile, Finish, KernelPlan};
use crate::profile::Tuning;

/// An H200 as NVIDIA's OpenCL reports it.
const H200: DeviceProfile = DeviceProfile {
    gpu: true,
    compute_units: 132,
    max_group: 1024,
    local_mem_bytes: 48 * 1024,
    private_bytes: 1 << 20,
    parameter_bytes: 4352,
    tuning: Tuning {
        combine_pass_only: false,
        shared_rows_anywhere: false,
        tiles_anywhere: false,
        gemm_tile: None,
        tile_trial_limit: None,
        row_items: None,
        row_work_items: None,
        rows_per_group: None,
        row_width: None,
        rows_online: false,
        serial_builds: false,
        topk_by_sort: false,
    },
};

/// PoCL on a 2-core CPU.
const POCL: DeviceProfile = DeviceProfile {
    gpu: false,
    compute_units: 2,
    max_group: 4096,
    local_mem_bytes: 256 * 1024,
    private_bytes: 1 << 20,
    parameter_bytes: 1024,
    ..H200
};

const PROFILES: [(&str, DeviceProfile); 2] = [("h200", H200), ("pocl", POCL)];

fn array<T: Element>(ctx: &Context, shape: &[usize], f: impl Fn(usize) -> T) -> Array<T> {
    let n: usize = shape.iter().product();
    let data: Vec<T> = (0..n).map(f).collect();
    ctx.from_shape_slice(shape.to_vec(), &data).unwrap()
}

fn f32s(ctx: &Context, shape: &[usize]) -> Array<f32> {
    array(ctx, shape, |i| ((i * 7919) % 101) as f32 * 0.01 - 0.5)
}

fn f64s(ctx: &Context, shape: &[usize]) -> Array<f64> {
    array(ctx, shape, |i| ((i * 7919) % 103) as f64 * 0.01 - 0.5)
}

fn i32s(ctx: &Context, shape: &[usize]) -> Array<i32> {
    array(ctx, shape, |i| ((i * 7919) % 97) as i32 - 40)
}

/// The flushes: each a name and its roots, recorded on `ctx` (nothing runs).
fn flushes(ctx: &Context) -> Vec<(&'static str, Vec<NodeRef>)> {
    let mut out: Vec<(&'static str, Vec<NodeRef>)> = Vec::new();
    let mut push = |name: &'static str, roots: Vec<NodeRef>| out.push((name, roots));

    let a = f32s(ctx, &[1000]);
    let b = f32s(ctx, &[1000]);
    push(
        "elementwise chain",
        vec![((&a * 2.0f32 + &b).exp() - &a).tanh().node],
    );
    let m = f64s(ctx, &[7, 5]);
    let v = f64s(ctx, &[5]);
    push("broadcast f64", vec![(&m * &v + 1.0f64).sqrt().node]);
    let mi = i32s(ctx, &[7, 5]);
    push(
        "integers and a mask",
        vec![(&mi * 3i32 + 1i32).gt(0i32).node, (&mi % 4i32).node],
    );
    let sq = f32s(ctx, &[64, 96]);
    let sq2 = f32s(ctx, &[96, 64]);
    push("transposed read", vec![(sq.t() + &sq2).node]);
    let c3 = f32s(ctx, &[3, 4, 5]);
    push("permuted read", vec![(c3.permuted_axes([2, 0, 1]) * 2.0f32).node]);
    let p = crate::api::regions::concatenate(0, &[&a, &b]).unwrap();
    push("concatenate and pad", vec![(p.pad(&[(2, 3)], 0.5) * 3.0f32).node]);
    let mut rng = ctx.rng(7);
    push("random numbers", vec![rng.random::<f32>([33, 17]).unwrap().node]);
    push(
        "normal numbers",
        vec![(rng.standard_normal::<f64>([129]).unwrap() * 2.0f64).node],
    );
    push(
        "positions",
        vec![(ctx.arange(0.0f32, 9.0, 0.5).unwrap() + ctx.eye::<f32>(18).unwrap()).node],
    );
    let idx = array(ctx, &[11], |i| ((i * 5) % 7) as u32);
    push("take", vec![(sq.take(-1, &idx) + 1.0f32).node]);
    let sorted = array(ctx, &[50], |i| i as f32 * 0.1);
    push(
        "searchsorted",
        vec![sorted.searchsorted(&a, SearchSide::Left).node],
    );

    let xr = f32s(ctx, &[2000, 100]);
    let zr = xr.sum_axes(&[1], true);
    let per_row = (zr.exp() + 1.0f32).ln() / (&zr * &zr + 1.0f32);
    push(
        "a per-row value read along the columns (stored on a CPU, recomputed on a GPU)",
        vec![(&xr * &per_row).sum_axis(0).node],
    );
    push("full sum", vec![f32s(ctx, &[100_000]).sum().node]);
    push(
        "sum of f64 and i32",
        vec![f64s(ctx, &[4097]).sum().node, i32s(ctx, &[4097]).sum().node],
    );
    let rows = f32s(ctx, &[64, 1000]);
    push("row sums (lanes)", vec![rows.sum_axis(1).node]);
    let cols = f32s(ctx, &[5000, 64]);
    push("column sums", vec![cols.sum_axis(0).node]);
    push("middle axis max", vec![f32s(ctx, &[6, 300, 8]).amax_axis(1).node]);
    push("argmax along rows", vec![rows.argmax_axis(-1).node]);
    push("argmax of all", vec![f32s(ctx, &[70_001]).argmax().node]);
    push(
        "mean and variance",
        vec![cols.mean_axis(0).node, cols.var_axis(0, 1.0).node],
    );
    for (rows, cols) in [(20_000, 100), (40_000, 33), (9_001, 37)] {
        let w = f64s(ctx, &[cols]);
        let big = f64s(ctx, &[rows, cols]);
        push(
            "finished by the consumer",
            vec![(&w - &(big.sum_axis(0) * 0.001f64 + &w * 0.5f64)).node],
        );
    }
    // A logistic regression step: a row reduction inside the column reduction, and the
    // bias total beside it.
    let x = f32s(ctx, &[300, 8]);
    let wd = f32s(ctx, &[8]);
    let y = f32s(ctx, &[300, 1]);
    let bias = f32s(ctx, &[1]);
    let z = (&x * &wd).sum_axes(&[1], true) + &bias;
    let r = (&z * 0.5f32).tanh() - &y;
    let g = (&x * &r).sum_axis(0);
    let total = (&bias - &r * 0.2f32).mean_axis(0);
    push("row reduction inside", vec![g.node.clone()]);
    push(
        "row reduction inside, total beside",
        vec![z.node.clone(), g.node, total.node],
    );
    for (n, d) in [(257, 100), (40, 1000), (5000, 20)] {
        let x = f32s(ctx, &[n, d]);
        let w = f32s(ctx, &[d]);
        let y = f32s(ctx, &[n, 1]);
        let z = (&x * &w).sum_axes(&[1], true) + &bias;
        let r = (&z * 0.5f32).tanh() - &y;
        let g = (&x * &r).sum_axis(0);
        let total = (&bias - &r * 0.2f32).mean_axis(0);
        push(
            "a wider row reduction inside, total beside",
            vec![g.node, total.node],
        );
    }

    push("cumsum along rows", vec![rows.cumsum(-1).node]);
    push("cumsum along columns", vec![cols.cumsum(0).node]);
    push("cumprod of all", vec![f64s(ctx, &[5000]).cumprod(0).node]);

    push("softmax", vec![rows.softmax(-1).node]);
    push(
        "log_softmax of f64",
        vec![f64s(ctx, &[33, 77]).log_softmax(1).node],
    );
    push(
        "logsumexp of long rows",
        vec![f32s(ctx, &[4, 100_000]).logsumexp(-1).node],
    );
    push("standard deviation of rows", vec![rows.std_axis(1, 0.0).node]);

    let ga = f32s(ctx, &[64, 32]);
    let gb = f32s(ctx, &[32, 48]);
    push("matrix product", vec![ga.dot(&gb).node]);
    let bias48 = f32s(ctx, &[48]);
    push(
        "product with an epilogue",
        vec![(ga.dot(&gb) + &bias48).max(0.0f32).node],
    );
    push("product of a transposed operand", vec![gb.t().dot(&ga.t()).node]);
    push(
        "batched f64 product",
        vec![f64s(ctx, &[3, 17, 9]).matmul(&f64s(ctx, &[3, 9, 13])).node],
    );
    push(
        "skinny product split along k",
        vec![f32s(ctx, &[8, 20_000]).dot(&f32s(ctx, &[20_000, 8])).node],
    );
    push(
        "product and a softmax of its rows",
        vec![ga.dot(&gb).softmax(-1).node],
    );
    out
}

/// Every source of `plan`'s kernel, with the combine pass it may need.
fn sources(plan: &KernelPlan, profile: &DeviceProfile, text: &mut String) {
    match fused_source(plan) {
        Some(s) => text.push_str(&s),
        None => text.push_str("(no source: a GEMM without its tile)\n"),
    }
    if let Some(s) = gemm_combine_source(plan) {
        text.push_str("--- its split's combine kernel ---\n");
        text.push_str(&s);
    }
    if let crate::plan::KernelKind::Reduction(r) = &plan.kind {
        if r.finish == Finish::CombinePass {
            let group = profile.reduce_group_size();
            let lanes = (r.segments.next_power_of_two() as u32).clamp(1, group);
            text.push_str("--- its combine pass ---\n");
            text.push_str(&combine_source(r.op, r.in_dtype, group, lanes));
        }
    }
}

/// The sources of the fused flushes and of the library's own kernels (sorts, selection,
/// compaction) for `profile`.
fn snapshot_for(ctx: &Context, profile: &DeviceProfile, text: &mut String) {
    for (name, roots) in flushes(ctx) {
        let collected = crate::plan::collect(&roots, None).unwrap().unwrap();
        let mut kernels = crate::plan::plan(&collected, profile);
        for (k, plan) in kernels.iter_mut().enumerate() {
            if let crate::plan::KernelKind::Gemm(g) = &plan.kind {
                let class = crate::plan::gemm::tiles::GemmClass::of(g);
                let tile = crate::exec::tune::fallback(profile, &class);
                crate::plan::gemm::set_tile(plan, tile, profile);
            }
            let kind = crate::plan::describe::kernel_kind(plan);
            let _ = writeln!(text, "=== {name}: kernel {k}: {kind} ===");
            if let Some(e) = &plan.broken {
                let _ = writeln!(text, "(broken: {e})");
            }
            sources(plan, profile, text);
        }
    }
    let sorts = [
        (DType::F32, Order::Ascending, Payload::None, 1, 1000),
        (DType::I64, Order::Descending, Payload::Index, 3, 5000),
        (
            DType::U32,
            Order::Ascending,
            Payload::Values { bytes: 8 },
            1,
            1 << 20,
        ),
    ];
    for (dtype, order, payload, rows, len) in sorts {
        let p = sort_plan(dtype, order, payload, false, rows, len, profile).unwrap();
        for kernel in [SortKernel::Local, SortKernel::Hist, SortKernel::Pass] {
            let _ = writeln!(
                text,
                "=== sort {dtype:?} {order:?} {payload:?} {rows}x{len}: {kernel:?} ==="
            );
            text.push_str(&crate::codegen::sort::sort_source(kernel, &p));
        }
    }
    for (dtype, order, k) in [
        (DType::F32, Order::Ascending, 16),
        (DType::I32, Order::Descending, 5),
    ] {
        if let Ok(Some(p)) = select_plan(dtype, order, 64, 65_536, k, profile) {
            let _ = writeln!(text, "=== select {dtype:?} {order:?} k={k} ===");
            text.push_str(&crate::codegen::select::select_source(&p, 256));
        }
    }
    for picked in [Picked::Elements { bytes: 4 }, Picked::Positions] {
        if let Some(p) = compact_plan(picked, 100_000, profile) {
            let _ = writeln!(text, "=== compact {picked:?} ===");
            text.push_str(&crate::codegen::compact::compact_source(&p));
        }
    }
}

#[test]
fn generated_sources_match_the_snapshot() {
    let ctx = Context::new().unwrap();
    let mut text = String::new();
    for (device, profile) in &PROFILES {
        let _ = writeln!(text, "##### {device} #####");
        snapshot_for(&ctx, profile, &mut text);
    }
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/api/source_snapshot.txt");
    if std::env::var_os("LAZYCL_UPDATE_SNAPSHOTS").is_some() {
        std::fs::write(&path, &text).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (LAZYCL_UPDATE_SNAPSHOTS=1 writes it)", path.display()));
    if want != text {
        let (line, (w, g)) = want
            .lines()
            .zip(text.lines())
            .enumerate()
            .find(|(_, (w, g))| w != g)
            .unwrap_or((want.lines().count().min(text.lines().count()), ("(end)", "(end)")));
        let heading = text
            .lines()
            .take(line + 1)
            .filter(|l| l.starts_with("==="))
            .last();
        panic!(
            "the generated sources differ from {} first at line {}, in {:?}:\n want: {w}\n  got: {g}\n\
             (LAZYCL_UPDATE_SNAPSHOTS=1 rewrites the file after an intended change)",
            path.display(),
            line + 1,
            heading.unwrap_or("(no heading)")
        );
    }
}
