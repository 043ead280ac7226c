//! The run-time side of `expr!`: an OpenCL C expression written by the macro at compile
//! time, applied to array and scalar operands as one lazy node that fuses like any other.

use std::sync::Arc;

use crate::api::array::Array;
use crate::backend::context::ContextInner;
use crate::dtype::{c32, c64, DType, Element, ScalarBits};
use crate::error::Error;
pub use crate::graph::template::{Derivative, ExprTemplate};
use crate::graph::{NodeRef, Op};

/// One operand of an `expr!` node: an array, or a host scalar passed as a kernel argument.
pub struct ExprOperand {
    kind: OperandKind,
    dtype: DType,
}

enum OperandKind {
    Array(NodeRef),
    Scalar(ScalarBits),
}

/// A value `expr!` accepts as an operand: `Array<T>`, `&Array<T>` (any number of `&`) or a
/// scalar of any element type, a type parameter `T: Element` (or `Float`, `Numeric`, ...)
/// included: `fn f<T: Float>(x: &Array<T>, s: T) -> Array<T> { expr!(x * s) }` needs no
/// bound beyond the element kind.
///
/// `M` is one of the markers [`kind::IsArray`], [`kind::IsScalar`] or [`kind::Ref`]:
/// it keeps the impls for arrays, scalars and references apart (a blanket impl for every
/// `T: Element` next to one for every `&A` would overlap), and is always inferred.
///
/// ```
/// use lazycl::prelude::*;
///
/// fn shifted<T: lazycl::Numeric>(x: &Array<T>, s: T) -> Array<T> {
///     expr!(x + s) // `s: T` is a kernel argument
/// }
///
/// # fn main() -> lazycl::Result<()> {
/// let ctx = Context::new()?;
/// let x = ctx.from_slice(&[1i64, 2, 3])?;
/// assert_eq!(shifted(&x, 10).to_vec()?, [11, 12, 13]);
/// # Ok(())
/// # }
/// ```
pub trait ExprArg<M> {
    /// The element type.
    type Elem: Element;
    /// [`kind::IsArray`] or [`kind::IsScalar`]: `expr!` checks with it, at compile time,
    /// that at least one operand is an array.
    type Kind;
    /// The operand, type-erased.
    fn operand(&self) -> ExprOperand;
}

impl<T: Element> ExprArg<kind::IsArray> for Array<T> {
    type Elem = T;
    type Kind = kind::IsArray;
    #[track_caller]
    fn operand(&self) -> ExprOperand {
        ExprOperand {
            kind: OperandKind::Array(self.node.clone()),
            dtype: T::DTYPE,
        }
    }
}

impl<M, A: ExprArg<M> + ?Sized> ExprArg<kind::Ref<M>> for &A {
    type Elem = A::Elem;
    type Kind = A::Kind;
    #[track_caller]
    fn operand(&self) -> ExprOperand {
        (**self).operand()
    }
}

impl<T: Element> ExprArg<kind::IsScalar> for T {
    type Elem = T;
    type Kind = kind::IsScalar;
    #[track_caller]
    fn operand(&self) -> ExprOperand {
        ExprOperand {
            kind: OperandKind::Scalar(self.to_arg_bits()),
            dtype: T::DTYPE,
        }
    }
}

/// A value for an operand of element type `T` of an `expr!` closure or a `#[device_fn]`'s
/// `map`: `Array<T>`, `&Array<T>` or a scalar `T`. (Unlike a bound `ExprArg<Elem = T>`, this
/// lets an unsuffixed literal such as `1.5` take the type `T`.)
pub trait ExprInput<T: Element> {
    /// [`kind::IsArray`] or [`kind::IsScalar`].
    type Kind;
    /// The operand, type-erased.
    fn operand(&self) -> ExprOperand;
}

impl<T: Element> ExprInput<T> for Array<T> {
    type Kind = kind::IsArray;
    #[track_caller]
    fn operand(&self) -> ExprOperand {
        ExprArg::<kind::IsArray>::operand(self)
    }
}

impl<T: Element, A: ExprInput<T> + ?Sized> ExprInput<T> for &A {
    type Kind = A::Kind;
    #[track_caller]
    fn operand(&self) -> ExprOperand {
        (**self).operand()
    }
}

macro_rules! scalar_input {
    ($($t:ty),*) => {$(
        impl ExprInput<$t> for $t {
            type Kind = kind::IsScalar;
            #[track_caller]
            fn operand(&self) -> ExprOperand {
                ExprArg::<kind::IsScalar>::operand(self)
            }
        }
    )*};
}
scalar_input!(bool, c32, c64);
crate::dtype::for_each_numeric!(scalar_input);

/// Type-level booleans for the compile-time check that an `expr!` (or a device function's
/// `map`) has at least one array operand: the generated code requires
/// `<<A0::Kind as Or<A1::Kind>>::Out as Or<..>>::Out: HasArray`.
pub mod kind {
    /// The operand is an array.
    pub struct IsArray;
    /// The operand is a scalar.
    pub struct IsScalar;
    /// The operand is a reference to an operand of marker `M` (only a marker of
    /// [`ExprArg`](super::ExprArg): a reference's kind is its referent's).
    pub struct Ref<M>(std::marker::PhantomData<M>);

    /// Type-level "or" of two kinds.
    pub trait Or<B> {
        /// `IsArray` if either is.
        type Out;
    }
    impl<B> Or<B> for IsArray {
        type Out = IsArray;
    }
    impl<B> Or<B> for IsScalar {
        type Out = B;
    }

    /// Implemented by `IsArray` only.
    #[diagnostic::on_unimplemented(
        message = "expr! needs at least one array operand, but all operands are scalars",
        label = "all operands of this expression are scalars",
        note = "an expr! is applied elementwise to arrays: pass at least one `&Array<T>` (scalars become kernel arguments)"
    )]
    pub trait HasArray {}
    impl HasArray for IsArray {}
}

impl ExprOperand {
    /// What an `expr!` records when its operands' element types have no variant: an
    /// array that fails, when materialized, with an error naming the expression (`rust`),
    /// those types and the types it `accepted`. (A generic `expr!` whose bound admits a
    /// type its expression is not valid for, such as `x as u32` over `T: Element` called
    /// with a complex type.)
    #[track_caller]
    pub fn without_variant<R: Element>(
        rust: &'static str,
        accepted: &'static str,
        operands: &[ExprOperand],
    ) -> Array<R> {
        let ctx = context_of(operands);
        let types: Vec<String> = operands.iter().map(|o| o.dtype.to_string()).collect();
        let e = Error::InvalidLaunch {
            kernel: format!("expr!({rust})"),
            reason: format!(
                "the expression is not valid for operands of element types ({}); it accepts {accepted}",
                types.join(", ")
            ),
        };
        Array::failed(&ctx, Vec::new(), e)
    }
}

/// The context of the first array operand.
fn context_of(operands: &[ExprOperand]) -> Arc<ContextInner> {
    operands
        .iter()
        .find_map(|o| match &o.kind {
            OperandKind::Array(n) => Some(n.ctx.clone()),
            OperandKind::Scalar(_) => None,
        })
        .expect("expr! needs at least one array operand (checked at compile time by the macro)")
}

/// Records `template` over `operands` as a lazy node with element type `R`, broadcasting
/// the array operands by numpy's rules (a mismatch is reported when materialized).
///
/// `expr!` guarantees at compile time that at least one operand is an array; without one
/// there is no context to record into, and this panics.
#[track_caller]
pub fn expr_node<R: Element>(template: &'static ExprTemplate, operands: &[ExprOperand]) -> Array<R> {
    let ctx = context_of(operands);
    let nodes: Vec<NodeRef> = operands
        .iter()
        .map(|o| match &o.kind {
            OperandKind::Array(n) => n.clone(),
            OperandKind::Scalar(bits) => crate::graph::Node::new(
                ctx.clone(),
                o.dtype,
                Default::default(),
                crate::graph::State::Lazy(Op::Scalar(*bits)),
            ),
        })
        .collect();
    for n in &nodes {
        if let Err(e) = ctx.check_dtype(n.dtype) {
            return Array::failed(&ctx, Vec::new(), e);
        }
    }
    let refs: Vec<&NodeRef> = nodes.iter().collect();
    crate::api::ops::record(&|| format!("expr!({})", template.rust), &refs, || {
        Op::Expr(template, nodes.iter().cloned().collect())
    })
}
