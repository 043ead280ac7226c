//! A kernel's values in evaluation order: every node of its cone at every access it is
//! read with ([`reads`](super::reads)) becomes a load (an input slot, deduplicated by
//! buffer and how it is read), a scalar slot, an operation over earlier values, or — for
//! a region — the choice between its sources' values by a box test. Views and reshapes
//! add no value: they are the accesses of what they read. Each value is written into the
//! key as it is made, and the targets become the outputs.

use smallvec::SmallVec;

use super::access::{Access, Affine, Bound, Collapsed, LoadKind};
use super::collect::{GKind, Inputs, Movement, OpCode};
use super::cone::{ConeView, NodeMap, NodeSet};
use super::kernel_plan::{
    IndexRead, Input, Inside, JoinedReduction, KernelKind, KernelPlan, Output, PlannedValue, ScalarArg,
    ScalarValue, Value,
};
use super::key;
use super::reads::Reads;
use crate::dtype::DType;
use crate::graph::view::Region;
use crate::graph::{IndexFn, TakeSpec, TernaryOp};

/// What binding a kernel's values needs.
pub(super) struct Binder<'a> {
    pub(super) walked: &'a ConeView<'a>,
    pub(super) is_target: &'a NodeSet,
    pub(super) reads: &'a Reads,
    /// How each of `reads.loads` reads over the collapsed dims.
    pub(super) kinds: &'a [LoadKind],
    pub(super) collapsed: &'a Collapsed,
    /// The kernel's full-rank iteration space.
    pub(super) space: &'a [usize],
    /// The target stored into a region, and how.
    pub(super) store: Option<(usize, LoadKind)>,
    /// Loads reuse the input slots of earlier phases that read the same memory the same
    /// way (a row kernel's phases read one row: its work-items keep each slot's elements).
    pub(super) share_slots: bool,
}

/// The state of a binding in progress.
struct Binding {
    /// Per node of the cone, the value of each of its accesses (in the order of
    /// `Reads::accesses`).
    value_at: NodeMap<SmallVec<[usize; 1]>>,
    /// The next of `Reads::loads` to bind (they come in the order values are made).
    next_load: usize,
    /// (buffer identity, how it is read) → input slot; kernels have few inputs.
    slots: Vec<(usize, LoadKind, usize)>,
    /// A broken invariant of the walk (a value read at an access nobody gave it, a load
    /// out of order): the plan is refused ([`KernelPlan::broken`]), never run wrong.
    broken: Option<String>,
}

impl<'a> Binder<'a> {
    /// Gives every used node its values, marks the targets as outputs (`output_of` names
    /// each one's type and node), and writes each into the key. Returns the value of a
    /// node at its first access (a target's: the kernel's own coordinates).
    pub(super) fn bind<F: Fn(usize) -> (DType, usize)>(
        &self,
        plan: &mut KernelPlan,
        output_of: F,
    ) -> impl Fn(usize) -> usize + use<'a, F> {
        let graph = self.walked.graph;
        let slots = match self.share_slots {
            true => earlier_slots(graph, plan),
            false => Vec::new(),
        };
        let mut b = Binding {
            value_at: NodeMap::default(),
            next_load: 0,
            slots,
            broken: None,
        };
        for &j in self.walked.used {
            for (ai, a) in self.reads.accesses(j).iter().enumerate() {
                let v = self.value(plan, &mut b, j, a);
                b.value_at.entry(j).or_default().push(v);
                if ai == 0 && self.is_target.contains(&j) {
                    let (dtype, node) = output_of(j);
                    let store = match &self.store {
                        Some((target, LoadKind::Strided(s))) if *target == j => Some(s.clone()),
                        _ => None,
                    };
                    if let Some(s) = &store {
                        key::store(&mut plan.key, plan.outputs.len(), s);
                    }
                    plan.outputs.push(Output {
                        value: v,
                        dtype,
                        node,
                        store,
                        scatter: None,
                    });
                    key::output(&mut plan.key, v, dtype);
                }
            }
        }
        // (A GEMM plan binds several phases: the first broken one is kept.)
        if let Some(broken) = b.broken.take() {
            plan.broken.get_or_insert(broken);
        }
        move |node| {
            b.value_at
                .get(&node)
                .and_then(|v| v.first().copied())
                .unwrap_or(usize::MAX)
        }
    }

    /// The value of node `i` at access `a` (a scalar has one value whatever the access).
    fn lookup(&self, b: &mut Binding, i: usize, a: &Access) -> usize {
        let scalar = matches!(self.walked.graph[i].kind, GKind::Scalar(_));
        let at = self.reads.accesses(i).iter().position(|x| x == a);
        match at
            .or(scalar.then_some(0))
            .and_then(|at| b.value_at.get(&i)?.get(at))
        {
            Some(&v) => v,
            None => {
                b.broken
                    .get_or_insert_with(|| format!("node {i} has no value at {a:?}"));
                0
            }
        }
    }

    /// The value of node `j` read at `a`.
    fn value(&self, plan: &mut KernelPlan, b: &mut Binding, j: usize, a: &Access) -> usize {
        let g = &self.walked.graph[j];
        let dtype = g.node.dtype;
        if !self.walked.inside.contains(&j) {
            return self.load(plan, b, j);
        }
        let value = match (&g.kind, &g.movement) {
            (GKind::Scalar(_), _) => {
                plan.scalars.push(ScalarArg {
                    dtype,
                    value: ScalarValue::Node(j),
                });
                key::scalar(&mut plan.key, dtype);
                Value::Scalar {
                    slot: plan.scalars.len() - 1,
                }
            }
            (GKind::Op(OpCode::Reshape, _), _) => return self.load(plan, b, j),
            (GKind::Op(OpCode::View, inputs), Some(Movement::View(map))) => {
                return self.lookup(b, inputs[0], &a.view(map))
            }
            (GKind::Op(OpCode::Region, _), Some(Movement::Region(region))) => {
                return self.region(plan, b, j, region, a)
            }
            (GKind::Op(OpCode::Take(spec), inputs), _) => match self.gather(plan, b, j, a, spec, inputs[0]) {
                Some(value) => value,
                None => return self.zero(plan, dtype),
            },
            (GKind::Op(OpCode::FromIndex(spec), _), _) => self.indexed_value(plan, b, j, a, *spec),
            (GKind::Op(code, _), _) => {
                if let (OpCode::Reduce(spec), KernelKind::Reduction(r)) = (code, &mut plan.kind) {
                    r.row = Some(JoinedReduction {
                        op: spec.op,
                        value: plan.values.len(),
                        dtype,
                        node: j,
                    });
                }
                let args: Inputs = self
                    .walked
                    .operand_accesses(j, a, self.space)
                    .iter()
                    .map(|(i, ia)| self.lookup(b, *i, ia))
                    .collect();
                key::op(&mut plan.key, *code, dtype, &args);
                Value::Op { code: *code, args }
            }
            // Ready nodes are never computed inside a kernel.
            (GKind::Ready(_), _) => return self.load(plan, b, j),
        };
        push(plan, value, dtype)
    }

    /// The value of take `j` (of `spec`, from `data`) read at `a`: a gather from its data's
    /// input slot at its indices' value (`None`, and the plan broken, where those are
    /// missing).
    fn gather(
        &self,
        plan: &mut KernelPlan,
        b: &mut Binding,
        j: usize,
        a: &Access,
        spec: &TakeSpec,
        data: usize,
    ) -> Option<Value> {
        let operands = self.walked.operand_accesses(j, a, self.space);
        let [(data_node, da), (indices, ia)] = &operands[..] else {
            b.broken
                .get_or_insert_with(|| format!("take {j} without its operands"));
            return None;
        };
        let loaded = self.lookup(b, *data_node, da);
        let index = self.lookup(b, *indices, ia);
        let Some(Value::Load { slot }) = plan.values.get(loaded).map(|v| &v.value) else {
            b.broken
                .get_or_insert_with(|| format!("take {j} reads no memory"));
            return None;
        };
        let shape = &self.walked.graph[data].node.shape;
        let slot = *slot;
        key::gather(&mut plan.key, slot, index, spec.search_code());
        Some(Value::Gather {
            slot,
            index,
            len: shape[spec.axis],
            stride: shape[spec.axis + 1..].iter().product(),
            search: spec.search,
        })
    }

    /// The value of `j`, computed from the index of `spec` at the coordinates of `a`, with
    /// its operands' values.
    fn indexed_value(
        &self,
        plan: &mut KernelPlan,
        b: &mut Binding,
        j: usize,
        a: &Access,
        spec: IndexFn,
    ) -> Value {
        let g = &self.walked.graph[j];
        let args: Inputs = self
            .walked
            .operand_accesses(j, a, self.space)
            .iter()
            .map(|(i, ia)| self.lookup(b, *i, ia))
            .collect();
        let index = self.read_index(&a.affine(&g.node.shape, self.space.len()));
        let slot = plan.index_reads.len();
        key::from_index(&mut plan.key, spec, g.node.dtype, slot, index.as_ref(), &args);
        plan.index_reads.push(IndexRead { index });
        Value::FromIndex { slot, of: spec, args }
    }

    /// The next load, which is node `j`'s: an input slot (shared with a load of the same
    /// memory read the same way) and its value.
    fn load(&self, plan: &mut KernelPlan, b: &mut Binding, j: usize) -> usize {
        let graph = self.walked.graph;
        let next = self.reads.loads.get(b.next_load).zip(self.kinds.get(b.next_load));
        let Some((l, kind)) = next.filter(|(l, _)| l.reader == j) else {
            b.broken
                .get_or_insert_with(|| format!("node {j} has no load of its own"));
            return self.zero(plan, self.walked.graph[j].node.dtype);
        };
        b.next_load += 1;
        let dtype = graph[l.node].node.dtype;
        // Dedupe by buffer identity when ready, else by node (materialized earlier in this
        // flush). The same buffer read two ways needs two slots.
        let ident = identity(graph, l.node);
        let slot = match b.slots.iter().find(|(i, k, _)| *i == ident && k == kind) {
            Some(&(_, _, slot)) => slot,
            None => {
                plan.inputs.push(Input {
                    dtype,
                    broadcast_mask: kind.mask(),
                    node: l.node,
                    strided: match kind {
                        LoadKind::Strided(s) => Some(s.clone()),
                        LoadKind::Plain { .. } => None,
                    },
                });
                b.slots.push((ident, kind.clone(), plan.inputs.len() - 1));
                plan.inputs.len() - 1
            }
        };
        match kind {
            LoadKind::Plain { mask } => key::load(&mut plan.key, dtype, slot, *mask),
            LoadKind::Strided(s) => key::strided_load(&mut plan.key, dtype, slot, kind.mask(), s),
        }
        push(plan, Value::Load { slot }, dtype)
    }

    /// The value of region node `j` read at `a`: its sources' values, chosen by box
    /// tests where more than one may be read.
    fn region(&self, plan: &mut KernelPlan, b: &mut Binding, j: usize, region: &Region, a: &Access) -> usize {
        let dtype = self.walked.graph[j].node.dtype;
        let parts = self.walked.parts(j, region, a, self.space);
        match region {
            Region::Concat { .. } => {
                let readable: Vec<&(usize, Access)> = parts.iter().flatten().collect();
                let Some((last, la)) = readable.last().copied() else {
                    // An empty result: nothing is read.
                    return self.zero(plan, dtype);
                };
                let mut v = self.lookup(b, *last, la);
                for (i, pa) in readable.iter().rev().skip(1).copied() {
                    let inside = self.inside(plan, &pa.bounds);
                    let vi = self.lookup(b, *i, pa);
                    v = select(plan, inside, vi, v, dtype);
                }
                v
            }
            Region::Pad { .. } => {
                let Some((fill, fa)) = parts[1].as_ref() else {
                    return self.zero(plan, dtype);
                };
                let fv = self.lookup(b, *fill, fa);
                match &parts[0] {
                    None => fv,
                    Some((src, pa)) if pa.bounds == a.bounds => self.lookup(b, *src, pa),
                    Some((src, pa)) => {
                        let inside = self.inside(plan, &pa.bounds);
                        let sv = self.lookup(b, *src, pa);
                        select(plan, inside, sv, fv, dtype)
                    }
                }
            }
        }
    }

    /// The index values computed from it are read at, `offset` (their node's row-major index of
    /// the kernel's coordinates) over the collapsed dims: `None` where it is the kernel's
    /// own linear index. Unbounded: outside a region's box the value is never used.
    fn read_index(&self, offset: &Affine) -> Option<Affine> {
        let offset = Affine {
            bounds: SmallVec::new(),
            ..offset.clone()
        };
        match self.collapsed.kind(&offset) {
            LoadKind::Plain { mask: 0 } => None,
            _ => match self.collapsed.strided(&offset) {
                LoadKind::Strided(a) => Some(a),
                LoadKind::Plain { .. } => None,
            },
        }
    }

    /// A box test over the kernel's coordinates.
    fn inside(&self, plan: &mut KernelPlan, bounds: &[Bound]) -> usize {
        let bounds = self.collapsed.bounds(bounds);
        key::inside(&mut plan.key, plan.insides.len(), &bounds);
        plan.insides.push(Inside { bounds });
        let slot = plan.insides.len() - 1;
        push(plan, Value::Inside { slot }, DType::Bool)
    }

    /// A zero of `dtype` (the value of a region nothing is read from: an empty result).
    fn zero(&self, plan: &mut KernelPlan, dtype: DType) -> usize {
        let bits = crate::dtype::ScalarBits {
            bits: 0,
            size: dtype.arg_size() as u8,
        };
        plan.scalars.push(ScalarArg {
            dtype,
            value: ScalarValue::Constant(bits),
        });
        key::scalar(&mut plan.key, dtype);
        let slot = plan.scalars.len() - 1;
        push(plan, Value::Scalar { slot }, dtype)
    }
}

/// `cond ? a : b`.
fn select(plan: &mut KernelPlan, cond: usize, a: usize, b: usize, dtype: DType) -> usize {
    let code = OpCode::Ternary(TernaryOp::Select);
    let args: Inputs = smallvec::smallvec![cond, a, b];
    key::op(&mut plan.key, code, dtype, &args);
    push(plan, Value::Op { code, args }, dtype)
}

/// Adds a value; returns its index.
fn push(plan: &mut KernelPlan, value: Value, dtype: DType) -> usize {
    plan.values.push(PlannedValue {
        value,
        dtype,
        in_branch: false,
    });
    plan.values.len() - 1
}

/// Marks the guarded loads that only selects read as a branch
/// ([`PlannedValue::in_branch`]): a region's sources, of which each element loads one.
pub(super) fn mark_branch_loads(plan: &mut KernelPlan) {
    let guarded = |v: &PlannedValue| matches!(v.value, Value::Load { slot } if plan.inputs[slot].strided.as_ref().is_some_and(|a| !a.bounds.is_empty()));
    let mut only_branches: Vec<bool> = plan.values.iter().map(guarded).collect();
    for v in &plan.values {
        if let Value::Gather { index, .. } = v.value {
            only_branches[index] = false;
        }
        if let Value::Op { code, args } = &v.value {
            let select = *code == OpCode::Ternary(TernaryOp::Select);
            for (k, &a) in args.iter().enumerate() {
                if !(select && k > 0) {
                    only_branches[a] = false;
                }
            }
        }
    }
    for o in &plan.outputs {
        only_branches[o.value] = false;
    }
    if let KernelKind::Reduction(r) = &plan.kind {
        for j in r.row.iter().chain(&r.row_total) {
            only_branches[j.value] = false;
        }
    }
    for (v, b) in plan.values.iter_mut().zip(only_branches) {
        v.in_branch = b;
    }
}

/// The input slots a plan has so far, keyed as `Binder::load` dedupes them: buffer
/// identity (or producing node) and how it is read.
fn earlier_slots(graph: &[super::collect::GNode], plan: &KernelPlan) -> Vec<(usize, LoadKind, usize)> {
    plan.inputs
        .iter()
        .enumerate()
        .map(|(slot, input)| {
            let ident = identity(graph, input.node);
            let kind = match &input.strided {
                Some(a) => LoadKind::Strided(a.clone()),
                None => LoadKind::Plain {
                    mask: input.broadcast_mask,
                },
            };
            (ident, kind, slot)
        })
        .collect()
}

/// What a load of `node` reads, for deduping slots: its buffer when ready, else the node
/// (materialized earlier in this flush).
fn identity(graph: &[super::collect::GNode], node: usize) -> usize {
    match &graph[node].kind {
        GKind::Ready(buffer) => buffer.mem() as usize,
        _ => usize::MAX - node,
    }
}
