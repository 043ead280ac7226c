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
    BinaryOp, FftSpec, IndexFn, Node, NodeRef, Op, ReduceSpec, ScanSpec, Shape, Side, State, TakeSpec,
    TernaryOp, UnaryOp,
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
    /// One pass of a Fourier transform: always materialized, like a scan; its producers
    /// are fused into its loads, its consumers into its stores.
    Fft(FftSpec),
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
    /// Values with no memory (random numbers, positions), computed where they are read
    /// from the row-major index of the coordinates they are read at (like a load's
    /// offset) and their operands, the scalars of [`IndexFn`].
    FromIndex(IndexFn),
}

impl OpCode {
    /// An elementwise operation, computed inside whichever kernel reads it (not a
    /// reduction or matrix product, which are kernels of their own).
    pub(crate) fn is_elementwise(self) -> bool {
        !matches!(
            self,
            OpCode::Reduce(_) | OpCode::Scan(_) | OpCode::Fft(_) | OpCode::MatMul
        )
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
/// A depth-first walk: a lazy node is visited on the way down, to push its operands
/// (read under its lock), and once they are collected, to write its entry (its operation
/// read again under the lock, no operation cloned; a node another thread materialized in
/// between is collected as memory). Each visit leaves the node's graph index on a stack
/// of values, where its consumer takes its operands' indices. Only nodes held by more
/// than their one consumer (or by the caller: the roots) go into the table of visited
/// nodes, which finds them again on a second path: a node nothing else holds cannot be
/// reached twice.
pub(crate) fn collect(roots: &[NodeRef]) -> Result<Found> {
    // (Taken out of the thread's slot, so a nested collect would start from an empty one.)
    let mut scratch = SCRATCH.with(|s| s.take());
    let found = collect_with(roots, &mut scratch);
    scratch.index.clear();
    scratch.stack.clear();
    scratch.values.clear();
    if scratch.index.capacity() > SCRATCH_KEPT {
        scratch.index = HashMap::default();
    }
    scratch.stack.shrink_to(SCRATCH_KEPT);
    scratch.values.shrink_to(SCRATCH_KEPT);
    SCRATCH.with(|s| *s.borrow_mut() = scratch);
    found
}

/// What a thread's collects reuse: the table of visited nodes and the walk's stacks, empty
/// between collects, so that a small flush allocates none of them.
#[derive(Default)]
struct Scratch {
    /// Visited nodes held elsewhere too: their index in the collected graph, or
    /// [`IN_PROGRESS`].
    index: HashMap<*const crate::graph::Node, usize>,
    stack: Vec<Visit>,
    /// The graph indices of the nodes visited whose consumer has not taken them yet.
    values: Vec<usize>,
}

/// A step of the walk.
enum Visit {
    /// Collect this node (its operands first, if lazy). `unique`: nothing but its one
    /// consumer holds it, so no other path reaches it and the table never sees it.
    Enter { node: NodeRef, unique: bool },
    /// Its `operands` are collected (their indices the last values): write its entry.
    Exit {
        node: NodeRef,
        unique: bool,
        operands: usize,
    },
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
    /// and allocating it anew cost as much as collecting it
    /// (RESULTS.md#rule-reused-flush-vectors).
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
    let mut out: Vec<GNode> = SPARE_GRAPH.with(std::cell::Cell::take);
    let mut scalar_nodes = ScalarNodes::default();
    // (The last root is collected first: the order planning has always seen.)
    scratch.stack.extend(roots.iter().map(|r| Visit::Enter {
        node: r.clone(),
        unique: false,
    }));
    while let Some(visit) = scratch.stack.pop() {
        let (node, unique, operands) = match visit {
            Visit::Enter { node, unique } => match scratch.enter(node, unique)? {
                Some(node) => (node, unique, 0),
                None => continue,
            },
            Visit::Exit {
                node,
                unique,
                operands,
            } => (node, unique, operands),
        };
        scratch.write(&mut out, &mut scalar_nodes, node, unique, operands)?;
    }
    let roots = roots
        .iter()
        .map(|r| match scratch.index.get(&Arc::as_ptr(r)) {
            Some(&i) if i != IN_PROGRESS => Ok(i),
            _ => Err(Error::Internal("a root was not collected".into())),
        })
        .collect::<Result<Vec<usize>>>()?;
    Ok(Found { graph: out, roots })
}

impl Scratch {
    /// Visits `node` on the way down: a node seen before leaves its index on the values;
    /// a lazy one pushes its exit and its operands above it (`None` for both); a node in
    /// memory is returned, to be written now.
    fn enter(&mut self, node: NodeRef, unique: bool) -> Result<Option<NodeRef>> {
        let Scratch { index, stack, values } = self;
        if !unique {
            match index.entry(Arc::as_ptr(&node)) {
                std::collections::hash_map::Entry::Occupied(seen) => {
                    // (Being expanded: only a cycle, which a graph cannot have.)
                    if *seen.get() == IN_PROGRESS {
                        return Err(Error::Internal("a node reached from its own operands".into()));
                    }
                    values.push(*seen.get());
                    return Ok(None);
                }
                std::collections::hash_map::Entry::Vacant(v) => {
                    v.insert(IN_PROGRESS);
                }
            }
        }
        let state = node.state();
        if let State::Lazy(op) = &*state {
            // Its operands above it, the first on top. (A count of one, read under the
            // consumer's lock: the operation is its only holder.)
            let start = stack.len();
            op.each_input(|c| {
                stack.push(Visit::Enter {
                    unique: Arc::strong_count(c) == 1,
                    node: c.clone(),
                })
            });
            let operands = stack.len() - start;
            drop(state);
            stack[start..].reverse();
            stack.insert(
                start,
                Visit::Exit {
                    node,
                    unique,
                    operands,
                },
            );
            return Ok(None);
        }
        drop(state);
        Ok(Some(node))
    }

    /// Writes `node`'s entry into `out`, its last `operands` values its operands (an inline
    /// scalar's entry, from `scalar_nodes`, just before it), and leaves its index on the
    /// values.
    fn write(
        &mut self,
        out: &mut Vec<GNode>,
        scalar_nodes: &mut ScalarNodes,
        node: NodeRef,
        unique: bool,
        operands: usize,
    ) -> Result<()> {
        let Scratch { index, values, .. } = self;
        let Some(from) = values.len().checked_sub(operands) else {
            return Err(Error::Internal("graph operands collected out of order".into()));
        };
        let state = node.state();
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
        let (kind, movement) = entry(&state, &values[from..], scalar_at)?;
        drop(state);
        values.truncate(from);
        if !unique {
            index.insert(Arc::as_ptr(&node), out.len());
        }
        values.push(out.len());
        out.push(GNode { node, kind, movement });
        Ok(())
    }
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

/// What a node of state `state` is in the collected graph: a lazy node's operands are at
/// `operands` (in the order of [`Op::each_input`](crate::graph::Op::each_input)), an
/// inline scalar's entry at `scalar_at`.
fn entry(state: &State, operands: &[usize], scalar_at: Option<usize>) -> Result<(GKind, Option<Movement>)> {
    let at = |k: usize| -> Result<usize> {
        operands
            .get(k)
            .copied()
            .ok_or_else(|| Error::Internal("a graph operand was not collected".into()))
    };
    let all = || -> Inputs { operands.iter().copied().collect() };
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
                Op::Unary(u, _) => GKind::Op(OpCode::Unary(*u), smallvec::smallvec![at(0)?]),
                Op::Reduce(r, _) => GKind::Op(OpCode::Reduce(*r), smallvec::smallvec![at(0)?]),
                Op::Scan(spec, _) => GKind::Op(OpCode::Scan(*spec), smallvec::smallvec![at(0)?]),
                Op::Fft(spec, _) => GKind::Op(OpCode::Fft(*spec), smallvec::smallvec![at(0)?]),
                Op::Binary(b, _, _) => GKind::Op(OpCode::Binary(*b), smallvec::smallvec![at(0)?, at(1)?]),
                Op::WithScalar(b, _, s) => {
                    let scalar = scalar_at
                        .ok_or_else(|| Error::Internal("an inline scalar was not collected".into()))?;
                    let inputs = match s.side {
                        Side::Left => smallvec::smallvec![scalar, at(0)?],
                        Side::Right => smallvec::smallvec![at(0)?, scalar],
                    };
                    GKind::Op(OpCode::Binary(*b), inputs)
                }
                Op::MatMul(..) => GKind::Op(OpCode::MatMul, smallvec::smallvec![at(0)?, at(1)?]),
                Op::Take { spec, .. } => GKind::Op(OpCode::Take(*spec), smallvec::smallvec![at(0)?, at(1)?]),
                Op::Expr(t, _) => GKind::Op(OpCode::Expr(crate::graph::template::template_id(t)), all()),
                Op::Ternary(t, ..) => {
                    GKind::Op(OpCode::Ternary(*t), smallvec::smallvec![at(0)?, at(1)?, at(2)?])
                }
                Op::View(..) => GKind::Op(OpCode::View, smallvec::smallvec![at(0)?]),
                Op::Reshape(_) => GKind::Op(OpCode::Reshape, smallvec::smallvec![at(0)?]),
                Op::Region(..) => GKind::Op(OpCode::Region, all()),
                Op::FromIndex(spec, _) => GKind::Op(OpCode::FromIndex(*spec), all()),
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
