//! Planning, a pure function: the lazy graph a flush needs, plus a [`DeviceProfile`], in;
//! kernel plans out. Collect → cut (budgets, then what is cheaper stored than recomputed) → group → plan each kernel → the fusion passes → fit
//! to the device → the split reductions finished by their readers. No context, queue,
//! OpenCL call or generated text is named here; every structural choice is written into
//! each plan's key (`key`), which is the kernel cache's key.

pub(crate) mod access;
pub(crate) mod build;
pub(crate) mod collect;
pub(crate) mod compact;
mod cone;
pub(crate) mod describe;
pub(crate) mod fft;
pub(crate) mod fit;
pub(crate) mod gemm;
pub(crate) mod group;
pub(crate) mod kernel_plan;
pub(crate) mod key;
pub(crate) mod passes;
mod phase;
mod reads;
pub(crate) mod recompute;
pub(crate) mod reduce_plan;
pub(crate) mod row_kernel;
pub(crate) mod scan;
pub(crate) mod select;
pub(crate) mod signature;
pub(crate) mod sort;
mod values;

use std::sync::Arc;

use crate::error::{Error, Result};
use crate::graph::view::ViewMap;
use crate::graph::{NodeRef, Shape};

pub(crate) use crate::profile::DeviceProfile;
pub(crate) use collect::{GKind, GNode, Leaves, OpCode};
pub(crate) use fft::FftPlan;
pub(crate) use gemm::{GemmOperand, GemmPlan};
pub(crate) use kernel_plan::{
    ColumnRows, Columns, Finish, FinishIn, JoinedReduction, KernelKind, KernelPlan, Layout, ReducePlan,
    Value, VectorLoads, TILE, TILE_ROWS,
};
pub(crate) use scan::{ScanLayout, ScanPlan};

/// A root stored into a region of an existing array (`slice_mut(..).assign`) instead of
/// an array of its own: the region's map into that array, whose shape is `shape`.
pub(crate) struct Store {
    /// Graph index of the root (set by [`plan`]).
    pub(crate) node: usize,
    pub(crate) map: Arc<ViewMap>,
    pub(crate) shape: Shape,
    /// Added into the array through an index instead (`scatter_add`).
    pub(crate) scatter: Option<Scatter>,
}

/// A `scatter_add`'s store: each element is added (atomically) at the region's offset,
/// whose axis `axis` is fixed at 0, plus the index's value along that axis; an index
/// outside the axis drops the element.
#[derive(Clone, Copy)]
pub(crate) struct Scatter {
    /// Graph index of the index array, viewed in the root's shape.
    pub(crate) index: usize,
    pub(crate) axis: usize,
    pub(crate) combine: ScatterCombine,
}

/// How a scattered element combines with the one it lands on, atomically.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ScatterCombine {
    /// Added (`scatter_add`).
    Add,
    /// The larger of the two kept (32-bit integers: `scatter`'s winning positions).
    Max,
}

/// A scatter's target beside the store: the index array (viewed in the value's shape)
/// whose values pick the positions along `axis`, and how elements combine.
pub(crate) struct ScatterTarget {
    pub(crate) index: NodeRef,
    pub(crate) axis: usize,
    pub(crate) combine: ScatterCombine,
}

/// Where the first root of a flush goes when not into an array of its own: a region of
/// an array of shape `shape` through `map`, and for a `scatter_add` the index array
/// (viewed in the root's shape) whose values pick the positions along `axis`.
pub(crate) struct Target {
    pub(crate) map: Arc<ViewMap>,
    pub(crate) shape: Shape,
    pub(crate) scatter: Option<ScatterTarget>,
}

/// A flush's graph, collected: the lazy nodes its roots need, in topological order,
/// which of them are roots, and where the first root is stored (if not in an array of
/// its own). Planning reads nothing else of the flush ([`signature`] writes all of it).
pub(crate) struct Collected {
    pub(crate) graph: Vec<GNode>,
    /// Graph indices of the roots, in the caller's order.
    pub(crate) roots: Vec<usize>,
    pub(crate) store: Option<Store>,
}

/// The most elements a computed array (and so a kernel's iteration space) may have.
/// 2^48 elements is more than a thousand times what the largest device holds, and takes
/// a GPU minutes even for a kernel that only counts; an array beyond it is a mistake
/// (a broadcast to the wrong shape), and an error beats a kernel that never finishes.
pub(crate) const MAX_ELEMENTS: u64 = 1 << 48;

/// Collects what materializing `roots` (nodes of one context) needs; `None` when there
/// are no roots. With `target`, the first root is stored (or added) through its map into
/// an array of its shape (whose memory is bound at launch).
pub(crate) fn collect(roots: &[NodeRef], target: Option<Target>) -> Result<Option<Collected>> {
    if roots.is_empty() {
        return Ok(None);
    }
    // (A scatter's index array is collected after the roots; no list is built without one.)
    let scatter_index = target.as_ref().and_then(|t| t.scatter.as_ref()).map(|s| &s.index);
    let collect::Found {
        graph,
        roots: mut found,
    } = match scatter_index {
        None => collect::collect(roots)?,
        Some(index) => {
            let needed: Vec<NodeRef> = roots.iter().chain([index]).cloned().collect();
            collect::collect(&needed)?
        }
    };
    for g in &graph {
        if let GKind::Op(..) = g.kind {
            check_iteration_space(&g.node.shape)?;
        }
    }
    let scatter_at = found.get(roots.len()).copied();
    found.truncate(roots.len());
    let root_idx = found;
    let store = target.and_then(|t| {
        let scatter = match &t.scatter {
            Some(s) => Some(Scatter {
                index: scatter_at?,
                axis: s.axis,
                combine: s.combine,
            }),
            None => None,
        };
        root_idx.first().map(|&node| Store {
            node,
            map: t.map,
            shape: t.shape,
            scatter,
        })
    });
    Ok(Some(Collected {
        graph,
        roots: root_idx,
        store,
    }))
}

/// Plans the kernels that materialize a collected flush on a device of `profile`, in
/// launch order. A pure function of `collected`'s [`signature`] and `profile`: the plans
/// name graph nodes by index and never hold a buffer or a scalar's value, so equal
/// signatures may share them.
pub(crate) fn plan(collected: &Collected, profile: &DeviceProfile) -> Vec<KernelPlan> {
    let (graph, roots) = (&collected.graph[..], &collected.roots[..]);
    let mat = group::materialization_points(graph, roots, profile.max_args());
    let worth = recompute::worth_storing(graph, &mat, profile);
    let plans = plan_points(collected, profile, mat.clone(), &[]);
    if worth.is_empty() {
        return plans;
    }
    // A value a column reduction reads beside the row reduction fused into it
    // (`rows_into_columns`) stays there: that pass's layout rules chose the pair.
    let row_fused: Vec<usize> = plans
        .iter()
        .filter(|p| p.as_reduction().is_some_and(|r| r.row.is_some()))
        .flat_map(|p| p.outputs.iter().map(|o| o.node))
        .collect();
    let kept = recompute::not_read_by(graph, &mat, worth, &row_fused);
    if kept.is_empty() {
        return plans;
    }
    let mut mat = mat;
    for (node, _) in &kept {
        mat[*node] = true;
    }
    plan_points(collected, profile, mat, &kept)
}

/// [`plan`] with the materialization points `mat`, of which `stored` are values stored
/// rather than recomputed (and why, for `explain`).
fn plan_points(
    collected: &Collected,
    profile: &DeviceProfile,
    mat: Vec<bool>,
    stored: &[(usize, recompute::Stored)],
) -> Vec<KernelPlan> {
    let Collected {
        graph,
        roots: root_idx,
        store,
    } = collected;
    let (graph, root_idx) = (&graph[..], &root_idx[..]);
    let cut = cut_points(graph, root_idx, &mat);
    let groups = group::group_kernels(graph, &mat, &cut, profile);
    // (Only a product's kernel, or a scan's with consumers, asks; a flush without one
    // skips the walk.)
    let has_product = |m: &Vec<usize>| match graph[m[0]].kind {
        GKind::Op(OpCode::MatMul, _) => true,
        GKind::Op(OpCode::Scan(_) | OpCode::Fft(_), _) => m.len() > 1,
        _ => false,
    };
    let elsewhere = match groups.iter().any(has_product) {
        true => group::read_elsewhere(graph, &mat, &groups),
        false => Vec::new(),
    };
    let group_size = profile.reduce_group_size();
    let plans = groups
        .iter()
        .map(|members| {
            let first = members[0];
            let kept = root_idx.contains(&first) || elsewhere.get(first).copied().unwrap_or(true);
            let store = store.as_ref().filter(|s| members.contains(&s.node));
            let mut plan = plan_group(graph, &mat, members, kept, store, profile);
            plan.stored = stored
                .iter()
                .find(|(node, _)| members.contains(node))
                .map(|(_, why)| *why);
            plan
        })
        .collect();
    let plans = passes::rows_into_columns::fuse_rows_into_columns(
        graph,
        &mat,
        plans,
        group_size,
        fit::widest_shared_row(profile),
    );
    let mut kernels: Vec<KernelPlan> =
        passes::row_totals::fuse_row_totals(graph, &mat, plans, group_size, profile.max_args())
            .into_iter()
            .map(|plan| fit_plan(plan, profile))
            .collect();
    passes::finish_in::finish_in_consumers(&mut kernels, group_size);
    kernels
}

/// The materialization points `mat` that only bound a kernel's size: no root, and no
/// product, scan or reduction (whose elementwise readers may join its kernel, which
/// `group` checks).
fn cut_points(graph: &[GNode], roots: &[usize], mat: &[bool]) -> Vec<bool> {
    let mut cut = mat.to_vec();
    for &r in roots {
        cut[r] = false;
    }
    for (i, g) in graph.iter().enumerate() {
        if matches!(
            g.kind,
            GKind::Op(
                OpCode::MatMul | OpCode::Scan(_) | OpCode::Fft(_) | OpCode::Reduce(_),
                _
            )
        ) {
            cut[i] = false;
        }
    }
    cut
}

/// Plans the kernel of the group `members`, by its first member's kind. `stored`: that
/// member (a product or a scan) is an output; `store`: the member stored into a region
/// of an array.
fn plan_group(
    graph: &[GNode],
    mat: &[bool],
    members: &[usize],
    stored: bool,
    store: Option<&Store>,
    profile: &DeviceProfile,
) -> KernelPlan {
    let first = members[0];
    let group_size = profile.reduce_group_size();
    match &graph[first].kind {
        GKind::Op(OpCode::MatMul, _) => gemm::plan_gemm(graph, mat, members, stored, store),
        // (Only a row kernel has a reduction with other members.)
        GKind::Op(OpCode::Reduce(_), _) if members.len() > 1 => {
            match row_kernel::row_kernel(graph, first, profile).and_then(|space| {
                let layout = row_kernel::layout_of(graph, space.operand, space.inner, profile)?;
                Some((space, layout))
            }) {
                Some((space, layout)) => {
                    row_kernel::plan_rows(graph, mat, members, space.inner, layout, store)
                }
                None => broken_plan(format!("row kernel {first} has no row layout")),
            }
        }
        GKind::Op(OpCode::Scan(_), _) if members.len() > 1 => {
            scan::epilogue::plan_scan(graph, mat, members, stored, store, group_size)
        }
        GKind::Op(OpCode::Fft(_), _) => {
            fft::epilogue::plan_fft(graph, mat, members, stored || members.len() == 1, store)
        }
        _ => build::plan_kernel(graph, mat, members, group_size, None, None, store),
    }
}

/// A plan exec refuses to run, with `why` (a broken invariant of planning).
fn broken_plan(why: String) -> KernelPlan {
    let mut plan = KernelPlan::empty(vec![1], 1, 1);
    plan.broken = Some(why);
    plan
}

/// Fits a plan to the device (a reduction's layout, an elementwise kernel's tiles) and
/// writes the choices into its key.
fn fit_plan(mut plan: KernelPlan, profile: &DeviceProfile) -> KernelPlan {
    if matches!(plan.kind, KernelKind::Elementwise) && fit::wants_tiles(profile, &plan) {
        plan.kind = KernelKind::Tiled;
        let staged = plan.transposed_inputs();
        key::tiles(&mut plan.key, &staged);
    }
    if let KernelKind::Reduction(r) = &mut plan.kind {
        let one_tile = r.row.is_some();
        if one_tile && fit::wants_group_rows(r, plan.group_size) {
            plan.group_size = fit::fit_group_rows(profile, r);
        } else {
            fit::fit_reduction(profile, r, plan.group_size, one_tile);
        }
        fit::widen_vector_loads(r, &plan.inputs, &plan.dims);
        key::fit(&mut plan.key, r, plan.group_size);
    }
    plan
}

/// `Ok` if an array of `shape` can be computed (see [`MAX_ELEMENTS`]).
pub(crate) fn check_iteration_space(shape: &[usize]) -> Result<()> {
    let n = shape.iter().try_fold(1u64, |acc, &d| acc.checked_mul(d as u64));
    match n {
        Some(n) if n <= MAX_ELEMENTS => Ok(()),
        _ => Err(Error::TooLarge {
            op: "materializing an array".into(),
            shape: shape.to_vec(),
            reason: format!(
                "{} elements; a computed array may have at most 2^48 = {MAX_ELEMENTS}",
                n.map_or("more than 2^64".to_string(), |n| n.to_string())
            ),
        }),
    }
}
