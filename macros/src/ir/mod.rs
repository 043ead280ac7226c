//! The typed intermediate representation shared by `#[kernel]`, `#[device_fn]` and
//! `expr!`: what `lower` produces from syn and `emit` prints as OpenCL C. This file holds
//! the tree (expressions, statements, places); the types, operators and function
//! signatures it uses are in the files beside it. Every node keeps the span of the Rust
//! code it came from, so that a type error points at it.

mod function;
mod infer;
mod ops;
mod scalar;
mod structs;

pub use function::{device_fn_cl_name, DevSig, Param, ParamTy};
pub use infer::{Infer, Ty, VarKind};
/// The work-group collectives (`lazycl-clc`'s, with their helpers).
pub use lazycl_clc::Collective;
pub use ops::{AtomicOp, BinOp, Builtin, ComplexFn, UnOp};
pub use scalar::{DType, Scalar};
pub use structs::{is_field_type, Field, StructDef};

use crate::diag::Sp;

/// An array an index can refer to.
#[derive(Clone, Debug)]
pub struct ArrayRef {
    /// OpenCL C name.
    pub name: String,
    pub elem: Scalar,
    /// A slice parameter, in global memory: its elements are stored as the element type's
    /// memory type (`half` for `f16`); a local or constant array holds values
    /// (`float` for `f16`, rounded where stored).
    pub global: bool,
}

#[derive(Clone, Debug)]
pub struct Expr {
    pub kind: ExprKind,
    pub ty: Ty,
    pub span: Sp,
}

#[derive(Clone, Debug)]
pub enum ExprKind {
    /// An integer literal (already negated if it was `-lit`).
    Int(i128),
    /// A float literal or constant (may be infinite or NaN for `f32::INFINITY` etc.).
    Float(f64),
    Bool(bool),
    /// A scalar variable or parameter, by OpenCL C name.
    Var(String),
    /// The length of a slice parameter (`name_len`) or local array (a literal).
    Len(String),
    /// `array[idx]` read.
    Index(ArrayRef, Box<Expr>),
    Unary(UnOp, Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// `e as T` where `T` is this expression's type.
    Cast(Box<Expr>),
    Builtin(Builtin, Vec<Expr>),
    /// A call of a `#[device_fn]`.
    Call(String, Vec<CallArg>),
    /// An atomic read-modify-write of `array[idx]`; `local`: the array is `__local`.
    Atomic {
        op: AtomicOp,
        array: ArrayRef,
        local: bool,
        idx: Box<Expr>,
        vals: Vec<Expr>,
    },
    /// A work-group collective (`work_group_reduce_add(v)`, ...): the value, and for a
    /// broadcast the linear local id of the work-item whose value it takes.
    Collective(Collective, Vec<Expr>),
    /// `if c { a } else { b }` as a value.
    If(Box<Expr>, Block, Block),
    /// `{ stmts; tail }` as a value.
    Block(Block),
}

/// The value a struct local starts with.
#[derive(Clone, Debug)]
pub enum StructInit {
    /// Its fields' values, in the definition's order.
    Fields(Vec<Expr>),
    /// A copy of the struct of this OpenCL C name.
    Copy(String),
}

/// An argument of a device function call.
#[derive(Clone, Debug)]
pub enum CallArg {
    Value(Expr),
    /// A slice parameter passed on: pointer and length names.
    Slice(String, String),
}

#[derive(Clone, Debug, Default)]
pub struct Block {
    pub stmts: Vec<Stmt>,
    pub tail: Option<Box<Expr>>,
}

/// An assignable place.
#[derive(Clone, Debug)]
pub enum Place {
    Var(String, Ty),
    Index(ArrayRef, Expr),
}

#[derive(Clone, Debug)]
pub enum Stmt {
    Let {
        name: String,
        ty: Ty,
        init: Option<Expr>,
    },
    /// `__local T name[len];` (kernel top level only).
    LocalArray {
        name: String,
        elem: Scalar,
        len: u64,
    },
    /// `const T name[] = {values};`: a `const` array item of the function.
    ConstArray {
        name: String,
        elem: Scalar,
        values: Vec<Expr>,
    },
    /// A struct local: `lzc_struct_T name = {fields};` (in the definition's order) or a
    /// copy of another struct value.
    StructLocal {
        name: String,
        /// The `typedef`'s name.
        cl_type: String,
        init: StructInit,
    },
    /// `place = value` or `place op= value`.
    Assign {
        place: Place,
        op: Option<BinOp>,
        value: Expr,
    },
    Expr(Expr),
    If {
        cond: Expr,
        then: Block,
        els: Option<Block>,
    },
    While {
        cond: Expr,
        body: Block,
        label: Option<String>,
    },
    Loop {
        body: Block,
        label: Option<String>,
    },
    /// A nested `{ ... }` block.
    Block(Block),
    For(ForLoop),
    /// `break` / `break 'label` (the label's OpenCL C name).
    Break(Option<String>),
    /// `continue` / `continue 'label`.
    Continue(Option<String>),
    Return(Option<Expr>),
    Barrier,
}

/// `for var in start..end` (`start..=end`; `(start..end).step_by(step)`).
#[derive(Clone, Debug)]
pub struct ForLoop {
    /// The loop variable's OpenCL C name.
    pub var: String,
    pub ty: Ty,
    pub start: Expr,
    pub end: Expr,
    /// `a..=b`
    pub inclusive: bool,
    pub step: Option<Expr>,
    pub body: Block,
    pub label: Option<String>,
}
