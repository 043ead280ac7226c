//! Fusion: partitions the lazy part of a graph into kernels, and describes each kernel
//! by a structural key (ops, dtypes, broadcast patterns, which inputs are the same array)
//! that is computed without generating any source.

use rustc_hash::FxHashMap as HashMap;
use std::sync::Arc;

use crate::buffer::DeviceBuffer;
use crate::dtype::{DType, ScalarBits};
use crate::error::{Error, Result};
use crate::graph::{BinaryOp, NodeRef, Op, ReduceOp, ReduceSpec, State, TernaryOp, UnaryOp};
use crate::kernel::CompiledKernel;

/// Most nodes one node's cone may have before it is materialized as its own kernel output.
pub(crate) const MAX_CONE_NODES: usize = 64;

/// A node of the collected graph, in topological order (inputs first).
pub(crate) struct GNode {
    pub(crate) node: NodeRef,
    pub(crate) kind: GKind,
}

/// What a collected node is.
pub(crate) enum GKind {
    /// Already in device memory.
    Ready(Arc<DeviceBuffer>),
    /// A host scalar (kernel argument).
    Scalar(ScalarBits),
    /// An elementwise operation over earlier nodes (indices into the collected list).
    Op(OpCode, Inputs),
}

/// Operand indices of a collected node (at most three, stored inline).
pub(crate) type Inputs = smallvec::SmallVec<[usize; 3]>;

/// An elementwise operation without its operands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum OpCode {
    Unary(UnaryOp),
    Binary(BinaryOp),
    Ternary(TernaryOp),
    /// Always materialized; its elementwise producers are fused into it.
    Reduce(ReduceSpec),
    /// An `expr!` template (by id).
    Expr(u32),
}

/// Collects every node the roots need, stopping at materialized nodes. Iterative, so a
/// 10,000-node chain does not overflow the stack. Errors with the first recording error.
pub(crate) fn collect(roots: &[NodeRef]) -> Result<Vec<GNode>> {
    let mut index: HashMap<*const crate::graph::Node, usize> =
        HashMap::with_capacity_and_hasher(64, Default::default());
    let mut out: Vec<GNode> = Vec::with_capacity(64);
    // Entries are a node to visit (None) or a node whose inputs are done (its op snapshot).
    // A node being expanded maps to IN_PROGRESS in `index`.
    const IN_PROGRESS: usize = usize::MAX;
    let mut stack: Vec<(NodeRef, Option<Op>)> = roots.iter().map(|r| (r.clone(), None)).collect();
    let at = |index: &HashMap<*const crate::graph::Node, usize>, n: &NodeRef| -> Result<usize> {
        match index.get(&Arc::as_ptr(n)) {
            Some(&i) if i != IN_PROGRESS => Ok(i),
            _ => Err(Error::InvalidShape(
                "internal: graph input visited out of order".into(),
            )),
        }
    };
    while let Some((node, expanded)) = stack.pop() {
        let key = Arc::as_ptr(&node);
        if let Some(op) = expanded {
            let kind = match op {
                Op::Scalar(bits) => GKind::Scalar(bits),
                Op::Unary(u, a) => GKind::Op(OpCode::Unary(u), smallvec::smallvec![at(&index, &a)?]),
                Op::Reduce(r, a) => GKind::Op(OpCode::Reduce(r), smallvec::smallvec![at(&index, &a)?]),
                Op::Binary(b, x, y) => GKind::Op(
                    OpCode::Binary(b),
                    smallvec::smallvec![at(&index, &x)?, at(&index, &y)?],
                ),
                Op::Expr(t, ops) => GKind::Op(
                    OpCode::Expr(crate::expr::template_id(t)),
                    ops.iter().map(|o| at(&index, o)).collect::<Result<Inputs>>()?,
                ),
                Op::Ternary(t, x, y, z) => GKind::Op(
                    OpCode::Ternary(t),
                    smallvec::smallvec![at(&index, &x)?, at(&index, &y)?, at(&index, &z)?],
                ),
            };
            index.insert(key, out.len());
            out.push(GNode { node, kind });
            continue;
        }
        if index.contains_key(&key) {
            // Done, or being expanded through another path (its entry is on the stack).
            continue;
        }
        let snapshot = match &*node.state() {
            State::Ready(b) => Err(b.clone()),
            State::Lazy(op) => Ok(op.clone()),
            State::Failed(e) => return Err(e.clone()),
            State::Dropped => return Err(Error::InvalidShape("a dropped array was used".into())),
        };
        match snapshot {
            Err(buffer) => {
                index.insert(key, out.len());
                out.push(GNode {
                    node,
                    kind: GKind::Ready(buffer),
                });
            }
            Ok(op) => {
                index.insert(key, IN_PROGRESS);
                let children: smallvec::SmallVec<[NodeRef; 3]> = op.inputs().into_iter().cloned().collect();
                stack.push((node, Some(op)));
                for c in children.into_iter().rev() {
                    if !index.contains_key(&Arc::as_ptr(&c)) {
                        stack.push((c, None));
                    }
                }
            }
        }
    }
    Ok(out)
}

/// Chooses the nodes to materialize: the roots, plus cut points that keep every kernel
/// within [`MAX_CONE_NODES`] and `max_args` arguments.
pub(crate) fn materialization_points(graph: &[GNode], roots: &[usize], max_args: usize) -> Vec<bool> {
    let mut mat = vec![false; graph.len()];
    for &r in roots {
        if !matches!(graph[r].kind, GKind::Ready(_)) {
            mat[r] = true;
        }
    }
    for (i, g) in graph.iter().enumerate() {
        if matches!(g.kind, GKind::Op(OpCode::Reduce(_), _)) {
            mat[i] = true;
        }
    }
    // Estimated cone size and argument count of each node as seen by its consumers
    // (over-counts shared subexpressions, which only makes cuts a little earlier).
    let mut cone = vec![0usize; graph.len()];
    let mut args = vec![0usize; graph.len()];
    for (i, g) in graph.iter().enumerate() {
        match &g.kind {
            GKind::Ready(_) | GKind::Scalar(_) => {
                cone[i] = 0;
                args[i] = 1;
            }
            GKind::Op(_, inputs) => {
                let c = 1 + inputs.iter().map(|&j| cone[j]).sum::<usize>();
                let a = inputs.iter().map(|&j| args[j]).sum::<usize>();
                if c >= MAX_CONE_NODES || a >= max_args {
                    mat[i] = true;
                }
                if mat[i] {
                    cone[i] = 0;
                    args[i] = 1;
                } else {
                    cone[i] = c;
                    args[i] = a;
                }
            }
        }
    }
    mat
}

/// Groups materialization points into kernels: one kernel per output shape where the
/// dependencies allow, in an order where every kernel runs after those it reads from.
/// A point that reads a cut point (`cut[d]`: materialized only to bound kernel size) goes
/// to a later kernel than the cut, so cuts really split.
pub(crate) fn group_kernels(graph: &[GNode], mat: &[bool], cut: &[bool]) -> Vec<Vec<usize>> {
    let mut groups: Vec<(Vec<usize>, Vec<usize>, bool)> = Vec::new(); // (shape, members, is a reduction)
    let mut group_of: Vec<Option<usize>> = vec![None; graph.len()];
    for p in (0..graph.len()).filter(|&i| mat[i]) {
        // The latest group among the materialization points p reads (not through others);
        // p may join that group unless the dependency is a cut.
        let mut latest_dep: Option<usize> = None;
        let mut after_cut: Option<usize> = None;
        let mut seen = vec![false; 0];
        seen.resize(graph.len(), false);
        let mut stack = match &graph[p].kind {
            GKind::Op(_, inputs) => inputs.to_vec(),
            _ => Vec::new(),
        };
        while let Some(j) = stack.pop() {
            if std::mem::replace(&mut seen[j], true) {
                continue;
            }
            if mat[j] {
                latest_dep = latest_dep.max(group_of[j]);
                if cut[j] {
                    after_cut = after_cut.max(group_of[j]);
                }
                continue;
            }
            if let GKind::Op(_, inputs) = &graph[j].kind {
                stack.extend(inputs.iter().copied());
            }
        }
        let shape = &graph[p].node.shape;
        let reduction = matches!(graph[p].kind, GKind::Op(OpCode::Reduce(_), _));
        // A reduction is a kernel of its own; elementwise points join the latest kernel of
        // their shape when their dependencies allow.
        let candidate = if reduction {
            None
        } else {
            groups.iter().rposition(|(s, _, r)| s[..] == shape[..] && !r)
        };
        let g = match candidate {
            Some(c) if latest_dep.is_none_or(|d| d <= c) && after_cut.is_none_or(|d| d < c) => c,
            _ => {
                groups.push((shape.to_vec(), Vec::new(), reduction));
                groups.len() - 1
            }
        };
        groups[g].1.push(p);
        group_of[p] = Some(g);
    }
    groups.into_iter().map(|(_, m, _)| m).collect()
}

/// One value inside a fused kernel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Value {
    /// Load from input buffer `slot`.
    Load { slot: usize },
    /// Scalar kernel argument `slot`.
    Scalar { slot: usize },
    /// An operation over earlier values.
    Op { code: OpCode, args: Inputs },
}

/// A kernel's structure and the run-time bindings of its arguments.
pub(crate) struct KernelPlan {
    /// Structural cache key: equal keys give identical source.
    pub(crate) key: Vec<u32>,
    /// Values in evaluation order with their element types.
    pub(crate) values: Vec<(Value, DType)>,
    /// Input buffers: (dtype, broadcast mask over the collapsed dims, graph index).
    pub(crate) inputs: Vec<(DType, u32, usize)>,
    /// Scalar arguments: (dtype, bits).
    pub(crate) scalars: Vec<(DType, ScalarBits)>,
    /// Outputs: (value index, dtype, graph index).
    pub(crate) outputs: Vec<(usize, DType, usize)>,
    /// The collapsed iteration dims (outermost first; never empty).
    pub(crate) dims: Vec<usize>,
    /// Total work (product of dims).
    pub(crate) numel: usize,
    /// Set for a reduction kernel.
    pub(crate) reduce: Option<ReducePlan>,
    /// Work-group size of a reduction kernel.
    pub(crate) group_size: u32,
    /// Element indices fit in 32 bits (cheaper index arithmetic).
    pub(crate) narrow_index: bool,
    /// A row reduction computed inside this column reduction (see [`RowPart`]).
    pub(crate) row: Option<RowPart>,
    /// A reduction over the rows computed beside the row reduction (see [`RowTotal`]).
    pub(crate) row_total: Option<RowTotal>,
    /// An elementwise kernel that finishes a split reduction it reads (see
    /// [`FinishIn`]).
    pub(crate) finishes: Option<FinishIn>,
}

/// A split reduction finished by the elementwise kernel that reads its result, instead
/// of by a combine pass (`w - lr * g` after `g = x.sum_axis(0)` in segments: one launch
/// fewer). The consumer runs over the reduction's outputs; a work-group takes
/// `group / lanes` of them, its lanes combine each output's partials in local memory,
/// and the first lane writes the result to the reduction's array (input `slot`) and then
/// evaluates the consumer there, reading it back like any input.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FinishIn {
    /// The consumer's input slot of the reduction's result.
    pub(crate) slot: usize,
    /// The reduction's operation (never an arg one) and element type.
    pub(crate) op: ReduceOp,
    pub(crate) dtype: DType,
    /// Lanes per output: the next power of two of the segments, within the group.
    pub(crate) lanes: u32,
    /// The work-group size.
    pub(crate) group: u32,
}

/// A reduction along rows (`sum_axis(1)` of the same `[n, d]` space) computed inside a
/// column reduction that reads its result per row, so that both read the rows once: the
/// cone of `x.sum_axis(0)`'s operand holds a value `Op(Reduce)` for it, which the kernel
/// evaluates per row (the work-items of a row combine their elements in local memory)
/// and also writes out, one element per row, to the row reduction's own array.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RowPart {
    /// The row reduction's operation (never an arg one).
    pub(crate) op: ReduceOp,
    /// Index of the row reduction's value in [`KernelPlan::values`].
    pub(crate) value: usize,
    /// Element type of its result.
    pub(crate) dtype: DType,
    /// Graph index of the row reduction's node (its output).
    pub(crate) node: usize,
}

/// A reduction of one value per row to a single element, computed beside a [`RowPart`]
/// in its column reduction's kernel: `mean(b - lr * (sigmoid(z) - y))` over the rows of
/// `z = x w`, where the kernel has each row's `z` at hand. Its operand depends on the row
/// only (the row's result, per-row inputs, single elements, scalars); the kernel combines
/// it over its rows, each work-group writes its part, and the last work-group to finish
/// combines the parts (one launch fewer than a reduction kernel of its own).
#[derive(Debug, Clone, Copy)]
pub(crate) struct RowTotal {
    /// The reduction's operation (never an arg one).
    pub(crate) op: ReduceOp,
    /// Index of its operand in [`KernelPlan::values`].
    pub(crate) value: usize,
    /// Element type of the operand and of the result.
    pub(crate) dtype: DType,
    /// Graph index of the reduction's node (its output, one element).
    pub(crate) node: usize,
}

const TAG_LOAD: u32 = 1;
const TAG_SCALAR: u32 = 2;
const TAG_OP: u32 = 3;
const TAG_OUT: u32 = 4;
const TAG_DIMS: u32 = 5;
const TAG_REDUCE: u32 = 6;
/// Cache-key tag of a reduction's device-dependent choices (then a word of flags and the
/// column tile).
pub(crate) const TAG_FIT: u32 = 7;
/// Cache-key tag of a kernel that finishes a split reduction ([`FinishIn`]).
const TAG_FINISH_IN: u32 = 8;
/// Cache-key tag of a reduction over the rows computed beside a row reduction
/// ([`RowTotal`]).
const TAG_ROW_TOTAL: u32 = 9;

fn dtype_code(d: DType) -> u32 {
    d as u32
}

fn op_code(c: OpCode) -> u32 {
    match c {
        OpCode::Unary(u) => 0x100 | u as u32,
        OpCode::Binary(b) => 0x200 | b as u32,
        OpCode::Ternary(t) => 0x300 | t as u32,
        OpCode::Reduce(r) => 0x400 | r.op as u32,
        OpCode::Expr(id) => 0x1_0000 + id,
    }
}

/// How a reduction kernel is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ReducePlan {
    pub(crate) op: ReduceOp,
    /// Bit `k` set: collapsed dim `k` is reduced.
    pub(crate) red_mask: u32,
    /// Work-items cooperating on one output (tree in local memory); 0 = one work-item per
    /// output segment, looping serially (used when the innermost dim is kept, so that
    /// neighbouring work-items read neighbouring addresses).
    pub(crate) lanes: u32,
    /// Number of outputs.
    pub(crate) n_out: usize,
    /// Elements reduced into each output.
    pub(crate) n_red: usize,
    /// Element type of the reduced values.
    pub(crate) in_dtype: DType,
    /// Lanes take neighbouring elements with vector loads (the only reduced dim is the
    /// innermost one).
    pub(crate) vector: bool,
    /// The innermost extent is a multiple of the vector width, so every vector load starts
    /// at an aligned index (and can be one wide load).
    pub(crate) aligned: bool,
    /// Column layout (`lanes == 0`, the only kept dim is the innermost one, as in
    /// `m.sum_axis(0)`): a work-group streams whole rows, each work-item owns
    /// [`column_width`](ReducePlan::column_width) neighbouring outputs, and the rows a
    /// work-group read are combined in local memory. Otherwise `lanes == 0` means one
    /// work-item per output.
    pub(crate) columns: bool,
    /// Outputs per work-item of the column layout: the vector width when the row length
    /// allows aligned vector loads (and the op is not an arg one), else 1.
    pub(crate) column_width: usize,
    /// The most vectors of a row one work-group of the column layout covers (a tile;
    /// longer rows are split into tiles of equal width), chosen with the segments.
    pub(crate) column_tile: usize,
    /// Segments per output (`S`), chosen for the device when the flush is planned.
    pub(crate) segments: usize,
    /// Each lane of the vector loop reads one contiguous run of its segment instead of
    /// every `lanes`-th vector (CPU devices).
    pub(crate) contiguous_lanes: bool,
    /// With `S > 1`, the last work-group of each block of outputs combines the partials
    /// itself (an atomic count of finished groups per block) instead of a combine pass:
    /// one launch instead of two. Lanes and column layouts, at most
    /// [`FINISH_COUNTERS`](crate::queue::FINISH_COUNTERS) blocks (column tiles).
    pub(crate) finish_in_kernel: bool,
    /// Float sums carry a Kahan compensation in each work-item's loop. Chosen with the
    /// segments: only where a work-item adds many steps serially (short runs are already
    /// accurate, and the compensation's dependent adds cost bandwidth on GPUs).
    pub(crate) compensated: bool,
    /// A column reduction with a row reduction inside whose rows are short: each
    /// work-item reads whole rows of this many vectors (its accumulators cover the whole
    /// row, no barrier per row). 0: the work-items of a row share it.
    pub(crate) row_vectors: usize,
    /// A column reduction with a row reduction inside whose rows a whole work-group
    /// shares, one row at a time: each work-item holds this many vectors of every row
    /// (its accumulators), and the group size is chosen for the row
    /// ([`KernelPlan::group_size`]). 0: another layout.
    pub(crate) group_rows: usize,
    /// A split reduction whose partials the elementwise kernel reading its result
    /// combines ([`FinishIn`]): no combine pass.
    pub(crate) finished_by_consumer: bool,
}

/// Rows of at most this many vectors, and of at most [`ROW_PER_ITEM_BYTES`], are read
/// whole by one work-item in a column reduction with a row reduction inside.
const ROW_PER_ITEM_VECTORS: usize = 8;
/// See [`ROW_PER_ITEM_VECTORS`]: a work-item holds a row's accumulators and elements.
const ROW_PER_ITEM_BYTES: usize = 160;

impl ReducePlan {
    /// A column reduction's rows are short enough for one work-item to hold a whole row
    /// (when a row reduction goes inside it).
    pub(crate) fn rows_fit_one_item(&self) -> bool {
        self.n_out / self.column_width.max(1) <= ROW_PER_ITEM_VECTORS
            && self.n_out * self.in_dtype.size() <= ROW_PER_ITEM_BYTES
    }

    /// The column layout's geometry for work-groups of `group` items: (work-items per
    /// row, rows read at once by a group, column tiles).
    pub(crate) fn column_geometry(&self, group: usize) -> (usize, usize, usize) {
        let vectors = (self.n_out / self.column_width).max(1);
        let tiles = vectors.div_ceil(self.column_tile.max(1));
        let per_row = vectors.div_ceil(tiles);
        (per_row, group / per_row, tiles)
    }
}

/// Work-group size of reduction kernels (a power of two, within every device's limit
/// this code targets; smaller devices get `device_max` instead).
pub(crate) const REDUCE_GROUP: u32 = 256;

/// Builds the plan of the kernel that computes `members`: materialization points of one
/// shape, or a single reduction. Other materialization points and materialized nodes are
/// read as inputs, except `row`: a row reduction that this (column) reduction computes
/// inside ([`RowPart`]; the caller checked that it fits).
pub(crate) fn plan_kernel(
    graph: &[GNode],
    mat: &[bool],
    members: &[usize],
    group_size: u32,
    row: Option<usize>,
    total: Option<usize>,
) -> KernelPlan {
    let reduce = match &graph[members[0]].kind {
        GKind::Op(OpCode::Reduce(spec), inputs) => Some((*spec, inputs[0])),
        _ => None,
    };
    // A reduction over the rows beside the row reduction: its operand joins the cone.
    let total = total.and_then(|q| match &graph[q].kind {
        GKind::Op(OpCode::Reduce(spec), inputs) => Some((q, spec.op, inputs[0])),
        _ => None,
    });
    // Targets: the values this kernel produces (a reduction reduces its input's value).
    let targets: Vec<usize> = match reduce {
        Some((_, child)) => vec![child],
        None => members.to_vec(),
    };
    let space: Vec<usize> = graph[targets[0]].node.shape.to_vec();
    let mut is_target = vec![false; graph.len()];
    for &t in &targets {
        is_target[t] = true;
    }
    // The cone: nodes computed inside this kernel.
    let mut inside = vec![false; graph.len()];
    let mut stack: Vec<usize> = targets.clone();
    stack.extend(total.map(|(_, _, operand)| operand));
    let mut used = vec![false; graph.len()];
    while let Some(j) = stack.pop() {
        if std::mem::replace(&mut used[j], true) {
            continue;
        }
        let elementwise = matches!(graph[j].kind, GKind::Scalar(_))
            || matches!(&graph[j].kind, GKind::Op(code, _) if !matches!(code, OpCode::Reduce(_)));
        let computed_here =
            (elementwise && (!mat[j] || (is_target[j] && reduce.is_none()))) || row == Some(j);
        if computed_here {
            inside[j] = true;
            if let GKind::Op(_, inputs) = &graph[j].kind {
                stack.extend(inputs.iter().copied());
            }
        }
    }
    // Load patterns over the full iteration rank (plus the reduced dims), then collapse.
    let rank = space.len();
    let load_nodes: Vec<usize> = (0..graph.len()).filter(|&j| used[j] && !inside[j]).collect();
    let mut full_masks: Vec<Vec<bool>> = load_nodes
        .iter()
        .map(|&j| {
            let s = &graph[j].node.shape;
            let off = rank - s.len();
            (0..rank)
                .map(|d| d < off || (s[d - off] == 1 && space[d] != 1))
                .collect()
        })
        .collect();
    if let Some((spec, _)) = reduce {
        full_masks.push((0..rank).map(|d| spec.axes & (1 << d) != 0).collect());
    }
    let (dims, mut masks) = collapse(&space, &full_masks);
    let numel = space.iter().product();
    let reduce_plan = reduce.map(|(spec, child)| {
        let red_mask = masks.pop().unwrap_or(0);
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
        // lane for long rows, about 12 for short ones (below), more only when there are
        // too few outputs to fill a work-group (a full reduction gets the whole group).
        let lanes = if innermost_kept && n_out > 1 {
            0
        } else if only_innermost {
            // Short rows take fewer lanes, about 12 elements each, at most 8 (4 for 8-byte
            // elements); long rows up to 64 (32). Measured on the H200 against a copy:
            // 100 f32 8 lanes 0.90-0.91 (4: 0.86-0.87); 20 f32 2 lanes 0.88 (1: 0.81-0.82);
            // 25,300 f32 64 lanes 1.05 (32: 0.94); 126 f64 4 lanes 1.06-1.13 (8: 0.92-0.98);
            // 20 f64 2 lanes 1.05 (4: 0.95); 1,000 f32 and f64 8 lanes (16: 0.82, 0.93).
            let wide = graph[child].node.dtype.size() >= 8;
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
        let vector = lanes > 0 && only_innermost;
        let aligned = vector && dims[rank - 1] % crate::layout::VECTOR_WIDTH == 0;
        // The column layout needs the outputs to be exactly the innermost dim (no kept
        // outer dims: with those, one work-item per output keeps every work-item busy).
        let columns = lanes == 0 && n_out == dims[rank - 1];
        let w = crate::layout::VECTOR_WIDTH;
        let column_width = if columns && !spec.op.is_arg() && n_out.is_multiple_of(w) {
            w
        } else {
            1
        };
        ReducePlan {
            op: spec.op,
            red_mask,
            lanes,
            n_out,
            n_red,
            in_dtype: graph[child].node.dtype,
            vector,
            aligned,
            columns,
            column_width,
            column_tile: group_size as usize,
            segments: 1,
            contiguous_lanes: false,
            finish_in_kernel: false,
            compensated: false,
            row_vectors: 0,
            group_rows: 0,
            finished_by_consumer: false,
        }
    });

    let mut plan = KernelPlan {
        key: Vec::with_capacity(8 * graph.len()),
        values: Vec::new(),
        inputs: Vec::new(),
        scalars: Vec::new(),
        outputs: Vec::new(),
        dims: dims.clone(),
        numel,
        reduce: reduce_plan,
        group_size,
        narrow_index: numel < u32::MAX as usize,
        row: None,
        row_total: None,
        finishes: None,
    };
    plan.key
        .extend([TAG_DIMS, dims.len() as u32, u32::from(plan.narrow_index)]);
    if let Some(r) = &reduce_plan {
        plan.key.extend([
            TAG_REDUCE,
            r.op as u32,
            r.red_mask,
            r.lanes,
            group_size,
            u32::from(r.vector),
            u32::from(r.aligned),
            u32::from(r.columns),
            r.column_width as u32,
        ]);
    }
    let mut value_of: Vec<usize> = vec![usize::MAX; graph.len()];
    // (buffer or node identity, broadcast mask) → input slot; kernels have few inputs.
    let mut load_slots: Vec<((usize, u32), usize)> = Vec::new();
    for j in (0..graph.len()).filter(|&j| used[j]) {
        let dtype = graph[j].node.dtype;
        let value = if !inside[j] {
            // An input: dedupe by buffer identity when ready, else by node (materialized
            // earlier in this flush).
            let ident = match &graph[j].kind {
                GKind::Ready(b) => b.mem() as usize,
                _ => usize::MAX - j,
            };
            let li = load_nodes.iter().position(|&x| x == j).unwrap_or(0);
            // The same buffer under two shapes (a reshape alias) needs two slots.
            let id = (ident, masks[li]);
            let slot = match load_slots.iter().find(|(k, _)| *k == id) {
                Some(&(_, slot)) => slot,
                None => {
                    plan.inputs.push((dtype, masks[li], j));
                    load_slots.push((id, plan.inputs.len() - 1));
                    plan.inputs.len() - 1
                }
            };
            plan.key
                .extend([TAG_LOAD, dtype_code(dtype), slot as u32, masks[li]]);
            Value::Load { slot }
        } else {
            match &graph[j].kind {
                GKind::Scalar(bits) => {
                    plan.scalars.push((dtype, *bits));
                    plan.key.extend([TAG_SCALAR, dtype_code(dtype)]);
                    Value::Scalar {
                        slot: plan.scalars.len() - 1,
                    }
                }
                GKind::Op(code, inputs) => {
                    if let OpCode::Reduce(spec) = code {
                        plan.row = Some(RowPart {
                            op: spec.op,
                            value: plan.values.len(),
                            dtype,
                            node: j,
                        });
                    }
                    plan.key
                        .extend([TAG_OP, op_code(*code), dtype_code(dtype), inputs.len() as u32]);
                    let args: Inputs = inputs.iter().map(|i| value_of[*i]).collect();
                    plan.key.extend(args.iter().map(|&a| a as u32));
                    Value::Op { code: *code, args }
                }
                GKind::Ready(_) => unreachable_ready(),
            }
        };
        value_of[j] = plan.values.len();
        plan.values.push((value, dtype));
        if is_target[j] {
            let (out_dtype, out_node) = match reduce {
                Some(_) => (graph[members[0]].node.dtype, members[0]),
                None => (dtype, j),
            };
            plan.outputs.push((plan.values.len() - 1, out_dtype, out_node));
            plan.key
                .extend([TAG_OUT, (plan.values.len() - 1) as u32, dtype_code(out_dtype)]);
        }
    }
    if let Some((node, op, operand)) = total {
        let dtype = graph[operand].node.dtype;
        plan.row_total = Some(RowTotal {
            op,
            value: value_of[operand],
            dtype,
            node,
        });
        plan.key.extend([
            TAG_ROW_TOTAL,
            op as u32,
            value_of[operand] as u32,
            dtype_code(dtype),
        ]);
    }
    plan
}

/// Plans each column reduction whose operand reads, per row, a row reduction of the
/// same `[n, d]` space computed earlier in this flush as one kernel with it ([`RowPart`]):
/// one read of the rows instead of two (`X^T f(X w)`, a linear model's gradient). The row
/// reduction's own kernel is dropped. The pair runs where the row reduction ran when the
/// column reduction reads nothing produced in between (so that kernels in between that
/// read the row results still find them), else where the column reduction ran when
/// nothing in between reads them; else they stay apart. Neither reduction may be an arg
/// one. Rows one work-item reads whole ([`ReducePlan::rows_fit_one_item`]) are always
/// fused; rows that work-items share only up to `widest_shared_row` vectors (0 where
/// their barriers are slow).
pub(crate) fn fuse_rows_into_columns(
    graph: &[GNode],
    mat: &[bool],
    plans: Vec<KernelPlan>,
    group_size: u32,
    widest_shared_row: usize,
) -> Vec<KernelPlan> {
    let mut plans: Vec<Option<KernelPlan>> = plans.into_iter().map(Some).collect();
    let allowed = |cp: &KernelPlan| {
        cp.reduce.is_some_and(|r| {
            r.columns && (r.rows_fit_one_item() || r.n_out / r.column_width <= widest_shared_row)
        })
    };
    for c in 0..plans.len() {
        let Some(found) = plans[c]
            .as_ref()
            .filter(|cp| allowed(cp))
            .and_then(|cp| row_partner(&plans, c, cp))
        else {
            continue;
        };
        let (r, row_node, at) = found;
        let Some(c_node) = plans[c].as_ref().map(|p| p.outputs[0].2) else {
            continue;
        };
        let fused = plan_kernel(graph, mat, &[c_node], group_size, Some(row_node), None);
        let same_layout = fused.row.is_some()
            && fused.reduce.is_some_and(|fr| fr.columns)
            && plans[c].as_ref().is_some_and(|cp| cp.dims == fused.dims);
        if !same_layout {
            continue;
        }
        plans[r] = None;
        plans[c] = None;
        plans[at] = Some(fused);
    }
    plans.into_iter().flatten().collect()
}

/// Computes a later reduction of one value per row to a single element beside the row
/// reduction of a column-reduction kernel ([`RowTotal`]), dropping its own kernel: the
/// reduction reads the row reduction's result (per row, as an `[n, 1]` operand), and
/// everything else it reads is per row or a single element and is ready before that
/// kernel runs. One such reduction per kernel; `max_args` bounds the grown argument list.
pub(crate) fn fuse_row_totals(
    graph: &[GNode],
    mat: &[bool],
    mut plans: Vec<KernelPlan>,
    group_size: u32,
    max_args: usize,
) -> Vec<KernelPlan> {
    // (Plans are removed as they join: `p` can pass the end, which `total_partner` skips.)
    for p in 0..plans.len() {
        let Some((q, row_node)) = total_partner(graph, &plans, p) else {
            continue;
        };
        let (c_node, q_node) = (plans[p].outputs[0].2, plans[q].outputs[0].2);
        let fused = plan_kernel(graph, mat, &[c_node], group_size, Some(row_node), Some(q_node));
        let same_layout = fused.row.is_some()
            && fused.row_total.is_some()
            && fused.reduce.is_some_and(|r| r.columns)
            && fused.dims == plans[p].dims
            && fused.inputs.len() + fused.scalars.len() <= max_args;
        if same_layout {
            plans[p] = fused;
            plans.remove(q);
        }
    }
    plans
}

/// For the column-reduction kernel `p` with a row reduction inside: a later reduction it
/// can compute beside it ([`fuse_row_totals`]), and the row reduction's graph index.
fn total_partner(graph: &[GNode], plans: &[KernelPlan], p: usize) -> Option<(usize, usize)> {
    let pp = plans.get(p)?;
    let (row, cr) = (pp.row?, pp.reduce?);
    if pp.row_total.is_some() {
        return None;
    }
    let produced_by = |g: usize| {
        plans
            .iter()
            .position(|k| k.outputs.iter().any(|o| o.2 == g) || k.row.is_some_and(|r| r.node == g))
    };
    let operand_shape = |q_node: usize| match &graph[q_node].kind {
        GKind::Op(OpCode::Reduce(_), inputs) => Some(&graph[inputs[0]].node.shape[..]),
        _ => None,
    };
    (p + 1..plans.len())
        .find(|&q| {
            let qp = &plans[q];
            let Some(qr) = qp.reduce else { return false };
            qp.inputs.iter().any(|i| i.2 == row.node)
            && qp.row.is_none()
            && qp.finishes.is_none()
            && qp.outputs.len() == 1
            && qr.n_out == 1
            && qr.n_red == cr.n_red
            && !qr.op.is_arg()
            && qr.in_dtype != DType::Bool
            && qp.outputs[0].1 == qr.in_dtype
            // Per row as the column kernel sees it: `[n, 1]` broadcasts along the columns
            // of an `[n, d]` operand (not of `[n, a, b]`, which it would not align with).
            && operand_shape(qp.outputs[0].2) == Some(&[cr.n_red, 1][..])
            && operand_shape(pp.outputs[0].2).is_some_and(|s| s.len() == 2)
            // Everything else it reads is there before kernel `p` runs.
            && qp.inputs.iter().all(|&(_, _, g)| {
                g == row.node
                    || matches!(graph[g].kind, GKind::Ready(_))
                    || produced_by(g).is_some_and(|k| k < p)
            })
        })
        .map(|q| (q, row.node))
}

/// Lets elementwise kernels finish the split reductions they read ([`FinishIn`]), once
/// the segments are known: a reduction that would need a combine pass (several segments,
/// no in-kernel finish, not an arg one) and a later elementwise kernel over exactly its
/// outputs that reads its result element by element (a load without broadcast: element
/// `o` of the kernel is output `o`), with no kernel in between reading that result.
/// `group` is the consumer's work-group size.
pub(crate) fn finish_in_consumers(plans: &mut [KernelPlan], group: u32) {
    for r in 0..plans.len() {
        let Some(rp) = plans[r].reduce else { continue };
        let node = plans[r].outputs[0].2;
        if rp.segments <= 1 || rp.finish_in_kernel || rp.op.is_arg() || rp.n_out == 0 {
            continue;
        }
        let reads = |p: &KernelPlan| p.inputs.iter().any(|i| i.2 == node);
        let Some(c) = (r + 1..plans.len()).find(|&k| reads(&plans[k])) else {
            continue;
        };
        let cp = &plans[c];
        let Some(slot) = cp.inputs.iter().position(|i| i.2 == node) else {
            continue;
        };
        // (Read through one slot only: other work-groups write the result while this
        // kernel runs, so no work-item may read another's element.)
        let fits = cp.reduce.is_none()
            && cp.finishes.is_none()
            && cp.inputs.iter().filter(|i| i.2 == node).count() == 1
            && cp.numel == rp.n_out
            && cp.inputs[slot].1 == 0
            && cp.inputs[slot].0 == rp.in_dtype
            && plans[r].outputs[0].1 == rp.in_dtype;
        if !fits {
            continue;
        }
        let lanes = (rp.segments.next_power_of_two() as u32).clamp(1, group);
        let cp = &mut plans[c];
        cp.finishes = Some(FinishIn {
            slot,
            op: rp.op,
            dtype: rp.in_dtype,
            lanes,
            group,
        });
        cp.key.extend([
            TAG_FINISH_IN,
            slot as u32,
            rp.op as u32,
            dtype_code(rp.in_dtype),
            lanes,
            group,
        ]);
        if let Some(rr) = &mut plans[r].reduce {
            rr.finished_by_consumer = true;
        }
    }
}

/// For the column reduction `cp` (plan `c`): the plan of a row reduction it can compute
/// inside, the row reduction's graph index, and where the pair runs.
fn row_partner(plans: &[Option<KernelPlan>], c: usize, cp: &KernelPlan) -> Option<(usize, usize, usize)> {
    let cr = cp.reduce?;
    let fits = cr.columns
        && !cr.op.is_arg()
        && cp.dims.len() == 2
        && cr.red_mask == 0b01
        && cr.n_out > 0
        && cr.n_red > 0;
    if !fits {
        return None;
    }
    let produced_by = |g: usize| {
        (0..plans.len()).find(|&k| {
            plans[k]
                .as_ref()
                .is_some_and(|p| p.outputs.iter().any(|o| o.2 == g) || p.row.is_some_and(|row| row.node == g))
        })
    };
    // An input broadcast along the columns (read once per row) made by a row reduction.
    cp.inputs.iter().find_map(|&(_, mask, g)| {
        if mask != 0b10 {
            return None;
        }
        let r = produced_by(g).filter(|&r| r < c)?;
        let rp = plans[r].as_ref()?;
        let rr = rp.reduce?;
        if rr.op.is_arg() || rr.red_mask != 0b10 || rp.dims != cp.dims || rp.row.is_some() {
            return None;
        }
        let reads_between = cp
            .inputs
            .iter()
            .any(|&(_, _, x)| x != g && produced_by(x).is_some_and(|k| k > r && k < c));
        let between_read_rows = (r + 1..c).any(|k| {
            plans[k]
                .as_ref()
                .is_some_and(|p| p.inputs.iter().any(|&(_, _, x)| x == g))
        });
        let at = if !reads_between {
            r
        } else if !between_read_rows {
            c
        } else {
            return None;
        };
        Some((r, g, at))
    })
}

#[cold]
fn unreachable_ready() -> Value {
    // Ready nodes are never "inside" a kernel (computed_here excludes them).
    Value::Scalar { slot: 0 }
}

/// Drops size-1 output dims and merges neighbouring dims that every load treats alike.
/// Returns the collapsed dims and, per load, a bit mask of broadcast dims (bit k = dim k).
fn collapse(shape: &[usize], masks: &[Vec<bool>]) -> (Vec<usize>, Vec<u32>) {
    let keep: Vec<usize> = (0..shape.len()).filter(|&d| shape[d] != 1).collect();
    let mut dims: Vec<usize> = Vec::new();
    let mut cols: Vec<Vec<bool>> = Vec::new(); // per collapsed dim, per load
    for &d in &keep {
        let col: Vec<bool> = masks.iter().map(|m| m[d]).collect();
        if let (Some(last), Some(last_col)) = (dims.last_mut(), cols.last()) {
            if *last_col == col {
                *last *= shape[d];
                continue;
            }
        }
        dims.push(shape[d]);
        cols.push(col);
    }
    if dims.is_empty() {
        dims.push(1);
        cols.push(vec![false; masks.len()]);
    }
    let bits = (0..masks.len())
        .map(|l| {
            cols.iter()
                .enumerate()
                .fold(0u32, |acc, (k, c)| if c[l] { acc | (1 << k) } else { acc })
        })
        .collect();
    (dims, bits)
}

/// A compiled fused kernel, shared by every flush with the same structure.
pub(crate) struct FusedKernel {
    pub(crate) kernel: CompiledKernel,
}

#[cfg(test)]
mod tests {
    use super::collapse;

    #[test]
    fn collapse_merges_alike_dims() {
        // [2,3,4] with one full load and one load broadcast along dim 0.
        let (dims, bits) = collapse(&[2, 3, 4], &[vec![false; 3], vec![true, false, false]]);
        assert_eq!(dims, vec![2, 12]);
        assert_eq!(bits, vec![0, 1]);
        // All full: one dim.
        let (dims, bits) = collapse(&[2, 3, 4], &[vec![false; 3]]);
        assert_eq!(dims, vec![24]);
        assert_eq!(bits, vec![0]);
        // 0-d.
        let (dims, _) = collapse(&[], &[]);
        assert_eq!(dims, vec![1]);
    }
}
