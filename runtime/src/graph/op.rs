//! How a lazy node is computed: its operation ([`Op`]) over its operands, and the kinds
//! an operation carries (elementwise, reduction, scan, take, random, an inline scalar).

use std::sync::Arc;

use super::{template, view, NodeRef};
use crate::dtype::{DType, ScalarBits};

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
    /// A complex number's conjugate.
    Conj,
    /// A complex number's real part.
    Re,
    /// A complex number's imaginary part.
    Im,
    /// A complex number's argument (its angle, in `(-π, π]`).
    Arg,
    /// A complex number's squared magnitude, `re² + im²`.
    NormSqr,
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
    /// The complex number with these real and imaginary parts.
    Complex,
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
            BinaryOp::Complex => "complex",
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

    /// ArgMin and ArgMax produce [`Index`](crate::Index) positions (`uint` in kernels).
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

/// One pass of a Fourier transform along `axis` (of length `n`), as Stockham's
/// algorithm with a large radix computes it: the transform of length `n` is `n = R₁ R₂ …`,
/// its passes in order, and this pass, of radix `radix`, follows passes whose radices
/// multiply to `done`. It takes the `radix`-point transform of the elements `j + r n /
/// radix` (`r < radix`) for every `j < n / radix`, each first turned by the twiddle
/// `w^((j mod done) r)` (`w = e^(∓2πi / (done radix))`), and stores them at `(j div
/// done) done radix + j mod done + r done`: after the last pass (`done radix = n`) the
/// elements are the transform in order (`api::fft` records the passes). A pass of a
/// real signal's transform ([`FftReal`]) is the whole transform in one pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct FftSpec {
    pub(crate) axis: usize,
    pub(crate) radix: u32,
    pub(crate) done: u32,
    /// The inverse transform's sign (`e^(+2πi/n)`), without its `1/n`.
    pub(crate) inverse: bool,
    /// What the pass's layout needs of the device (`plan::fft::fft_plan`).
    pub(crate) device: FftDevice,
    pub(crate) real: FftReal,
}

/// What a transform pass's layout needs of its device.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct FftDevice {
    /// Local memory in bytes: how many vectors one work-group takes.
    pub(crate) local_bytes: u32,
    /// The largest work-group.
    pub(crate) max_group: u32,
}

/// A transform of `n = 2m` real samples as one of `m` complex points, `z_k = x_(2k) + i
/// x_(2k+1)` (numpy's `rfft` and `irfft` of even lengths whose half is one pass): the
/// pass splits or joins the halves' transforms in local memory, `X_k = (Z_k +
/// conj(Z_(m-k))) / 2 - (i/2) e^(-2πi k/n) (Z_k - conj(Z_(m-k)))`, so that it does half a
/// complex transform's work. Such a pass has `done = 1` and `radix = m`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum FftReal {
    /// Complex points in and out.
    No,
    /// In: the points `z_k` (the operand is `m + 1` long along the axis; its last element
    /// is never read); out: `X_0 ..= X_m`, the first half of the samples' transform.
    Forward,
    /// In: `X_0 ..= X_m`, the first half of a real signal's transform (the operand is
    /// padded to `2m`; the imaginary parts of `X_0` and `X_m` are ignored); out: the `2m`
    /// real samples, unscaled (`2m` times numpy's `irfft`).
    Inverse,
}

/// How `indices` pick elements of `data` along `axis`, clamped into it (numpy's
/// `mode='clip'`): the whole index array at each position of the other axes (`take`,
/// shape `data[..axis] ++ indices ++ data[axis + 1..]`), or one index per position of an
/// index array of `data`'s rank (`take_along_axis`, the shapes broadcast but along `axis`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct TakeSpec {
    pub(crate) axis: usize,
    pub(crate) along: bool,
    /// Instead of loading at the index, a binary search along the axis for the
    /// "index" operand's value, giving its insertion position (`searchsorted`; the
    /// node's element type is then `Index`).
    pub(crate) search: Option<SearchSide>,
}

impl TakeSpec {
    /// The search as a small number: 0 none (a load), 1 left, 2 right.
    pub(crate) fn search_code(&self) -> u8 {
        match self.search {
            None => 0,
            Some(SearchSide::Left) => 1,
            Some(SearchSide::Right) => 2,
        }
    }
}

/// Which insertion position `searchsorted` gives for a value equal to elements of the
/// sorted array (numpy's `side`).
///
/// ```
/// # use lazycl::prelude::*;
/// # fn main() -> lazycl::Result<()> {
/// let ctx = Context::new()?;
/// let sorted = ctx.from_slice(&[1.0f32, 2.0, 2.0, 3.0])?;
/// let v = ctx.from_slice(&[2.0f32])?;
/// assert_eq!(sorted.searchsorted(&v, SearchSide::Left).to_vec()?, [1]);
/// assert_eq!(sorted.searchsorted(&v, SearchSide::Right).to_vec()?, [3]);
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SearchSide {
    /// Before the equal elements: the first position `i` with `v <= sorted[i]`.
    Left,
    /// After the equal elements: the first position `i` with `v < sorted[i]`.
    Right,
}

/// What a node computed from its index ([`Op::FromIndex`]) gives at row-major index `i`
/// of its own shape, in its element type. Its operands are scalars, kernel arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum IndexFn {
    /// Random numbers drawn as [`Draw`] (`api::random`): the operands are `u64` scalars,
    /// the seed and the stream's offset, and for [`Draw::Integers`] the range's low end
    /// and length in the element type's unsigned type, so a new seed builds nothing.
    Random(Draw),
    /// `i` itself, converted to the element type (XLA's `iota`; `api::sequences` builds
    /// `arange`, `linspace`, `eye` and `one_hot` from it): no operands.
    Position,
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

/// Calls `$f` with each operand of `$op`, in the order of [`Op::inputs`]: by reference
/// for an `&Op`, by value for an `Op` (dropping a chain takes its operands uncloned).
macro_rules! each_operand {
    ($op:expr, $f:expr) => {{
        let mut f = $f;
        match $op {
            Op::Scalar(_) => {}
            Op::Unary(_, a)
            | Op::Reduce(_, a)
            | Op::Scan(_, a)
            | Op::Fft(_, a)
            | Op::View(_, a)
            | Op::Reshape(a)
            | Op::WithScalar(_, a, _) => f(a),
            Op::Binary(_, a, b)
            | Op::MatMul(a, b)
            | Op::Take {
                data: a, indices: b, ..
            } => {
                f(a);
                f(b);
            }
            Op::Ternary(_, a, b, c) => {
                f(a);
                f(b);
                f(c);
            }
            Op::Expr(_, ops) | Op::Region(_, ops) | Op::FromIndex(_, ops) => ops.into_iter().for_each(f),
        }
    }};
}
pub(crate) use each_operand;

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
    /// One pass of a Fourier transform of complex elements along an axis ([`FftSpec`]).
    Fft(FftSpec, NodeRef),
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
    /// An array with no memory of its own, computed where it is read: the element at
    /// row-major index `i` of this node's shape is a function of the operands (scalars)
    /// and `i` alone ([`IndexFn`]: counter-based random numbers, or `i` itself).
    FromIndex(IndexFn, smallvec::SmallVec<[NodeRef; 4]>),
}

impl Op {
    /// The operands, in the order every walk of the graph uses.
    pub(crate) fn inputs(&self) -> smallvec::SmallVec<[&NodeRef; 3]> {
        let mut inputs = smallvec::SmallVec::new();
        self.each_input(|a| inputs.push(a));
        inputs
    }

    /// Calls `f` with each operand, in the order of [`Op::inputs`] (no list built).
    pub(crate) fn each_input<'a>(&'a self, f: impl FnMut(&'a NodeRef)) {
        each_operand!(self, f)
    }

    /// This operation over other operands: `inputs` in the order of [`Op::inputs`].
    pub(crate) fn with_inputs(&self, inputs: &[NodeRef]) -> Op {
        let at = |k: usize| inputs[k].clone();
        match self {
            Op::Scalar(bits) => Op::Scalar(*bits),
            Op::Unary(u, _) => Op::Unary(*u, at(0)),
            Op::Reduce(r, _) => Op::Reduce(*r, at(0)),
            Op::Scan(s, _) => Op::Scan(*s, at(0)),
            Op::Fft(s, _) => Op::Fft(*s, at(0)),
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
            Op::FromIndex(r, _) => Op::FromIndex(*r, inputs.iter().cloned().collect()),
        }
    }
}
