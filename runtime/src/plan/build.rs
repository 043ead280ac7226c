//! Planning one kernel from its members: the cone of values computed inside and how each
//! is read (`reads`), the collapsed iteration space, the values, inputs, scalars and
//! outputs (`values`), and a reduction's layout before the device is known.

use crate::dtype::DType;
use crate::graph::{ReduceOp, ReduceSpec, ScanSpec};
use crate::layout::VECTOR_WIDTH;

use super::access::{Access, Affine, Collapsed, LoadKind};
use super::collect::{GKind, GNode, OpCode};
use super::cone::{Cone, ConeView};
use super::kernel_plan::{
    private_copy, ColumnRows, Columns, Finish, JoinedReduction, KernelKind, KernelPlan, Layout, ReducePlan,
    ScatterStore, Value, VectorLoads,
};
use super::reads::{self, Reads};
use super::{key, values, Scatter, ScatterCombine, Store};

/// Builds the plan of the kernel that computes `members`: materialization points of one
/// shape, or a single reduction. Other materialization points and materialized nodes are
/// read as inputs, except `row`: a row reduction that this (column) reduction computes
/// inside ([`KernelPlan::row`]; the caller checked that it fits), and `total`: a reduction over
/// the rows computed beside it ([`KernelPlan::row_total`]). `store`: the target that is
/// stored into a region of an array instead of an array of its own.
pub(crate) fn plan_kernel(
    graph: &[GNode],
    mat: &[bool],
    members: &[usize],
    group_size: u32,
    row: Option<usize>,
    total: Option<usize>,
    store: Option<&Store>,
) -> KernelPlan {
    let roles = Roles::of(graph, members, total);
    let space: Vec<usize> = graph[roles.targets[0]].node.shape.to_vec();
    // A scatter's index is computed beside the value it adds.
    let scatter = store.and_then(|s| s.scatter.map(|sc| (s, sc)));
    let extra = roles.total.map(|t| t.operand).or(scatter.map(|(_, sc)| sc.index));
    let cone = Cone::of(graph, mat, &roles.targets, extra, roles.whole, row, None);
    let walked = cone.view(graph);
    let reads = reads::walk(&walked, &roles.targets, extra, &space);
    let offsets = Offsets::collapse(
        &reads,
        &walked,
        &space,
        store.filter(|_| !roles.whole),
        roles.reduce,
    );
    let mut plan = start_plan(graph, &roles, &offsets, &space, group_size);
    // The output's node and type: a reduction's, or the value's own.
    let output_of = |j: usize| match roles.whole {
        true => (graph[members[0]].node.dtype, members[0]),
        false => (graph[j].node.dtype, j),
    };
    let kinds = offsets.load_kinds(&reads);
    let binder = values::Binder {
        walked: &walked,
        is_target: &cone.is_target,
        reads: &reads,
        kinds: &kinds,
        collapsed: &offsets.collapsed,
        space: &space,
        store: offsets.store_kind(store),
        share_slots: false,
    };
    let value_of = binder.bind(&mut plan, output_of);
    if let (KernelKind::Scan(s), Some((_, child))) = (&mut plan.kind, roles.scan) {
        s.value = value_of(child);
    }
    if let Some((s, sc)) = scatter {
        scatter_output(&mut plan, s, sc, value_of(sc.index));
    }
    // (An index times a stride may pass any bound the views know of: long offsets.)
    let gathers = plan
        .values
        .iter()
        .any(|v| matches!(v.value, Value::Gather { .. }))
        || scatter.is_some();
    plan.narrow_offsets = plan.reads_views() && !gathers && narrow_offsets(&plan);
    key::offsets(&mut plan.key, plan.narrow_offsets);
    if let Some(total) = roles.total {
        let t = JoinedReduction {
            op: total.op,
            value: value_of(total.operand),
            dtype: graph[total.operand].node.dtype,
            node: total.node,
        };
        key::row_total(&mut plan.key, &t);
        if let KernelKind::Reduction(r) = &mut plan.kind {
            r.row_total = Some(t);
        }
    }
    values::mark_branch_loads(&mut plan);
    plan
}

/// What a kernel computes, read from its members: a reduction or a scan of an operand, or
/// its (elementwise) members themselves; and a reduction over the rows computed beside it.
struct Roles {
    /// A reduction's spec and operand.
    reduce: Option<(ReduceSpec, usize)>,
    /// A scan's spec and operand.
    scan: Option<(ScanSpec, usize)>,
    /// The reduction over the rows beside the row reduction: its operand joins the cone.
    total: Option<RowTotal>,
    /// The values the kernel produces (a reduction or a scan computes its operand's value
    /// and writes its own).
    targets: Vec<usize>,
    /// A reduction or a scan: the kernel writes one result of its own, not its targets.
    whole: bool,
}

/// A reduction over the rows computed beside a row reduction.
#[derive(Clone, Copy)]
struct RowTotal {
    node: usize,
    op: ReduceOp,
    operand: usize,
}

impl Roles {
    /// The roles of `members` (a reduction or a scan is the only member), with `total`'s.
    fn of(graph: &[GNode], members: &[usize], total: Option<usize>) -> Roles {
        let reduce = match &graph[members[0]].kind {
            GKind::Op(OpCode::Reduce(spec), inputs) => Some((*spec, inputs[0])),
            _ => None,
        };
        let scan = match &graph[members[0]].kind {
            GKind::Op(OpCode::Scan(spec), inputs) => Some((*spec, inputs[0])),
            _ => None,
        };
        let total = total.and_then(|q| match &graph[q].kind {
            GKind::Op(OpCode::Reduce(spec), inputs) => Some(RowTotal {
                node: q,
                op: spec.op,
                operand: inputs[0],
            }),
            _ => None,
        });
        let targets: Vec<usize> = match (reduce, scan) {
            (Some((_, child)), _) | (None, Some((_, child))) => vec![child],
            (None, None) => members.to_vec(),
        };
        Roles {
            reduce,
            scan,
            total,
            targets,
            whole: reduce.is_some() || scan.is_some(),
        }
    }
}

/// Every load's offset over the full iteration rank, and the dims they collapse into
/// where all of them (with the boxes regions test, the indices read and a store into a
/// region) allow.
struct Offsets {
    /// Each of the walk's loads' offset, in the walk's order.
    loads: Vec<Affine>,
    /// The offset of a store into a region.
    store: Option<Affine>,
    /// Per kernel dim, whether a reduction reduces it (no reduction: `None`).
    fixed: Option<Vec<bool>>,
    collapsed: Collapsed,
}

impl Offsets {
    /// The offsets of `reads` over `space`, with `store`'s (a store into a region; a
    /// reduction or a scan has none) and `reduce`'s reduced dims, collapsed.
    fn collapse(
        reads: &Reads,
        walked: &ConeView,
        space: &[usize],
        store: Option<&Store>,
        reduce: Option<(ReduceSpec, usize)>,
    ) -> Offsets {
        let rank = space.len();
        let loads: Vec<Affine> = reads
            .loads
            .iter()
            .map(|l| l.access.affine(&l.shape, rank))
            .collect();
        let boxes: Vec<Affine> = reads
            .boxes
            .iter()
            .map(|b| Affine {
                base: 0,
                stride: smallvec::smallvec![0; rank],
                bounds: b.clone(),
            })
            .collect();
        let index_reads = reads.index_offsets(walked, rank);
        let store = store.map(|s| Access::identity(rank).view(&s.map).affine(&s.shape, rank));
        let fixed: Option<Vec<bool>> =
            reduce.map(|(spec, _)| (0..rank).map(|d| spec.axes & (1 << d) != 0).collect());
        let collapsed = Collapsed::new(
            space,
            loads.iter().chain(&boxes).chain(&index_reads).chain(&store),
            fixed.as_deref(),
        );
        Offsets {
            loads,
            store,
            fixed,
            collapsed,
        }
    }

    /// How each of `reads`' loads reads over the collapsed dims (a gather's always
    /// strided: the index adds to its offset).
    fn load_kinds(&self, reads: &Reads) -> Vec<LoadKind> {
        self.loads
            .iter()
            .zip(&reads.loads)
            .map(|(o, l)| match l.gathered {
                true => self.collapsed.strided(o),
                false => self.collapsed.kind(o),
            })
            .collect()
    }

    /// The node `store` stores and how, over the collapsed dims (a scatter's store is
    /// always strided: the index adds to its offset).
    fn store_kind(&self, store: Option<&Store>) -> Option<(usize, LoadKind)> {
        store.zip(self.store.as_ref()).map(|(s, o)| match s.scatter {
            Some(_) => (s.node, self.collapsed.strided(o)),
            None => (s.node, self.collapsed.kind(o)),
        })
    }
}

/// An empty plan over the collapsed dims of `offsets`, of the kernel's kind (a reduction
/// with its layout, a scan with its plan), with that much written into its key.
fn start_plan(
    graph: &[GNode],
    roles: &Roles,
    offsets: &Offsets,
    space: &[usize],
    group_size: u32,
) -> KernelPlan {
    let collapsed = &offsets.collapsed;
    let dims = collapsed.dims.clone();
    let numel = space.iter().product();
    let reduce_plan = roles.reduce.map(|(spec, child)| {
        let red_mask = offsets.fixed.as_deref().map_or(0, |f| reduced_mask(collapsed, f));
        reduce_layout(spec.op, graph[child].node.dtype, &dims, red_mask, group_size)
    });
    let mut plan = KernelPlan::empty(dims.clone(), numel, group_size);
    if let Some(r) = reduce_plan {
        plan.kind = KernelKind::Reduction(r);
    }
    key::dims(&mut plan.key, dims.len(), plan.narrow_index);
    if let Some(r) = &reduce_plan {
        key::reduce(&mut plan.key, r, group_size);
    }
    if let Some((spec, child)) = roles.scan {
        let s = super::scan::scan_plan(spec, graph[child].node.dtype, space, group_size);
        key::scan(&mut plan.key, &s, group_size);
        plan.kind = KernelKind::Scan(s);
    }
    plan
}

/// Makes the output that store `s` names a scatter along `sc.axis` by value `index`, and
/// writes that into the key.
fn scatter_output(plan: &mut KernelPlan, s: &Store, sc: Scatter, index: usize) {
    let numel = plan.numel;
    let Some((k, o)) = plan
        .outputs
        .iter_mut()
        .enumerate()
        .find(|(_, o)| o.node == s.node)
    else {
        return;
    };
    // (A private copy starts at 0: a sum's neutral element, not a maximum's.)
    let private = match sc.combine {
        ScatterCombine::Add => private_copy(numel, s.shape.iter().product(), o.dtype.value_size()),
        ScatterCombine::Max => None,
    };
    o.scatter = Some(ScatterStore {
        index,
        len: s.shape[sc.axis],
        stride: s.shape[sc.axis + 1..].iter().product(),
        private,
        combine: sc.combine,
    });
    key::scatter(&mut plan.key, k, index, private, sc.combine as u32);
}

/// Whether every offset and bound of the plan's views fits an `int` (none: true; the key
/// records it only where there are views).
fn narrow_offsets(plan: &KernelPlan) -> bool {
    let dims = &plan.dims;
    if dims.iter().any(|&d| d > i32::MAX as usize) {
        return false;
    }
    plan.inputs
        .iter()
        .filter_map(|i| i.strided.as_ref())
        .all(|a| a.fits_int(dims))
        && plan
            .outputs
            .iter()
            .filter_map(|o| o.store.as_ref())
            .all(|a| a.fits_int(dims))
        && plan
            .insides
            .iter()
            .flat_map(|i| &i.bounds)
            .all(|b| i32::try_from(b.lo).is_ok() && i32::try_from(b.hi).is_ok())
        && plan
            .index_reads
            .iter()
            .filter_map(|r| r.index.as_ref())
            .all(|a| a.fits_int(dims))
}

/// The reduced dims among the collapsed ones (a collapsed dim merges kernel dims that
/// are all reduced or all kept).
fn reduced_mask(c: &Collapsed, fixed: &[bool]) -> u32 {
    (0..c.dims.len()).fold(0, |m, k| if c.reduced(k, fixed) { m | 1 << k } else { m })
}

/// A reduction's layout over the collapsed `dims` (reduced where `red_mask` says), before
/// the device is known: lanes per output, vector loads, the column layout.
fn reduce_layout(
    op: ReduceOp,
    in_dtype: DType,
    dims: &[usize],
    red_mask: u32,
    group_size: u32,
) -> ReducePlan {
    let n_red: usize = (0..dims.len())
        .filter(|k| red_mask & (1 << k) != 0)
        .map(|k| dims[k])
        .product();
    let n_out: usize = (0..dims.len())
        .filter(|k| red_mask & (1 << k) == 0)
        .map(|k| dims[k])
        .product();
    let rank = dims.len();
    let innermost_kept = red_mask & (1 << (rank - 1)) == 0;
    let only_innermost = red_mask == 1 << (rank - 1);
    // Lanes per output. Along the innermost dim (vector loads): about 128 elements per
    // lane for long rows, about 12 for short ones (at most 8, 4 for 8-byte elements; long
    // rows up to 64, 32: the best measured, RESULTS.md#rule-lanes), more only when there are too
    // few outputs to fill a work-group (a full reduction gets the whole group).
    let lanes = if innermost_kept && n_out > 1 {
        0
    } else if only_innermost {
        let wide = in_dtype.size() >= 8;
        let (most, cap) = if wide { (4, 32) } else { (8, 64) };
        let fewest = (n_red.div_ceil(12).next_power_of_two() as u32).min(most);
        let by_extent = ((n_red / 128).max(1).next_power_of_two() as u32).clamp(fewest, cap);
        let to_fill = (group_size as usize).div_ceil(n_out.max(1)).next_power_of_two() as u32;
        by_extent.max(to_fill).min(group_size)
    } else if n_red <= 16 {
        4
    } else if n_red <= 1024 {
        32
    } else {
        group_size
    };
    let lanes = lanes.min(group_size);
    let layout = if lanes > 0 {
        let vector = only_innermost.then(|| VectorLoads {
            width: VECTOR_WIDTH,
            aligned: dims[rank - 1].is_multiple_of(VECTOR_WIDTH),
            contiguous: false,
        });
        Layout::Lanes { lanes, vector }
    } else if n_out == dims[rank - 1] {
        // The column layout needs the outputs to be exactly the innermost dim (no kept
        // outer dims: with those, one work-item per output keeps every work-item busy).
        let width = if !op.is_arg() && n_out.is_multiple_of(VECTOR_WIDTH) {
            VECTOR_WIDTH
        } else {
            1
        };
        Layout::Columns(Columns {
            width,
            tile: group_size as usize,
            rows: ColumnRows::Plain,
        })
    } else {
        Layout::Serial
    };
    ReducePlan {
        op,
        red_mask,
        n_out,
        n_red,
        in_dtype,
        layout,
        segments: 1,
        finish: Finish::Single,
        compensated: false,
        row: None,
        row_total: None,
    }
}
