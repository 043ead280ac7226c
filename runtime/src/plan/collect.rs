//! Collecting a flush's graph: the lazy nodes the roots need, in topological order,
//! stopping at materialized nodes.

use rustc_hash::FxHashMap as HashMap;
use std::sync::Arc;

use crate::backend::buffer::DeviceBuffer;
use crate::dtype::ScalarBits;
use crate::error::{Error, Result};
use crate::graph::view::{Region, ViewMap};
use crate::graph::{
    BinaryOp, NodeRef, Op, RandomSpec, ReduceSpec, ScanSpec, State, TakeSpec, TernaryOp, UnaryOp,
};

/// A node of the collected graph, in topological order (inputs first).
pub(crate) struct GNode {
    pub(crate) node: NodeRef,
    pub(crate) kind: GKind,
    /// The index map of a view, or the layout of a region ([`OpCode::View`],
    /// [`OpCode::Region`]).
    pub(crate) movement: Option<Movement>,
}

/// What a view or region node reads where.
#[derive(Clone)]
pub(crate) enum Movement {
    View(Arc<ViewMap>),
    Region(Arc<Region>),
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
    /// Always materialized, like a reduction; its elementwise producers are fused into
    /// its loads.
    Scan(ScanSpec),
    /// An `expr!` template (by id).
    Expr(u32),
    /// A view of its operand ([`GNode::movement`] holds the map); never a value of its
    /// own: planning folds the map into the loads that read it.
    View,
    /// Its operand's elements in row-major order under this node's shape; the operand is
    /// always materialized first, and read in place.
    Reshape,
    /// Elements picked from its operands by position ([`GNode::movement`] holds how).
    Region,
    /// Elements of its first operand (always materialized: read through an index) picked
    /// along an axis by its second operand's values, clamped into the axis.
    Take(TakeSpec),
    /// A matrix product: always materialized, or computed by the kernel of its own
    /// epilogue (`plan::gemm`), its operands' producers fused into its tile loads.
    MatMul,
    /// Random numbers, computed where they are read from the row-major index of the
    /// coordinates they are read at (like a load's offset) and their operands, the
    /// scalars of [`RandomSpec`]; no memory.
    Random(RandomSpec),
}

impl OpCode {
    /// An elementwise operation, computed inside whichever kernel reads it (not a
    /// reduction or matrix product, which are kernels of their own).
    pub(crate) fn is_elementwise(self) -> bool {
        !matches!(self, OpCode::Reduce(_) | OpCode::Scan(_) | OpCode::MatMul)
    }
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
            _ => Err(Error::Internal("graph input visited out of order".into())),
        }
    };
    while let Some((node, expanded)) = stack.pop() {
        let key = Arc::as_ptr(&node);
        if let Some(op) = expanded {
            let movement = match &op {
                Op::View(map, _) => Some(Movement::View(map.clone())),
                Op::Region(region, _) => Some(Movement::Region(region.clone())),
                _ => None,
            };
            let kind = match op {
                Op::Scalar(bits) => GKind::Scalar(bits),
                Op::Unary(u, a) => GKind::Op(OpCode::Unary(u), smallvec::smallvec![at(&index, &a)?]),
                Op::Reduce(r, a) => GKind::Op(OpCode::Reduce(r), smallvec::smallvec![at(&index, &a)?]),
                Op::Scan(spec, a) => GKind::Op(OpCode::Scan(spec), smallvec::smallvec![at(&index, &a)?]),
                Op::Binary(b, x, y) => GKind::Op(
                    OpCode::Binary(b),
                    smallvec::smallvec![at(&index, &x)?, at(&index, &y)?],
                ),
                Op::MatMul(x, y) => GKind::Op(
                    OpCode::MatMul,
                    smallvec::smallvec![at(&index, &x)?, at(&index, &y)?],
                ),
                Op::Take { spec, data, indices } => GKind::Op(
                    OpCode::Take(spec),
                    smallvec::smallvec![at(&index, &data)?, at(&index, &indices)?],
                ),
                Op::Expr(t, ops) => GKind::Op(
                    OpCode::Expr(crate::graph::template::template_id(t)),
                    ops.iter().map(|o| at(&index, o)).collect::<Result<Inputs>>()?,
                ),
                Op::Ternary(t, x, y, z) => GKind::Op(
                    OpCode::Ternary(t),
                    smallvec::smallvec![at(&index, &x)?, at(&index, &y)?, at(&index, &z)?],
                ),
                Op::View(_, a) => GKind::Op(OpCode::View, smallvec::smallvec![at(&index, &a)?]),
                Op::Reshape(a) => GKind::Op(OpCode::Reshape, smallvec::smallvec![at(&index, &a)?]),
                Op::Region(_, ops) => GKind::Op(
                    OpCode::Region,
                    ops.iter().map(|o| at(&index, o)).collect::<Result<Inputs>>()?,
                ),
                Op::Random(spec, ops) => GKind::Op(
                    OpCode::Random(spec),
                    ops.iter().map(|o| at(&index, o)).collect::<Result<Inputs>>()?,
                ),
            };
            index.insert(key, out.len());
            out.push(GNode { node, kind, movement });
            continue;
        }
        if index.contains_key(&key) {
            // Done, or being expanded through another path (its entry is on the stack).
            continue;
        }
        let snapshot = match &*node.state() {
            State::Ready(b, _) => Err(b.clone()),
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
                    movement: None,
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
