//! The lazy graph: untyped nodes that either hold device memory or describe how to
//! compute it. Recording a node never touches the device.

use std::panic::Location;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

pub(crate) mod eager;
pub(crate) mod op;
pub(crate) mod origin;
pub(crate) mod parts;
pub(crate) mod shape;
pub(crate) mod template;
pub(crate) mod view;

use crate::backend::buffer::DeviceBuffer;
use crate::backend::context::ContextInner;
use crate::dtype::DType;
use crate::error::Error;
pub use op::SearchSide;
pub use op::{BinaryOp, ReduceOp, TernaryOp, UnaryOp};
pub(crate) use op::{
    Draw, FftDevice, FftReal, FftSpec, IndexFn, InlineScalar, Op, ReduceSpec, ScanSpec, Side, TakeSpec,
};
pub(crate) use origin::{FlushOrigin, Origin};

/// Dimensions, stored inline up to rank 4 (no allocation for typical shapes).
pub(crate) type Shape = smallvec::SmallVec<[usize; 4]>;

/// A shared reference to a node.
pub(crate) type NodeRef = Arc<Node>;

/// One value of the graph: an n-dimensional array of one element type.
pub(crate) struct Node {
    pub(crate) ctx: Arc<ContextInner>,
    pub(crate) dtype: DType,
    pub(crate) shape: Shape,
    /// Recording failed (set at creation: a node never fails later), so operators can
    /// check without taking the state lock.
    pub(crate) failed: bool,
    /// Where the user's code recorded it: the caller of the public method that made it
    /// (`#[track_caller]` through the recording path), shown by `explain` and by a
    /// recording error.
    pub(crate) at: &'static Location<'static>,
    /// The node's place in the order nodes were made (process-wide): a node made before
    /// another cannot depend on it, which gradients rely on.
    pub(crate) serial: u64,
    /// The smallest serial among this node and everything it was computed from (when it
    /// was recorded): a node whose oldest ancestor is newer than another node cannot
    /// depend on it, which a gradient meeting a materialized array relies on.
    pub(crate) oldest_ancestor: u64,
    /// When its memory was last written in place outside the graph (a `#[kernel]`'s
    /// `&mut` argument, `assign`, `scatter_add`), as a serial; 0 if never. What wrote it
    /// is not known, so it may depend on any node made before then.
    written: AtomicU64,
    /// Gradients do not pass through this node (`Array::detach`): its value is a
    /// constant to them.
    pub(crate) stops_gradient: bool,
    state: Mutex<State>,
    /// The operation that computed the node, kept when it was materialized while its
    /// context records for gradients ([`ContextInner::keeps_recipes`]): a gradient
    /// reaches through it. (Otherwise materializing drops the operation and its inputs.)
    ///
    /// [`ContextInner::keeps_recipes`]: crate::backend::context::ContextInner::keeps_recipes
    recipe: OnceLock<Box<Op>>,
    /// The gradient rule the user gave this node (`Array::with_vjp`), which gradients
    /// use instead of its operation.
    rule: OnceLock<Arc<CustomRule>>,
}

/// A user's gradient rule for one node (`Array::with_vjp`): the arrays the node's value
/// depends on, and the cotangents of them given the node's.
pub(crate) struct CustomRule {
    pub(crate) inputs: Vec<NodeRef>,
    /// The cotangents of `inputs` given the node's (lazy arrays), or why not.
    #[allow(clippy::type_complexity)]
    pub(crate) pullback: Box<dyn Fn(&NodeRef) -> Result<Vec<NodeRef>, Error> + Send + Sync>,
    /// Where the user gave the rule.
    pub(crate) at: &'static Location<'static>,
}

/// The next node's [`Node::serial`].
static NEXT_SERIAL: AtomicU64 = AtomicU64::new(0);

/// Where a node's value is.
pub(crate) enum State {
    /// Materialized in device memory (elements in row-major order), and what wrote it.
    Ready(Arc<DeviceBuffer>, Origin),
    /// Not computed yet.
    Lazy(Op),
    /// Materialized across the devices of a multi-device context: rows of it on each
    /// ([`parts::Parts`]; only nodes of such a context, whose own device holds nothing).
    Parts(Arc<parts::Parts>),
    /// Recording failed (shape mismatch, ...); reported when materialized. (Boxed: an
    /// error is twice the size of an operation, and every node would carry it.)
    Failed(Box<Error>),
    /// Transitional while a node's children are being dropped.
    Dropped,
}

impl Node {
    #[track_caller]
    pub(crate) fn new(ctx: Arc<ContextInner>, dtype: DType, shape: Shape, state: State) -> NodeRef {
        Node::made_from(ctx, dtype, shape, state, &[])
    }

    /// [`Node::new`] of memory that device kernels outside the graph computed from
    /// `inputs` (a sort's, a selection's, a compaction's): its ancestors are theirs.
    #[track_caller]
    pub(crate) fn made_from(
        ctx: Arc<ContextInner>,
        dtype: DType,
        shape: Shape,
        state: State,
        inputs: &[&NodeRef],
    ) -> NodeRef {
        let failed = matches!(state, State::Failed(_));
        let serial = NEXT_SERIAL.fetch_add(1, Ordering::Relaxed);
        let mut oldest_ancestor = serial;
        if let State::Lazy(op) = &state {
            op.each_input(|i| oldest_ancestor = oldest_ancestor.min(i.ancestry_floor()));
        }
        for i in inputs {
            oldest_ancestor = oldest_ancestor.min(i.ancestry_floor());
        }
        let mut written = 0;
        if let State::Ready(_, origin) = &state {
            eager::note(origin);
            // (A copy of an array written in place: as unknown as what it copies.)
            if let Origin::WrittenBy(_) = origin {
                written = serial;
            }
        }
        Arc::new(Node {
            ctx,
            dtype,
            shape,
            failed,
            at: Location::caller(),
            serial,
            oldest_ancestor,
            written: AtomicU64::new(written),
            stops_gradient: false,
            state: Mutex::new(state),
            recipe: OnceLock::new(),
            rule: OnceLock::new(),
        })
    }

    /// A node with `source`'s value through which gradients do not pass
    /// (`Array::detach`): a reshape to the same shape, which planning reads as `source`.
    #[track_caller]
    pub(crate) fn detached(source: &NodeRef) -> NodeRef {
        let serial = NEXT_SERIAL.fetch_add(1, Ordering::Relaxed);
        Arc::new(Node {
            ctx: source.ctx.clone(),
            dtype: source.dtype,
            shape: source.shape.clone(),
            failed: source.failed,
            at: Location::caller(),
            serial,
            oldest_ancestor: source.ancestry_floor().min(serial),
            written: AtomicU64::new(0),
            stops_gradient: true,
            state: Mutex::new(match &*source.state() {
                State::Failed(e) => State::Failed(e.clone()),
                _ => State::Lazy(Op::Reshape(source.clone())),
            }),
            recipe: OnceLock::new(),
            rule: OnceLock::new(),
        })
    }

    pub(crate) fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Number of elements.
    /// The element count; `usize::MAX` for a shape whose count overflows (such a node is
    /// never computed: recording or materializing it is an error).
    pub(crate) fn numel(&self) -> usize {
        self.shape
            .iter()
            .try_fold(1usize, |acc, &d| acc.checked_mul(d))
            .unwrap_or(usize::MAX)
    }

    /// The device buffer, if materialized.
    pub(crate) fn buffer(&self) -> Option<Arc<DeviceBuffer>> {
        match &*self.state() {
            State::Ready(b, _) => Some(b.clone()),
            _ => None,
        }
    }

    /// Where the rows are, if materialized across devices.
    pub(crate) fn parts(&self) -> Option<Arc<parts::Parts>> {
        match &*self.state() {
            State::Parts(p) => Some(p.clone()),
            _ => None,
        }
    }

    /// Replaces the state with rows on several devices, releasing the inputs.
    pub(crate) fn set_parts(&self, parts: Arc<parts::Parts>) {
        let old = std::mem::replace(&mut *self.state(), State::Parts(parts));
        self.keep_or_drop(old);
    }

    /// Drops the state a node had before it was materialized, keeping its operation as
    /// the node's recipe while its context records for gradients.
    fn keep_or_drop(&self, old: State) {
        match old {
            State::Lazy(op) if self.ctx.keeps_recipes() => {
                let _ = self.recipe.set(Box::new(op));
            }
            old => drop_state(old),
        }
    }

    /// A view of this node through `map` (of the node's coordinates), with `shape`: the
    /// node itself where the map reads it element for element; a view of a view is one
    /// map over the original source.
    #[track_caller]
    pub(crate) fn view(self: &Arc<Self>, map: view::ViewMap, shape: Shape) -> NodeRef {
        if self.failed || map.is_identity(&self.shape, &shape) {
            return self.clone();
        }
        let (map, source) = match &*self.state() {
            State::Lazy(Op::View(inner, source)) => (map.then(inner), source.clone()),
            _ => (map, self.clone()),
        };
        if map.is_identity(&source.shape, &shape) {
            return source;
        }
        Node::new(
            self.ctx.clone(),
            self.dtype,
            shape,
            State::Lazy(Op::View(Arc::new(map), source)),
        )
    }

    /// What wrote the memory, if materialized.
    pub(crate) fn origin(&self) -> Option<Origin> {
        match &*self.state() {
            State::Ready(_, origin) => Some(origin.clone()),
            _ => None,
        }
    }

    /// Records that `origin` wrote the memory of this materialized node (in place).
    pub(crate) fn set_origin(&self, origin: Origin) {
        eager::note(&origin);
        if let Origin::WrittenBy(_) = origin {
            self.written
                .store(NEXT_SERIAL.fetch_add(1, Ordering::Relaxed), Ordering::Relaxed);
        }
        if let State::Ready(_, o) = &mut *self.state() {
            *o = origin;
        }
    }

    /// Replaces the state with a materialized buffer that `origin` wrote, releasing the
    /// inputs.
    pub(crate) fn set_ready(&self, buffer: Arc<DeviceBuffer>, origin: Origin) {
        eager::note(&origin);
        let old = std::mem::replace(&mut *self.state(), State::Ready(buffer, origin));
        self.keep_or_drop(old);
    }

    /// The serials of the nodes this one may depend on: `[floor, ceiling)`. From its
    /// oldest ancestor to itself; for memory written in place outside the graph, from 0
    /// to the write (what wrote it is not known).
    pub(crate) fn ancestry(&self) -> (u64, u64) {
        match self.written.load(Ordering::Relaxed) {
            0 => (self.oldest_ancestor, self.serial),
            w => (0, w.max(self.serial)),
        }
    }

    /// The oldest serial this node may depend on ([`Node::ancestry`]'s floor).
    fn ancestry_floor(&self) -> u64 {
        self.ancestry().0
    }

    /// Keeps `op` as how this materialized node was computed, for gradients (a reshape
    /// sharing its source's memory).
    pub(crate) fn keep_recipe(&self, op: Op) {
        let _ = self.recipe.set(Box::new(op));
    }

    /// Gives this node a gradient rule of the user's, used instead of its operation.
    pub(crate) fn set_rule(&self, rule: CustomRule) {
        let _ = self.rule.set(Arc::new(rule));
    }

    /// The gradient rule the user gave this node, if any.
    pub(crate) fn rule(&self) -> Option<Arc<CustomRule>> {
        self.rule.get().cloned()
    }

    /// The operation that computes this node: the lazy one, or the one kept when it was
    /// materialized ([`Node::recipe`]); `None` for memory that was uploaded, filled or
    /// computed without one kept.
    pub(crate) fn operation(&self) -> Option<Op> {
        if let State::Lazy(op) = &*self.state() {
            return Some(op.clone());
        }
        self.recipe.get().map(|op| (**op).clone())
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        let state = std::mem::replace(
            self.state.get_mut().unwrap_or_else(|e| e.into_inner()),
            State::Dropped,
        );
        drop_state(state);
        if let Some(op) = self.recipe.take() {
            drop_state(State::Lazy(*op));
        }
    }
}

/// Drops a state without recursion: a 10,000-node chain must not overflow the stack.
fn drop_state(state: State) {
    let State::Lazy(op) = state else { return };
    // Inline capacity: dropping a typical small graph allocates nothing.
    let mut stack: smallvec::SmallVec<[NodeRef; 8]> = smallvec::SmallVec::new();
    push_inputs(op, &mut stack);
    while let Some(node) = stack.pop() {
        if let Some(mut inner) = Arc::into_inner(node) {
            let st = std::mem::replace(
                inner.state.get_mut().unwrap_or_else(|e| e.into_inner()),
                State::Dropped,
            );
            if let State::Lazy(op) = st {
                push_inputs(op, &mut stack);
            }
            if let Some(op) = inner.recipe.take() {
                push_inputs(*op, &mut stack);
            }
            // `inner` drops here with state Dropped: no recursion.
        }
    }
}

fn push_inputs(op: Op, stack: &mut smallvec::SmallVec<[NodeRef; 8]>) {
    op::each_operand!(op, |a| stack.push(a))
}
