//! The lazy graph: untyped nodes that either hold device memory or describe how to
//! compute it. Recording a node never touches the device.

use std::sync::{Arc, Mutex, MutexGuard};

pub(crate) mod origin;
pub(crate) mod parts;
pub(crate) mod shape;
pub(crate) mod template;
pub(crate) mod view;

use crate::backend::buffer::DeviceBuffer;
use crate::backend::context::ContextInner;
use crate::dtype::{DType, ScalarBits};
use crate::error::Error;
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
    state: Mutex<State>,
}

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

/// Elementwise unary operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum UnaryOp {
    Neg,
    Not,
    Sqrt,
    Exp,
    Exp2,
    Ln,
    Log2,
    Log10,
    Sin,
    Cos,
    Tan,
    Tanh,
    Asin,
    Acos,
    Atan,
    Sinh,
    Cosh,
    Asinh,
    Acosh,
    Atanh,
    Cbrt,
    Erf,
    Erfc,
    Ln1p,
    ExpM1,
    Lgamma,
    Tgamma,
    Abs,
    Floor,
    Ceil,
    Round,
    Trunc,
    Signum,
    Cast,
}

/// Elementwise binary operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Min,
    Max,
    Pow,
    PowI,
    Atan2,
    Hypot,
    BitAnd,
    BitOr,
    BitXor,
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
}

impl BinaryOp {
    /// The operation as the user wrote it, for error messages.
    pub fn user_name(self) -> &'static str {
        match self {
            BinaryOp::Add => "`+`",
            BinaryOp::Sub => "`-`",
            BinaryOp::Mul => "`*`",
            BinaryOp::Div => "`/`",
            BinaryOp::Rem => "`%`",
            BinaryOp::Min => "minimum",
            BinaryOp::Max => "maximum",
            BinaryOp::Pow => "powf",
            BinaryOp::PowI => "powi",
            BinaryOp::Atan2 => "atan2",
            BinaryOp::Hypot => "hypot",
            BinaryOp::BitAnd => "`&`",
            BinaryOp::BitOr => "`|`",
            BinaryOp::BitXor => "`^`",
            BinaryOp::Lt => "lt",
            BinaryOp::Le => "le",
            BinaryOp::Gt => "gt",
            BinaryOp::Ge => "ge",
            BinaryOp::Eq => "eq",
            BinaryOp::Ne => "ne",
        }
    }

    /// Comparisons produce `bool`.
    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge | BinaryOp::Eq | BinaryOp::Ne
        )
    }
}

/// Elementwise ternary operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TernaryOp {
    /// `mask ? a : b`.
    Select,
    /// `a * b + c` with one rounding.
    MulAdd,
    /// `x` limited to `[lo, hi]`.
    Clamp,
}

impl TernaryOp {
    /// The operation as the user wrote it, for error messages.
    pub fn user_name(self) -> &'static str {
        match self {
            TernaryOp::Select => "select",
            TernaryOp::MulAdd => "mul_add",
            TernaryOp::Clamp => "clamp",
        }
    }
}

/// Reductions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    /// Sum (wrapping for integers, compensated for floats).
    Sum,
    /// Product (wrapping for integers).
    Prod,
    /// Smallest element (NaN ignored, as by `nanmin`: NaN only if all are NaN).
    Min,
    /// Largest element (NaN ignored, as by `nanmax`: NaN only if all are NaN).
    Max,
    /// Arithmetic mean (floats).
    Mean,
    /// Index of the first smallest element (NaN ignored; 0 if all are NaN).
    ArgMin,
    /// Index of the first largest element (NaN ignored; 0 if all are NaN).
    ArgMax,
}

impl ReduceOp {
    /// Sum and Mean are linear: a reduction of a matrix product along one of its matrix
    /// axes is the product with that operand reduced (`api::matmul`).
    pub fn is_linear(self) -> bool {
        matches!(self, ReduceOp::Sum | ReduceOp::Mean)
    }

    /// ArgMin and ArgMax produce `u64` indices.
    pub fn is_arg(self) -> bool {
        matches!(self, ReduceOp::ArgMin | ReduceOp::ArgMax)
    }
}

/// A reduction over some axes of its input (bit `d` of `axes` set: axis `d` is reduced).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct ReduceSpec {
    pub(crate) op: ReduceOp,
    pub(crate) axes: u64,
}

/// A scan along one axis: element `i` along it combines the elements `0..=i` (`..i`
/// when `exclusive`, the first being the operation's identity). `op` is `Sum` or `Prod`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct ScanSpec {
    pub(crate) op: ReduceOp,
    pub(crate) axis: usize,
    pub(crate) exclusive: bool,
}

/// How `indices` pick elements of `data` along `axis`, clamped into it (numpy's
/// `mode='clip'`): the whole index array at each position of the other axes (`take`,
/// shape `data[..axis] ++ indices ++ data[axis + 1..]`), or one index per position of an
/// index array of `data`'s rank (`take_along_axis`, the shapes broadcast but along `axis`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct TakeSpec {
    pub(crate) axis: usize,
    pub(crate) along: bool,
}

/// What a random node draws (`api::random`): the distribution; the element type is the
/// node's. Its operands are `u64` scalars, the seed and the stream's offset, and for
/// [`Draw::Integers`] the range's low end and length in the element type's unsigned
/// type: all kernel arguments, so a new seed builds nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct RandomSpec {
    pub(crate) draw: Draw,
}

/// How a random element is drawn (`lazycl-clc`'s table of the bit layouts).
pub(crate) use crate::dtype::Draw;

/// A host scalar operand stored in its operation's node ([`Op::WithScalar`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct InlineScalar {
    pub(crate) bits: ScalarBits,
    pub(crate) dtype: DType,
    pub(crate) side: Side,
}

/// Which operand of a binary operation the scalar is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Side {
    Left,
    Right,
}

/// How a lazy node is computed from its inputs.
#[derive(Clone)]
pub(crate) enum Op {
    /// A host scalar: becomes a by-value kernel argument.
    Scalar(ScalarBits),
    Unary(UnaryOp, NodeRef),
    Binary(BinaryOp, NodeRef, NodeRef),
    /// A binary operation between an array and a host scalar stored inline (`&x * 2.0`,
    /// `2.0 - &x`): one node where a scalar node of its own would make two. Collecting
    /// gives the scalar an entry of its own, so planning sees what it sees for a scalar
    /// node.
    WithScalar(BinaryOp, NodeRef, InlineScalar),
    Ternary(TernaryOp, NodeRef, NodeRef, NodeRef),
    Reduce(ReduceSpec, NodeRef),
    Scan(ScanSpec, NodeRef),
    /// An `expr!` over any number of operands.
    Expr(&'static template::ExprTemplate, smallvec::SmallVec<[NodeRef; 4]>),
    /// A view of its source through an index map (never a view of a view: maps compose
    /// when recorded).
    View(Arc<view::ViewMap>, NodeRef),
    /// The source's elements in row-major order, with this node's shape (same count).
    Reshape(NodeRef),
    /// Elements picked from several sources by position (`concatenate`, `pad`).
    Region(Arc<view::Region>, smallvec::SmallVec<[NodeRef; 4]>),
    /// The matrix product of `[.., m, k]` and `[.., k, n]` (batch axes broadcast),
    /// `[.., m, n]`.
    MatMul(NodeRef, NodeRef),
    /// Elements of `data` picked along an axis by `indices` ([`TakeSpec`]).
    Take {
        spec: TakeSpec,
        data: NodeRef,
        indices: NodeRef,
    },
    /// Counter-based random numbers (Philox4x32-10) with no memory of their own: the
    /// element at row-major index `i` of this node's shape is a function of the operands
    /// (seed, offset, and an integer range: scalars) and `i` alone ([`RandomSpec`]).
    Random(RandomSpec, smallvec::SmallVec<[NodeRef; 4]>),
}

impl Op {
    pub(crate) fn inputs(&self) -> smallvec::SmallVec<[&NodeRef; 3]> {
        match self {
            Op::Scalar(_) => smallvec::smallvec![],
            Op::Unary(_, a)
            | Op::Reduce(_, a)
            | Op::Scan(_, a)
            | Op::View(_, a)
            | Op::Reshape(a)
            | Op::WithScalar(_, a, _) => smallvec::smallvec![a],
            Op::Binary(_, a, b) | Op::MatMul(a, b) => smallvec::smallvec![a, b],
            Op::Take { data, indices, .. } => smallvec::smallvec![data, indices],
            Op::Ternary(_, a, b, c) => smallvec::smallvec![a, b, c],
            Op::Expr(_, ops) | Op::Region(_, ops) | Op::Random(_, ops) => ops.iter().collect(),
        }
    }
}

impl Op {
    /// Calls `f` with each operand, in the order of [`Op::inputs`] (no list built).
    pub(crate) fn each_input(&self, mut f: impl FnMut(&NodeRef)) {
        match self {
            Op::Scalar(_) => {}
            Op::Unary(_, a)
            | Op::Reduce(_, a)
            | Op::Scan(_, a)
            | Op::View(_, a)
            | Op::Reshape(a)
            | Op::WithScalar(_, a, _) => f(a),
            Op::Binary(_, a, b) | Op::MatMul(a, b) => {
                f(a);
                f(b);
            }
            Op::Take { data, indices, .. } => {
                f(data);
                f(indices);
            }
            Op::Ternary(_, a, b, c) => {
                f(a);
                f(b);
                f(c);
            }
            Op::Expr(_, ops) | Op::Region(_, ops) | Op::Random(_, ops) => ops.iter().for_each(f),
        }
    }

    /// This operation over other operands: `inputs` in the order of [`Op::inputs`].
    pub(crate) fn with_inputs(&self, inputs: &[NodeRef]) -> Op {
        let at = |k: usize| inputs[k].clone();
        match self {
            Op::Scalar(bits) => Op::Scalar(*bits),
            Op::Unary(u, _) => Op::Unary(*u, at(0)),
            Op::Reduce(r, _) => Op::Reduce(*r, at(0)),
            Op::Scan(s, _) => Op::Scan(*s, at(0)),
            Op::View(m, _) => Op::View(m.clone(), at(0)),
            Op::Reshape(_) => Op::Reshape(at(0)),
            Op::WithScalar(b, _, s) => Op::WithScalar(*b, at(0), *s),
            Op::Binary(b, _, _) => Op::Binary(*b, at(0), at(1)),
            Op::MatMul(_, _) => Op::MatMul(at(0), at(1)),
            Op::Take { spec, .. } => Op::Take {
                spec: *spec,
                data: at(0),
                indices: at(1),
            },
            Op::Ternary(t, _, _, _) => Op::Ternary(*t, at(0), at(1), at(2)),
            Op::Expr(t, _) => Op::Expr(t, inputs.iter().cloned().collect()),
            Op::Region(r, _) => Op::Region(r.clone(), inputs.iter().cloned().collect()),
            Op::Random(r, _) => Op::Random(*r, inputs.iter().cloned().collect()),
        }
    }
}

impl Node {
    pub(crate) fn new(ctx: Arc<ContextInner>, dtype: DType, shape: Shape, state: State) -> NodeRef {
        let failed = matches!(state, State::Failed(_));
        Arc::new(Node {
            ctx,
            dtype,
            shape,
            failed,
            state: Mutex::new(state),
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
        drop_state(old);
    }

    /// A view of this node through `map` (of the node's coordinates), with `shape`: the
    /// node itself where the map reads it element for element; a view of a view is one
    /// map over the original source.
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
        if let State::Ready(_, o) = &mut *self.state() {
            *o = origin;
        }
    }

    /// Replaces the state with a materialized buffer that `origin` wrote, releasing the
    /// inputs.
    pub(crate) fn set_ready(&self, buffer: Arc<DeviceBuffer>, origin: Origin) {
        let old = std::mem::replace(&mut *self.state(), State::Ready(buffer, origin));
        drop_state(old);
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        let state = std::mem::replace(
            self.state.get_mut().unwrap_or_else(|e| e.into_inner()),
            State::Dropped,
        );
        drop_state(state);
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
            // `inner` drops here with state Dropped: no recursion.
        }
    }
}

fn push_inputs(op: Op, stack: &mut smallvec::SmallVec<[NodeRef; 8]>) {
    match op {
        Op::Scalar(_) => {}
        Op::Unary(_, a)
        | Op::Reduce(_, a)
        | Op::Scan(_, a)
        | Op::View(_, a)
        | Op::Reshape(a)
        | Op::WithScalar(_, a, _) => stack.push(a),
        // (Pushed one by one: `extend` costs more than the pushes for two or three.)
        Op::Binary(_, a, b)
        | Op::MatMul(a, b)
        | Op::Take {
            data: a, indices: b, ..
        } => {
            stack.push(a);
            stack.push(b);
        }
        Op::Ternary(_, a, b, c) => {
            stack.push(a);
            stack.push(b);
            stack.push(c);
        }
        Op::Expr(_, ops) | Op::Region(_, ops) | Op::Random(_, ops) => stack.extend(ops),
    }
}
