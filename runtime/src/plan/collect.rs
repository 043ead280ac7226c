//! Collecting a flush's graph: the lazy nodes the roots need, in topological order,
//! stopping at materialized nodes.

use rustc_hash::FxHashMap as HashMap;
use std::sync::Arc;

use crate::backend::buffer::DeviceBuffer;
use crate::dtype::DType;
use crate::dtype::ScalarBits;
use crate::error::{Error, Result};
use crate::graph::view::{Region, ViewMap};
use crate::graph::{
    BinaryOp, Node, NodeRef, Op, RandomSpec, ReduceSpec, ScanSpec, Shape, Side, State, TakeSpec, TernaryOp,
    UnaryOp,
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

/// What launching a planned flush reads of its graph's leaves, by graph index: the memory
/// of a materialized node and the bits of a scalar. A collected graph answers from its
/// nodes; a captured step (`exec::step`) from its own table and each run's inputs.
pub(crate) trait Leaves {
    /// The number of nodes in the graph.
    fn len(&self) -> usize;
    /// The memory of leaf `i`, if it is a materialized node.
    fn buffer(&self, i: usize) -> Option<&Arc<DeviceBuffer>>;
    /// The bits of leaf `i`, if it is a scalar.
    fn scalar(&self, i: usize) -> Option<ScalarBits>;
}

impl Leaves for [GNode] {
    fn len(&self) -> usize {
        <[GNode]>::len(self)
    }

    fn buffer(&self, i: usize) -> Option<&Arc<DeviceBuffer>> {
        match &self.get(i)?.kind {
            GKind::Ready(b) => Some(b),
            _ => None,
        }
    }

    fn scalar(&self, i: usize) -> Option<ScalarBits> {
        match &self.get(i)?.kind {
            GKind::Scalar(bits) => Some(*bits),
            _ => None,
        }
    }
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

/// What [`collect`] found: the nodes in topological order, and where each root is.
pub(crate) struct Found {
    pub(crate) graph: Vec<GNode>,
    /// The index in `graph` of each root, in the caller's order.
    pub(crate) roots: Vec<usize>,
}

/// Collects every node the roots need, stopping at materialized nodes. Iterative, so a
/// 10,000-node chain does not overflow the stack. Errors with the first recording error.
///
/// Each lazy node is visited twice: first to push its operands (read under its lock,
/// cloning only those not seen yet), then, once they are collected, to write its entry
/// (its operation read again under the lock, operands named by index: no operation is
/// cloned). A node another thread materialized in between is collected as memory.
pub(crate) fn collect(roots: &[NodeRef]) -> Result<Found> {
    // (Taken out of the thread's slot, so a nested collect would start from an empty one.)
    let mut scratch = SCRATCH.with(|s| s.take());
    let found = collect_with(roots, &mut scratch);
    scratch.index.clear();
    scratch.stack.clear();
    if scratch.index.capacity() > SCRATCH_KEPT {
        scratch.index = HashMap::default();
    }
    scratch.stack.shrink_to(SCRATCH_KEPT);
    SCRATCH.with(|s| *s.borrow_mut() = scratch);
    found
}

/// What a thread's collects reuse: the table of visited nodes and the walk's stack, empty
/// between collects, so that a small flush allocates neither.
#[derive(Default)]
struct Scratch {
    /// Visited nodes: their index in the collected graph, or [`IN_PROGRESS`].
    index: HashMap<*const crate::graph::Node, usize>,
    /// (node, whether its operands are collected)
    stack: Vec<(NodeRef, bool)>,
}

/// Entries a thread keeps room for after a collect (more are released: one long chain
/// does not pin its table).
const SCRATCH_KEPT: usize = 4096;

/// A node being expanded maps to this in [`Scratch::index`].
const IN_PROGRESS: usize = usize::MAX;

thread_local! {
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::default();
    /// A collected graph's vector, emptied, for the thread's next collect: a graph of a
    /// few dozen entries is past what the allocator serves from its per-thread caches,
    /// and allocating it anew cost as much as collecting it (callgrind, 2026-12-03).
    static SPARE_GRAPH: std::cell::Cell<Vec<GNode>> = const { std::cell::Cell::new(Vec::new()) };
}

/// Gives a flush's graph back once it has run: its entries are dropped, and its vector
/// is kept for the thread's next collect (up to [`SCRATCH_KEPT`] entries).
pub(crate) fn recycle(mut graph: Vec<GNode>) {
    graph.clear();
    if graph.capacity() <= SCRATCH_KEPT {
        SPARE_GRAPH.with(|g| g.set(graph));
    }
}

fn collect_with(roots: &[NodeRef], scratch: &mut Scratch) -> Result<Found> {
    let Scratch { index, stack } = scratch;
    let mut out: Vec<GNode> = SPARE_GRAPH.with(std::cell::Cell::take);
    let mut scalar_nodes = ScalarNodes::default();
    // (The last root is collected first: the order planning has always seen.)
    stack.extend(roots.iter().map(|r| (r.clone(), false)));
    while let Some((node, expanded)) = stack.pop() {
        let key = Arc::as_ptr(&node);
        if !expanded {
            match index.entry(key) {
                // Done, or being expanded through another path (its entry is on the stack).
                std::collections::hash_map::Entry::Occupied(_) => continue,
                std::collections::hash_map::Entry::Vacant(v) => {
                    v.insert(IN_PROGRESS);
                }
            }
        }
        // One lock a visit: a lazy node's first visit pushes the operands not seen yet
        // (above itself, the first on top); any other visit writes the entry.
        let state = node.state();
        if let (false, State::Lazy(op)) = (expanded, &*state) {
            let start = stack.len();
            op.each_input(|c| {
                if !index.contains_key(&Arc::as_ptr(c)) {
                    stack.push((c.clone(), false));
                }
            });
            drop(state);
            stack[start..].reverse();
            stack.insert(start, (node, true));
            continue;
        }
        // An inline scalar gets its entry just before its operation's.
        let scalar_at = match &*state {
            State::Lazy(Op::WithScalar(_, _, s)) => {
                out.push(GNode {
                    node: scalar_nodes.of(&node.ctx, s.dtype),
                    kind: GKind::Scalar(s.bits),
                    movement: None,
                });
                Some(out.len() - 1)
            }
            _ => None,
        };
        let (kind, movement) = entry(&state, index, scalar_at)?;
        drop(state);
        index.insert(key, out.len());
        out.push(GNode { node, kind, movement });
    }
    let roots = roots
        .iter()
        .map(|r| match index.get(&Arc::as_ptr(r)) {
            Some(&i) if i != IN_PROGRESS => Ok(i),
            _ => Err(Error::Internal("a root was not collected".into())),
        })
        .collect::<Result<Vec<usize>>>()?;
    Ok(Found { graph: out, roots })
}

/// The nodes that stand for inline scalars in a collected graph ([`Op::WithScalar`]):
/// one per element type, shared by every such entry (planning reads an entry's node for
/// its type and shape only, and names entries by index).
#[derive(Default)]
struct ScalarNodes(smallvec::SmallVec<[NodeRef; 2]>);

impl ScalarNodes {
    fn of(&mut self, ctx: &Arc<crate::backend::context::ContextInner>, dtype: DType) -> NodeRef {
        if let Some(n) = self.0.iter().find(|n| n.dtype == dtype) {
            return n.clone();
        }
        // (Its own value is never read: each entry holds its scalar's bits.)
        let bits = ScalarBits { bits: 0, size: 8 };
        let n = Node::new(ctx.clone(), dtype, Shape::new(), State::Lazy(Op::Scalar(bits)));
        self.0.push(n.clone());
        n
    }
}

/// What a node of state `state` is in the collected graph (its operands, if lazy, are in
/// `index` already; an inline scalar's entry is at `scalar_at`).
fn entry(
    state: &State,
    index: &HashMap<*const crate::graph::Node, usize>,
    scalar_at: Option<usize>,
) -> Result<(GKind, Option<Movement>)> {
    let at = |n: &NodeRef| -> Result<usize> {
        match index.get(&Arc::as_ptr(n)) {
            Some(&i) if i != IN_PROGRESS => Ok(i),
            _ => Err(Error::Internal("graph input visited out of order".into())),
        }
    };
    let (kind, movement) = match state {
        State::Ready(b, _) => (GKind::Ready(b.clone()), None),
        State::Lazy(op) => {
            let movement = match op {
                Op::View(map, _) => Some(Movement::View(map.clone())),
                Op::Region(region, _) => Some(Movement::Region(region.clone())),
                _ => None,
            };
            let kind = match op {
                Op::Scalar(bits) => GKind::Scalar(*bits),
                Op::Unary(u, a) => GKind::Op(OpCode::Unary(*u), smallvec::smallvec![at(a)?]),
                Op::Reduce(r, a) => GKind::Op(OpCode::Reduce(*r), smallvec::smallvec![at(a)?]),
                Op::Scan(spec, a) => GKind::Op(OpCode::Scan(*spec), smallvec::smallvec![at(a)?]),
                Op::Binary(b, x, y) => GKind::Op(OpCode::Binary(*b), smallvec::smallvec![at(x)?, at(y)?]),
                Op::WithScalar(b, x, s) => {
                    let scalar = scalar_at
                        .ok_or_else(|| Error::Internal("an inline scalar was not collected".into()))?;
                    let inputs = match s.side {
                        Side::Left => smallvec::smallvec![scalar, at(x)?],
                        Side::Right => smallvec::smallvec![at(x)?, scalar],
                    };
                    GKind::Op(OpCode::Binary(*b), inputs)
                }
                Op::MatMul(x, y) => GKind::Op(OpCode::MatMul, smallvec::smallvec![at(x)?, at(y)?]),
                Op::Take { spec, data, indices } => {
                    GKind::Op(OpCode::Take(*spec), smallvec::smallvec![at(data)?, at(indices)?])
                }
                Op::Expr(t, ops) => GKind::Op(
                    OpCode::Expr(crate::graph::template::template_id(t)),
                    ops.iter().map(at).collect::<Result<Inputs>>()?,
                ),
                Op::Ternary(t, x, y, z) => {
                    GKind::Op(OpCode::Ternary(*t), smallvec::smallvec![at(x)?, at(y)?, at(z)?])
                }
                Op::View(_, a) => GKind::Op(OpCode::View, smallvec::smallvec![at(a)?]),
                Op::Reshape(a) => GKind::Op(OpCode::Reshape, smallvec::smallvec![at(a)?]),
                Op::Region(_, ops) => {
                    GKind::Op(OpCode::Region, ops.iter().map(at).collect::<Result<Inputs>>()?)
                }
                Op::Random(spec, ops) => GKind::Op(
                    OpCode::Random(*spec),
                    ops.iter().map(at).collect::<Result<Inputs>>()?,
                ),
            };
            (kind, movement)
        }
        State::Parts(_) => return Err(multi_node()),
        State::Failed(e) => return Err((**e).clone()),
        State::Dropped => return Err(Error::InvalidShape("a dropped array was used".into())),
    };
    Ok((kind, movement))
}

/// A multi-device context's array reached a one-device flush (every entry point sends
/// such arrays to `multi` first, and contexts never mix).
fn multi_node() -> Error {
    Error::Internal("an array split across devices reached a one-device flush".into())
}
