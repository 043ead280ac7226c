//! Planning a GEMM kernel: a matrix product (`Op::MatMul`), its operands' producers
//! evaluated where the kernel loads its tiles, and the elementwise consumers that
//! joined its group (`group`) evaluated where it stores the product.
//!
//! Each of the three is a *phase* planned like an elementwise kernel of its own space —
//! the left operand over `[.., m, k]`, the right one over `[.., k, n]`, the epilogue over
//! the product's `[.., m, n]` — with the same walk (`reads`) and binding (`values`), into
//! one plan: the phases share its inputs, scalars and key. A phase's dims never collapse
//! and all its loads are strided, so that each reads at the explicit coordinates the
//! kernel gives it (a tile's row and column; the batch coordinates, the same in every
//! phase). In the epilogue the product is one value, the accumulator (`Cone::of`'s
//! `product`), read only at the product's own coordinates (`group` admits nothing else).

use crate::dtype::DType;
use crate::plan::access::Affine;
use crate::plan::collect::{GKind, GNode, OpCode};
use crate::plan::gemm::tiles::Along;
use crate::plan::gemm::{GemmOperand, GemmPlan, GemmRow};
use crate::plan::kernel_plan::{KernelKind, KernelPlan};
use crate::plan::phase::Phase;
use crate::plan::{key, values, Store};

/// Plans the GEMM kernel of product `members[0]` and the elementwise points
/// `members[1..]` that joined it. `stored`: the product itself is an output (a root, or
/// read by another kernel). `store`: the member stored into a region of an array.
pub(crate) fn plan_gemm(
    graph: &[GNode],
    mat: &[bool],
    members: &[usize],
    stored: bool,
    store: Option<&Store>,
) -> KernelPlan {
    let p = members[0];
    let s = Sizes::of(graph, p);
    let mut plan = KernelPlan::empty(s.out.clone(), s.out.iter().product(), 0);
    plan.narrow_index = false;
    if graph[s.a].node.dtype != s.dtype || graph[s.b].node.dtype != s.dtype || s.out.len() < 2 {
        plan.broken = Some(format!(
            "matrix product {p} of operands {} and {} is malformed",
            s.a, s.b
        ));
        return plan;
    }
    key::dims(&mut plan.key, s.out.len(), false);
    key::gemm(&mut plan.key, s.dtype);
    let left = operand(graph, mat, &mut plan, s.a, s.space(s.m, s.k));
    let right = operand(graph, mat, &mut plan, s.b, s.space(s.k, s.n));
    let row = epilogue(graph, mat, members, stored, store, &mut plan);
    key::gemm_operands(&mut plan.key, left.along, right.along);
    let g = GemmPlan {
        left,
        right,
        batch: s.batch,
        m: s.m,
        n: s.n,
        k: s.k,
        dtype: s.dtype,
        tile: None,
        split: 1,
        row,
    };
    plan.narrow_offsets = narrow_offsets(&plan, &g);
    key::offsets(&mut plan.key, plan.narrow_offsets);
    values::mark_branch_loads(&mut plan);
    plan.kind = KernelKind::Gemm(g);
    plan
}

/// The operands and sizes of a matrix product: `a` (`[.., m, k]`) times `b`
/// (`[.., k, n]`) is `out` (`[.., m, n]`, the batch dims first).
struct Sizes {
    a: usize,
    b: usize,
    out: Vec<usize>,
    batch: Vec<usize>,
    m: usize,
    n: usize,
    k: usize,
    dtype: DType,
}

impl Sizes {
    /// The sizes of product `p` (a node that is no product, or has fewer than two axes,
    /// has zeros that the caller refuses).
    fn of(graph: &[GNode], p: usize) -> Sizes {
        let (a, b) = match &graph[p].kind {
            GKind::Op(OpCode::MatMul, inputs) => (inputs[0], inputs[1]),
            _ => (p, p),
        };
        let out: Vec<usize> = graph[p].node.shape.to_vec();
        let rank = out.len();
        // (A product has two axes at least; anything else is refused by the caller.)
        let batch = out[..rank.saturating_sub(2)].to_vec();
        let (m, n) = match out[..] {
            [.., m, n] => (m, n),
            _ => (0, 0),
        };
        let k = graph[a].node.shape.last().copied().unwrap_or(0);
        Sizes {
            a,
            b,
            out,
            batch,
            m,
            n,
            k,
            dtype: graph[p].node.dtype,
        }
    }

    /// The space of an operand of `rows` by `cols` matrices: the batch dims, then those.
    fn space(&self, rows: usize, cols: usize) -> Vec<usize> {
        self.batch.iter().copied().chain([rows, cols]).collect()
    }
}

/// Binds the phase of `operand` over `space` (its batch dims, then its rows and columns
/// in a tile) into `plan`.
fn operand(
    graph: &[GNode],
    mat: &[bool],
    plan: &mut KernelPlan,
    operand: usize,
    space: Vec<usize>,
) -> GemmOperand {
    let phase = Phase {
        targets: &[],
        extra: Some(operand),
        space,
        product: None,
        store: None,
        share_slots: false,
    };
    key::gemm_phase(&mut plan.key);
    let start = plan.values.len();
    let bound = phase.bind(graph, mat, plan);
    GemmOperand {
        values: start..plan.values.len(),
        value: bound.value,
        along: along(&bound.offsets, phase.space.len()),
        aligned: false,
    }
}

/// Binds the epilogue of the GEMM kernel of product `members[0]` into `plan` (after its
/// operands' phases): the elementwise members are its targets (the product too where
/// `stored`), and a reduction member reduces its rows (its operand is the epilogue's
/// extra value), which this returns.
fn epilogue(
    graph: &[GNode],
    mat: &[bool],
    members: &[usize],
    stored: bool,
    store: Option<&Store>,
    plan: &mut KernelPlan,
) -> Option<GemmRow> {
    let p = members[0];
    let reduction = members[1..].iter().find_map(|&r| match &graph[r].kind {
        GKind::Op(OpCode::Reduce(spec), inputs) => Some((r, spec.op, inputs[0])),
        _ => None,
    });
    let mut targets: Vec<usize> = members[1..]
        .iter()
        .copied()
        .filter(|&j| reduction.is_none_or(|(r, _, _)| r != j))
        .collect();
    if stored {
        targets.insert(0, p);
    }
    key::gemm_phase(&mut plan.key);
    let epilogue = Phase {
        targets: &targets,
        extra: reduction.map(|(_, _, operand)| operand),
        space: graph[p].node.shape.to_vec(),
        product: Some(p),
        store,
        share_slots: false,
    };
    let bound = epilogue.bind(graph, mat, plan);
    let row = reduction.map(|(node, op, _)| GemmRow {
        op,
        value: bound.value,
        dtype: graph[node].node.dtype,
        node,
    });
    if let Some(row) = &row {
        key::gemm_row(&mut plan.key, row.op, row.value, row.dtype);
    }
    if !bound.product_plain {
        plan.broken.get_or_insert_with(|| {
            format!("the epilogue of matrix product {p} reads it elsewhere than at its own coordinates")
        });
    }
    row
}

/// Sets the tile of GEMM plan `plan` and its segments of `k`
/// ([`split`](crate::plan::gemm::tiles::split)), with whether each operand's vector loads are aligned
/// to its vector, and writes them into its key (once).
pub(crate) fn set_tile(
    plan: &mut KernelPlan,
    tile: crate::plan::gemm::tiles::GemmTile,
    profile: &crate::plan::DeviceProfile,
) {
    let aligned = |op: &GemmOperand| {
        let v = i64::from(tile.vector);
        op.values.clone().all(|i| match plan.values[i].value {
            crate::plan::Value::Load { slot } => plan.inputs[slot]
                .strided
                .as_ref()
                .filter(|a| a.vectorizable())
                .is_none_or(|a| {
                    let outer = &a.stride[..a.stride.len() - 1];
                    a.base % v == 0 && outer.iter().all(|s| s % v == 0)
                }),
            _ => true,
        })
    };
    let KernelKind::Gemm(g) = &plan.kind else {
        return;
    };
    if g.tile.is_some() {
        return;
    }
    let (left, right) = (aligned(&g.left), aligned(&g.right));
    if let KernelKind::Gemm(g) = &mut plan.kind {
        g.left.aligned = left;
        g.right.aligned = right;
        g.tile = Some(tile);
        // (A row reduction needs whole rows in one kernel: never split.)
        g.split = match g.row {
            Some(_) => 1,
            None => crate::plan::gemm::tiles::split(profile, g),
        };
        key::gemm_tile(&mut plan.key, &tile, [left, right], g.split > 1);
    }
}

/// How an operand's tiles load best: along its rows where a load is contiguous along
/// them and none along its columns (a transposed matrix), else along its columns.
fn along(offsets: &[Affine], rank: usize) -> Along {
    let unit = |a: &Affine, d: usize| a.stride[d].abs() == 1;
    let rows = offsets.iter().any(|o| unit(o, rank - 2) && !unit(o, rank - 1));
    let cols = offsets.iter().any(|o| unit(o, rank - 1));
    if rows && !cols {
        Along::Rows
    } else {
        Along::Columns
    }
}

/// Whether every offset the kernel computes fits an `int`: each load over the
/// coordinates of its phase, and each store.
fn narrow_offsets(plan: &KernelPlan, g: &GemmPlan) -> bool {
    let spaces = g.spaces();
    if spaces.iter().flatten().any(|&d| d > i32::MAX as usize) {
        return false;
    }
    let loads = plan.values.iter().enumerate().all(|(v, pv)| match pv.value {
        crate::plan::Value::Load { slot } => plan.inputs[slot]
            .strided
            .as_ref()
            .is_none_or(|a| a.fits_int(&spaces[g.phase_of(v)])),
        crate::plan::Value::FromIndex { slot, .. } => plan.index_reads[slot]
            .index
            .as_ref()
            .is_none_or(|a| a.fits_int(&spaces[g.phase_of(v)])),
        _ => true,
    });
    loads
        && plan
            .outputs
            .iter()
            .filter_map(|o| o.store.as_ref())
            .all(|a| a.fits_int(&spaces[2]))
        && plan
            .insides
            .iter()
            .flat_map(|i| &i.bounds)
            .all(|b| i32::try_from(b.lo).is_ok() && i32::try_from(b.hi).is_ok())
}
