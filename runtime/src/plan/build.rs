//! Planning one kernel from its members: the cone of values computed inside, the inputs
//! (deduplicated by buffer and broadcast pattern), scalars and outputs, the collapsed
//! iteration space, and a reduction's layout before the device is known.

use crate::dtype::DType;
use crate::graph::ReduceOp;
use crate::layout::VECTOR_WIDTH;

use super::collect::{GKind, GNode, Inputs, OpCode};
use super::kernel_plan::{
    ColumnRows, Columns, Finish, Input, JoinedReduction, KernelPlan, Layout, Output, PlannedValue,
    ReducePlan, ScalarArg, Value, VectorLoads,
};
use super::key;

/// Builds the plan of the kernel that computes `members`: materialization points of one
/// shape, or a single reduction. Other materialization points and materialized nodes are
/// read as inputs, except `row`: a row reduction that this (column) reduction computes
/// inside ([`KernelPlan::row`]; the caller checked that it fits), and `total`: a reduction over
/// the rows computed beside it ([`KernelPlan::row_total`]).
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
    let extra = total.map(|(_, _, operand)| operand);
    let cone = Cone::of(graph, mat, &targets, extra, reduce.is_some(), row);
    // Load patterns over the full iteration rank (plus the reduced dims), then collapse.
    let load_nodes: Vec<usize> = (0..graph.len())
        .filter(|&j| cone.used[j] && !cone.inside[j])
        .collect();
    let mut full_masks = broadcast_masks(graph, &load_nodes, &space);
    if let Some((spec, _)) = reduce {
        full_masks.push((0..space.len()).map(|d| spec.axes & (1 << d) != 0).collect());
    }
    let (dims, mut masks) = collapse(&space, &full_masks);
    let numel = space.iter().product();
    let reduce_plan = reduce.map(|(spec, child)| {
        let red_mask = masks.pop().unwrap_or(0);
        reduce_layout(spec.op, graph[child].node.dtype, &dims, red_mask, group_size)
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
    key::dims(&mut plan.key, dims.len(), plan.narrow_index);
    if let Some(r) = &reduce_plan {
        key::reduce(&mut plan.key, r, group_size);
    }
    // The output's node and type: a reduction's, or the value's own.
    let output_of = |j: usize| match reduce {
        Some(_) => (graph[members[0]].node.dtype, members[0]),
        None => (graph[j].node.dtype, j),
    };
    let value_of = bind_values(&mut plan, graph, &cone, &load_nodes, &masks, output_of);
    if let Some((node, op, operand)) = total {
        let t = JoinedReduction {
            op,
            value: value_of[operand],
            dtype: graph[operand].node.dtype,
            node,
        };
        key::row_total(&mut plan.key, &t);
        plan.row_total = Some(t);
    }
    plan
}

/// Which collected nodes a kernel uses, which of them it computes inside (the rest are
/// its inputs), and which are its targets.
struct Cone {
    used: Vec<bool>,
    inside: Vec<bool>,
    is_target: Vec<bool>,
}

impl Cone {
    /// The cone of `targets` (and `extra`): elementwise nodes that are not materialized
    /// are computed inside, as are the targets of an elementwise kernel and the row
    /// reduction `row`; the walk stops at everything else.
    fn of(
        graph: &[GNode],
        mat: &[bool],
        targets: &[usize],
        extra: Option<usize>,
        reduces: bool,
        row: Option<usize>,
    ) -> Cone {
        let mut is_target = vec![false; graph.len()];
        for &t in targets {
            is_target[t] = true;
        }
        let mut inside = vec![false; graph.len()];
        let mut used = vec![false; graph.len()];
        let mut stack: Vec<usize> = targets.to_vec();
        stack.extend(extra);
        while let Some(j) = stack.pop() {
            if std::mem::replace(&mut used[j], true) {
                continue;
            }
            let elementwise = matches!(graph[j].kind, GKind::Scalar(_))
                || matches!(&graph[j].kind, GKind::Op(code, _) if !matches!(code, OpCode::Reduce(_)));
            let computed_here = (elementwise && (!mat[j] || (is_target[j] && !reduces))) || row == Some(j);
            if computed_here {
                inside[j] = true;
                if let GKind::Op(_, inputs) = &graph[j].kind {
                    stack.extend(inputs.iter().copied());
                }
            }
        }
        Cone {
            used,
            inside,
            is_target,
        }
    }
}

/// Per load, which dims of the iteration `space` it broadcasts along (missing leading
/// dims, or size 1 where the space is not).
fn broadcast_masks(graph: &[GNode], load_nodes: &[usize], space: &[usize]) -> Vec<Vec<bool>> {
    let rank = space.len();
    load_nodes
        .iter()
        .map(|&j| {
            let s = &graph[j].node.shape;
            let off = rank - s.len();
            (0..rank)
                .map(|d| d < off || (s[d - off] == 1 && space[d] != 1))
                .collect()
        })
        .collect()
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
    // rows up to 64, 32: the best measured, BENCHMARKS.md), more only when there are too
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
    }
}

/// Gives every used node its value in evaluation order (an input slot, deduplicated by
/// buffer and broadcast pattern; a scalar slot; or an op over earlier values), marks the
/// targets as outputs (`output_of` names each one's type and node), and writes each into
/// the key. Returns the value index of every node (`usize::MAX` where unused).
fn bind_values(
    plan: &mut KernelPlan,
    graph: &[GNode],
    cone: &Cone,
    load_nodes: &[usize],
    masks: &[u32],
    output_of: impl Fn(usize) -> (DType, usize),
) -> Vec<usize> {
    let mut value_of: Vec<usize> = vec![usize::MAX; graph.len()];
    // (buffer or node identity, broadcast mask) → input slot; kernels have few inputs.
    let mut load_slots: Vec<((usize, u32), usize)> = Vec::new();
    for j in (0..graph.len()).filter(|&j| cone.used[j]) {
        let dtype = graph[j].node.dtype;
        let value = if !cone.inside[j] {
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
                    plan.inputs.push(Input {
                        dtype,
                        broadcast_mask: masks[li],
                        node: j,
                    });
                    load_slots.push((id, plan.inputs.len() - 1));
                    plan.inputs.len() - 1
                }
            };
            key::load(&mut plan.key, dtype, slot, masks[li]);
            Value::Load { slot }
        } else {
            match &graph[j].kind {
                GKind::Scalar(bits) => {
                    plan.scalars.push(ScalarArg { dtype, bits: *bits });
                    key::scalar(&mut plan.key, dtype);
                    Value::Scalar {
                        slot: plan.scalars.len() - 1,
                    }
                }
                GKind::Op(code, inputs) => {
                    if let OpCode::Reduce(spec) = code {
                        plan.row = Some(JoinedReduction {
                            op: spec.op,
                            value: plan.values.len(),
                            dtype,
                            node: j,
                        });
                    }
                    let args: Inputs = inputs.iter().map(|i| value_of[*i]).collect();
                    key::op(&mut plan.key, *code, dtype, &args);
                    Value::Op { code: *code, args }
                }
                GKind::Ready(_) => unreachable_ready(),
            }
        };
        value_of[j] = plan.values.len();
        plan.values.push(PlannedValue { value, dtype });
        if cone.is_target[j] {
            let (out_dtype, out_node) = output_of(j);
            plan.outputs.push(Output {
                value: plan.values.len() - 1,
                dtype: out_dtype,
                node: out_node,
            });
            key::output(&mut plan.key, plan.values.len() - 1, out_dtype);
        }
    }
    value_of
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
