//! Recording: methods on [`Array`] add nodes to the lazy graph (its operators, in
//! `operators`, call them). Nothing
//! here talks to the device. A shape mismatch is recorded in the result and reported
//! (naming both shapes) by the next call that materializes it.

use std::sync::Arc;

use crate::api::array::Array;
use crate::backend::context::ContextInner;
use crate::dtype::{Arithmetic, Element, Float, Inexact, Integer, Numeric};
use crate::dtype::{DType, ScalarBits};
use crate::error::{Error, Result};
use crate::graph::shape::broadcast;
use crate::graph::{BinaryOp, InlineScalar, Node, NodeRef, Op, Side, State, TernaryOp, UnaryOp};

/// A value usable as an operand next to an `Array<T>`: another `Array<T>` (owned or
/// borrowed) or a scalar `T`, which becomes a by-value kernel argument.
pub trait Operand<T: Element> {
    /// The operand as an array of the given context (scalars become 0-d lazy arrays).
    #[doc(hidden)]
    fn into_array(self, ctx: CtxRef<'_>) -> Array<T>;

    /// The operand's bits if it is a host scalar: operators store it inline in their
    /// node ([`Op::WithScalar`]) instead of recording a node for it.
    #[doc(hidden)]
    #[track_caller]
    fn scalar_bits(&self) -> Option<ScalarBits> {
        None
    }
}

/// A borrowed context, as [`Operand`] needs it. Opaque.
#[doc(hidden)]
#[derive(Clone, Copy)]
pub struct CtxRef<'a>(pub(crate) &'a Arc<ContextInner>);

impl<T: Element> Operand<T> for T {
    #[track_caller]
    fn into_array(self, ctx: CtxRef<'_>) -> Array<T> {
        Array::lazy(ctx.0, Vec::new(), Op::Scalar(self.to_arg_bits()))
    }

    #[track_caller]
    fn scalar_bits(&self) -> Option<ScalarBits> {
        Some(self.to_arg_bits())
    }
}
impl<T: Element> Operand<T> for &Array<T> {
    #[track_caller]
    fn into_array(self, _: CtxRef<'_>) -> Array<T> {
        self.clone()
    }
}
impl<T: Element> Operand<T> for Array<T> {
    #[track_caller]
    fn into_array(self, _: CtxRef<'_>) -> Array<T> {
        self
    }
}

/// The recording error of a node, if recording it failed.
#[track_caller]
pub(crate) fn failure(node: &NodeRef) -> Option<Error> {
    if !node.failed {
        return None;
    }
    match &*node.state() {
        State::Failed(e) => Some((**e).clone()),
        _ => None,
    }
}

/// `node` converted to element type `to`: a lazy cast, or `node` itself where it has that
/// type already. The untyped form of [`Array::cast`], for the operations that compute a
/// type narrower than 32 bits in a wider one ([`DType::compute`]).
#[track_caller]
pub(crate) fn cast_node(node: &NodeRef, to: DType) -> NodeRef {
    if node.dtype == to {
        return node.clone();
    }
    let state = match failure(node) {
        Some(e) => State::Failed(Box::new(e)),
        None => State::Lazy(Op::Unary(UnaryOp::Cast, node.clone())),
    };
    Node::new(node.ctx.clone(), to, node.shape.clone(), state)
}

/// Records `op` over `inputs` with numpy broadcasting; failures are kept in the result,
/// naming the operation as `name` (the user's name for it) says.
#[track_caller]
pub(crate) fn record<R: Element>(
    name: &dyn Fn() -> String,
    inputs: &[&NodeRef],
    op: impl FnOnce() -> Op,
) -> Array<R> {
    let ctx = &inputs[0].ctx;
    let mut shape = crate::graph::Shape::from_slice(&inputs[0].shape);
    for n in inputs {
        if let Some(e) = failure(n) {
            return Array::failed(ctx, shape, e);
        }
    }
    for n in &inputs[1..] {
        if let Err(e) = ctx
            .tag
            .check(&n.ctx.tag, name, || format!("an operand of shape {:?}", n.shape))
        {
            return Array::failed(ctx, shape, e);
        }
        match broadcast(&shape, &n.shape) {
            Some(s) => shape = s,
            None => {
                let e = Error::ShapeMismatch {
                    op: name(),
                    left: shape.to_vec(),
                    right: n.shape.to_vec(),
                    why: Error::BROADCAST.into(),
                };
                return Array::failed(ctx, shape, e);
            }
        }
    }
    Array::lazy(ctx, shape, op())
}

impl<T: Element> Array<T> {
    /// The error recording this array failed with, if it did.
    #[track_caller]
    pub(crate) fn recording_error(&self) -> Option<Error> {
        failure(&self.node)
    }

    /// A copy of this array's elements in row-major order, in memory of its own (lazy:
    /// one copy kernel when materialized, fused with whatever computes this array). What
    /// a view needs before it is passed to a `#[kernel]`.
    #[track_caller]
    pub fn to_contiguous(&self) -> Array<T> {
        if self.node.failed {
            return self.clone();
        }
        Array::lazy(
            &self.node.ctx,
            self.node.shape.clone(),
            Op::Unary(UnaryOp::Cast, self.node.clone()),
        )
    }

    #[track_caller]
    pub(super) fn unary<R: Element>(&self, op: UnaryOp) -> Array<R> {
        record(&|| format!("{op:?}").to_lowercase(), &[&self.node], || {
            Op::Unary(op, self.node.clone())
        })
    }

    #[track_caller]
    pub(super) fn binary<U: Element, R: Element>(&self, op: BinaryOp, other: Array<U>) -> Array<R> {
        record(&|| op.user_name().into(), &[&self.node, &other.node], || {
            Op::Binary(op, self.node.clone(), other.node.clone())
        })
    }

    /// `op` between this array and `other`, a host scalar stored inline.
    #[track_caller]
    pub(super) fn binary_with<U: Element, R: Element>(
        &self,
        op: BinaryOp,
        other: impl Operand<U>,
    ) -> Array<R> {
        match other.scalar_bits() {
            Some(bits) => self.with_scalar(op, bits, U::DTYPE, Side::Right),
            None => self.binary(op, other.into_array(CtxRef(&self.node.ctx))),
        }
    }

    /// `op` between this array and a host scalar of type `dtype` on the `side` given.
    #[track_caller]
    pub(super) fn with_scalar<R: Element>(
        &self,
        op: BinaryOp,
        bits: ScalarBits,
        dtype: DType,
        side: Side,
    ) -> Array<R> {
        let scalar = InlineScalar { bits, dtype, side };
        record(&|| op.user_name().into(), &[&self.node], || {
            Op::WithScalar(op, self.node.clone(), scalar)
        })
    }

    #[track_caller]
    fn ternary<R: Element>(&self, op: TernaryOp, b: &NodeRef, c: &NodeRef) -> Array<R> {
        record(&|| op.user_name().into(), &[&self.node, b, c], || {
            Op::Ternary(op, self.node.clone(), b.clone(), c.clone())
        })
    }

    /// Converts each element with Rust's `as` semantics (float to int saturates, NaN → 0).
    /// A real number becomes a complex one with a zero imaginary part; a complex array
    /// converts only to the other complex type (a cast to a real type is an error naming
    /// this line: take `re()`, `im()` or `abs()`).
    #[track_caller]
    pub fn cast<U: Element>(&self) -> Array<U> {
        if T::DTYPE == U::DTYPE {
            return Array::from_node(self.node.clone());
        }
        if T::DTYPE.is_complex() && !U::DTYPE.is_complex() {
            let e = Error::InvalidCast {
                from: T::DTYPE,
                to: U::DTYPE,
                at: std::panic::Location::caller().to_string(),
                reason: "a complex number has no real value of its own: take its `re()`, `im()` or `abs()`"
                    .into(),
            };
            return Array::failed(&self.node.ctx, self.shape().to_vec(), e);
        }
        self.unary(UnaryOp::Cast)
    }

    /// This array stretched to `shape` by broadcasting (numpy's rules; lazy, a view:
    /// no copy is made).
    #[track_caller]
    pub fn broadcast_to(&self, shape: &[usize]) -> Array<T> {
        match broadcast(&self.node.shape, shape) {
            Some(s) if s[..] == shape[..] => {
                if s[..] == self.node.shape[..] {
                    return self.clone();
                }
                let off = shape.len() - self.ndim();
                let axes = self
                    .shape()
                    .iter()
                    .enumerate()
                    .map(|(k, &n)| crate::graph::view::SourceAxis {
                        from: (n != 1 || shape[k + off] == 1).then_some(k + off),
                        start: 0,
                        step: 1,
                    })
                    .collect();
                self.view(crate::graph::view::ViewMap { axes }, s)
            }
            _ => Array::failed(
                &self.node.ctx,
                shape.to_vec(),
                Error::ShapeMismatch {
                    op: "broadcast_to".into(),
                    left: self.node.shape.to_vec(),
                    right: shape.to_vec(),
                    why: "do not fit: the first cannot be broadcast to the second (trailing axes must be equal, or 1 in the first)".into(),
                },
            ),
        }
    }

    /// `self == other`, elementwise.
    pub fn eq(&self, other: impl Operand<T>) -> Array<bool> {
        self.binary_with(BinaryOp::Eq, other)
    }
    /// `self != other`, elementwise.
    pub fn ne(&self, other: impl Operand<T>) -> Array<bool> {
        self.binary_with(BinaryOp::Ne, other)
    }
}

/// Comparisons of ordered element types (every one but the complex types).
impl<T: Element + PartialOrd> Array<T> {
    /// `self < other`, elementwise.
    #[track_caller]
    pub fn lt(&self, other: impl Operand<T>) -> Array<bool> {
        self.binary_with(BinaryOp::Lt, other)
    }
    /// `self <= other`, elementwise.
    #[track_caller]
    pub fn le(&self, other: impl Operand<T>) -> Array<bool> {
        self.binary_with(BinaryOp::Le, other)
    }
    /// `self > other`, elementwise.
    #[track_caller]
    pub fn gt(&self, other: impl Operand<T>) -> Array<bool> {
        self.binary_with(BinaryOp::Gt, other)
    }
    /// `self >= other`, elementwise.
    #[track_caller]
    pub fn ge(&self, other: impl Operand<T>) -> Array<bool> {
        self.binary_with(BinaryOp::Ge, other)
    }
}

impl Array<bool> {
    /// `if self { a } else { b }`, elementwise (with broadcasting).
    #[track_caller]
    pub fn select<T: Element>(&self, a: impl Operand<T>, b: impl Operand<T>) -> Array<T> {
        let a = a.into_array(CtxRef(&self.node.ctx));
        let b = b.into_array(CtxRef(&self.node.ctx));
        self.ternary(TernaryOp::Select, &a.node, &b.node)
    }
}

/// `if mask { a } else { b }`, elementwise (with broadcasting).
#[track_caller]
pub fn select<T: Element>(mask: &Array<bool>, a: impl Operand<T>, b: impl Operand<T>) -> Array<T> {
    mask.select(a, b)
}

macro_rules! unary_methods {
    ($($(#[$doc:meta])* $name:ident => $op:ident),* $(,)?) => {
        $( $(#[$doc])* pub fn $name(&self) -> Array<T> { self.unary(UnaryOp::$op) } )*
    };
}

/// Math on float and complex arrays (names and semantics of `f32`/`f64` and
/// `num_complex`'s methods; a complex number's on the principal branch).
impl<T: Inexact> Array<T> {
    unary_methods! {
        /// Square root.
        sqrt => Sqrt,
        /// `e^x`.
        exp => Exp,
        /// Natural logarithm.
        ln => Ln,
    }

    /// `self^exp` with a real exponent (a complex number's: `|z|^p e^(i p arg z)`, and 1
    /// for `p = 0`).
    #[track_caller]
    pub fn powf(&self, exp: impl Operand<T::Real>) -> Array<T> {
        self.binary_with(BinaryOp::Pow, exp)
    }
}

/// Math on floating-point arrays (names and semantics of `f32`/`f64` methods).
impl<T: Float> Array<T> {
    unary_methods! {
        /// `2^x`.
        exp2 => Exp2,
        /// Base-2 logarithm.
        log2 => Log2,
        /// Base-10 logarithm.
        log10 => Log10,
        /// Sine.
        sin => Sin,
        /// Cosine.
        cos => Cos,
        /// Tangent.
        tan => Tan,
        /// Hyperbolic tangent.
        tanh => Tanh,
        /// Arcsine.
        asin => Asin,
        /// Arccosine.
        acos => Acos,
        /// Arctangent.
        atan => Atan,
        /// Hyperbolic sine.
        sinh => Sinh,
        /// Hyperbolic cosine.
        cosh => Cosh,
        /// Inverse hyperbolic sine.
        asinh => Asinh,
        /// Inverse hyperbolic cosine (NaN below 1).
        acosh => Acosh,
        /// Inverse hyperbolic tangent (NaN outside `[-1, 1]`, infinite at ±1).
        atanh => Atanh,
        /// Cube root (of negatives too).
        cbrt => Cbrt,
        /// `ln(1 + x)`, accurate for `x` near 0 (numpy's `log1p`).
        ln_1p => Ln1p,
        /// `e^x - 1`, accurate for `x` near 0 (numpy's `expm1`).
        exp_m1 => ExpM1,
        /// The error function (`scipy.special.erf`).
        erf => Erf,
        /// The complementary error function `1 - erf(x)`, accurate where `erf` is near 1.
        erfc => Erfc,
        /// The natural logarithm of `|Γ(x)|` (C's `lgamma`, `scipy.special.gammaln`).
        lgamma => Lgamma,
        /// The gamma function `Γ(x)` (C's `tgamma`, `scipy.special.gamma`).
        tgamma => Tgamma,
        /// Largest integer not above.
        floor => Floor,
        /// Smallest integer not below.
        ceil => Ceil,
        /// Nearest integer, halves away from zero.
        round => Round,
        /// Integer part.
        trunc => Trunc,
    }

    /// `self^n` with an integer exponent (a kernel argument, not part of the cache key).
    #[track_caller]
    pub fn powi(&self, n: i32) -> Array<T> {
        self.binary_with(BinaryOp::PowI, n)
    }
    /// Four-quadrant arctangent of `self / other`.
    #[track_caller]
    pub fn atan2(&self, other: impl Operand<T>) -> Array<T> {
        self.binary_with(BinaryOp::Atan2, other)
    }
    /// `sqrt(self² + other²)` without undue overflow.
    #[track_caller]
    pub fn hypot(&self, other: impl Operand<T>) -> Array<T> {
        self.binary_with(BinaryOp::Hypot, other)
    }
    /// `self * a + b` with one rounding.
    #[track_caller]
    pub fn mul_add(&self, a: impl Operand<T>, b: impl Operand<T>) -> Array<T> {
        let a = a.into_array(CtxRef(&self.node.ctx));
        let b = b.into_array(CtxRef(&self.node.ctx));
        self.ternary(TernaryOp::MulAdd, &a.node, &b.node)
    }
}

/// Operations on every array with arithmetic.
impl<T: Arithmetic> Array<T> {
    /// Absolute value (wrapping for `i32::MIN`, like `wrapping_abs`); of a complex
    /// number, its magnitude `hypot(re, im)`, a real.
    #[track_caller]
    pub fn abs(&self) -> Array<T::Real> {
        self.unary(UnaryOp::Abs)
    }
}

/// Operations on every numeric array.
impl<T: Numeric> Array<T> {
    /// Sign. Floats: `1.0` for positive (and `+0.0`), `-1.0` for negative (and `-0.0`),
    /// NaN for NaN. Integers: `1`, `0` or `-1`.
    #[track_caller]
    pub fn signum(&self) -> Array<T> {
        self.unary(UnaryOp::Signum)
    }
    /// Elementwise minimum (a NaN operand is ignored, like `f32::min`).
    #[track_caller]
    pub fn min(&self, other: impl Operand<T>) -> Array<T> {
        self.binary_with(BinaryOp::Min, other)
    }
    /// Elementwise maximum (a NaN operand is ignored, like `f32::max`).
    #[track_caller]
    pub fn max(&self, other: impl Operand<T>) -> Array<T> {
        self.binary_with(BinaryOp::Max, other)
    }
    /// Limits each element to `[lo, hi]`; NaN stays NaN.
    #[track_caller]
    pub fn clamp(&self, lo: impl Operand<T>, hi: impl Operand<T>) -> Array<T> {
        let lo = lo.into_array(CtxRef(&self.node.ctx));
        let hi = hi.into_array(CtxRef(&self.node.ctx));
        self.ternary(TernaryOp::Clamp, &lo.node, &hi.node)
    }
}

/// Operations on integer arrays.
///
/// Integer `/` and `%` follow Rust's wrapping semantics where Rust has them (`MIN / -1`
/// is `MIN`, `MIN % -1` is 0) but never trap: a division or remainder by zero gives **0**
/// where Rust would panic (a kernel cannot stop, and a trap would kill the process on CPU
/// devices). Where a zero divisor is a bug to report, use [`checked_div`](Self::checked_div)
/// and [`checked_rem`](Self::checked_rem).
impl<T: Integer> Array<T> {
    /// `self^exp`, wrapping on overflow.
    #[track_caller]
    pub fn pow(&self, exp: u32) -> Array<T> {
        self.binary_with(BinaryOp::Pow, exp)
    }

    /// `self / divisor`, or [`Error::DivisionByZero`] if any element of `divisor` is 0
    /// (Rust's `checked_div`, for the whole array). Unlike `/`, this waits: it computes
    /// whether `divisor` holds a zero and reads that one flag before returning the lazy
    /// quotient.
    #[track_caller]
    pub fn checked_div(&self, divisor: impl Operand<T>) -> Result<Array<T>> {
        self.checked(BinaryOp::Div, "checked_div", divisor)
    }

    /// `self % divisor`, or [`Error::DivisionByZero`] if any element of `divisor` is 0;
    /// waits like [`checked_div`](Self::checked_div).
    #[track_caller]
    pub fn checked_rem(&self, divisor: impl Operand<T>) -> Result<Array<T>> {
        self.checked(BinaryOp::Rem, "checked_rem", divisor)
    }

    #[track_caller]
    fn checked(&self, op: BinaryOp, name: &str, divisor: impl Operand<T>) -> Result<Array<T>> {
        let divisor = divisor.into_array(CtxRef(&self.node.ctx));
        let result: Array<T> = self.binary(op, divisor.clone());
        if let Some(e) = result.recording_error() {
            return Err(e);
        }
        if result.is_empty() {
            return Ok(result);
        }
        let zeros = divisor.eq(T::default()).cast::<u64>().sum().item()?;
        if zeros > 0 {
            return Err(Error::DivisionByZero {
                op: name.into(),
                shape: divisor.shape().to_vec(),
                zeros,
            });
        }
        Ok(result)
    }
}
