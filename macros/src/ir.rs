//! The typed intermediate representation shared by `#[kernel]`, `#[device_fn]` and
//! `expr!`: scalar types, type variables for literal inference, expressions,
//! statements and function signatures. Every node keeps the span of the Rust code it
//! came from.

use crate::parse::Sp;

/// A scalar type of the kernel subset.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash, PartialOrd, Ord)]
pub enum Scalar {
    Bool,
    I32,
    U32,
    I64,
    U64,
    Usize,
    F32,
    F64,
}

impl Scalar {
    pub const ALL: [Scalar; 8] = [
        Scalar::Bool,
        Scalar::I32,
        Scalar::U32,
        Scalar::I64,
        Scalar::U64,
        Scalar::Usize,
        Scalar::F32,
        Scalar::F64,
    ];

    /// The Rust spelling.
    pub fn rust(self) -> &'static str {
        match self {
            Scalar::Bool => "bool",
            Scalar::I32 => "i32",
            Scalar::U32 => "u32",
            Scalar::I64 => "i64",
            Scalar::U64 => "u64",
            Scalar::Usize => "usize",
            Scalar::F32 => "f32",
            Scalar::F64 => "f64",
        }
    }

    /// Parses a Rust type name.
    pub fn from_rust(s: &str) -> Option<Scalar> {
        Scalar::ALL.iter().copied().find(|t| t.rust() == s)
    }

    /// The OpenCL C type of a value (`usize` is `ulong`).
    pub fn cl(self) -> &'static str {
        match self {
            Scalar::Bool => "bool",
            Scalar::I32 => "int",
            Scalar::U32 => "uint",
            Scalar::I64 => "long",
            Scalar::U64 | Scalar::Usize => "ulong",
            Scalar::F32 => "float",
            Scalar::F64 => "double",
        }
    }

    /// The OpenCL C type of an element in memory (`bool` is `uchar`).
    pub fn cl_storage(self) -> &'static str {
        match self {
            Scalar::Bool => "uchar",
            t => t.cl(),
        }
    }

    /// The unsigned OpenCL type of the same width (integers only).
    pub fn cl_unsigned(self) -> &'static str {
        match self {
            Scalar::I32 | Scalar::U32 => "uint",
            _ => "ulong",
        }
    }

    pub fn is_int(self) -> bool {
        matches!(
            self,
            Scalar::I32 | Scalar::U32 | Scalar::I64 | Scalar::U64 | Scalar::Usize
        )
    }

    pub fn is_float(self) -> bool {
        matches!(self, Scalar::F32 | Scalar::F64)
    }

    pub fn is_signed_int(self) -> bool {
        matches!(self, Scalar::I32 | Scalar::I64)
    }

    pub fn bits(self) -> u32 {
        match self {
            Scalar::Bool => 8,
            Scalar::I32 | Scalar::U32 | Scalar::F32 => 32,
            _ => 64,
        }
    }

    /// The range of an integer type as (min, max).
    pub fn int_range(self) -> (i128, i128) {
        match self {
            Scalar::I32 => (i32::MIN as i128, i32::MAX as i128),
            Scalar::U32 => (0, u32::MAX as i128),
            Scalar::I64 => (i64::MIN as i128, i64::MAX as i128),
            _ => (0, u64::MAX as i128),
        }
    }

    /// The name of the runtime's `DType` variant for an element type (`None` for `usize`).
    pub fn dtype(self) -> Option<&'static str> {
        Some(match self {
            Scalar::Bool => "Bool",
            Scalar::I32 => "I32",
            Scalar::U32 => "U32",
            Scalar::I64 => "I64",
            Scalar::U64 => "U64",
            Scalar::Usize => return None,
            Scalar::F32 => "F32",
            Scalar::F64 => "F64",
        })
    }
}

/// The kind of an unresolved literal type.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum VarKind {
    /// `{integer}`: defaults to `i32`.
    Int,
    /// `{float}`: defaults to `f64`.
    Float,
    /// The unknown element type of an `expr!` operand (only while `expr!` works out which
    /// operands must share a type): unifies with anything.
    Any,
}

/// A value type: a scalar, an inference variable (from a literal), unit or never.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Ty {
    S(Scalar),
    Var(u32),
    Unit,
    Never,
}

#[derive(Clone, Copy, Debug)]
enum Slot {
    Open(VarKind),
    Link(Ty),
}

/// Union-find table of literal type variables.
#[derive(Default, Debug)]
pub struct Infer {
    slots: Vec<Slot>,
}

impl Infer {
    pub fn fresh(&mut self, kind: VarKind) -> Ty {
        self.slots.push(Slot::Open(kind));
        Ty::Var(self.slots.len() as u32 - 1)
    }

    /// Follows links: a scalar, an open variable, unit or never.
    pub fn shallow(&self, t: Ty) -> Ty {
        let mut t = t;
        while let Ty::Var(v) = t {
            match self.slots[v as usize] {
                Slot::Link(n) => t = n,
                Slot::Open(_) => return t,
            }
        }
        t
    }

    /// The kind of an open variable.
    pub fn kind(&self, t: Ty) -> Option<VarKind> {
        match self.shallow(t) {
            Ty::Var(v) => match self.slots[v as usize] {
                Slot::Open(k) => Some(k),
                Slot::Link(_) => None,
            },
            _ => None,
        }
    }

    /// The final scalar type, applying the defaults (`i32`, `f64`).
    pub fn scalar(&self, t: Ty) -> Option<Scalar> {
        match self.shallow(t) {
            Ty::S(s) => Some(s),
            Ty::Var(_) => Some(match self.kind(t) {
                Some(VarKind::Float) => Scalar::F64,
                _ => Scalar::I32,
            }),
            _ => None,
        }
    }

    /// A human-readable name of a type, as rustc writes it.
    pub fn describe(&self, t: Ty) -> String {
        match self.shallow(t) {
            Ty::S(s) => s.rust().to_string(),
            Ty::Var(_) => match self.kind(t) {
                Some(VarKind::Float) => "{float}".into(),
                Some(VarKind::Any) => "{unknown}".into(),
                _ => "{integer}".into(),
            },
            Ty::Unit => "()".into(),
            Ty::Never => "!".into(),
        }
    }

    /// Makes two types equal, or says why not.
    pub fn unify(&mut self, a: Ty, b: Ty) -> Result<Ty, String> {
        let (a, b) = (self.shallow(a), self.shallow(b));
        match (a, b) {
            _ if a == b => Ok(a),
            (Ty::Never, o) | (o, Ty::Never) => Ok(o),
            (Ty::Var(x), Ty::Var(y)) => {
                let (kx, ky) = (self.kind(a), self.kind(b));
                if ky == Some(VarKind::Any) {
                    self.slots[y as usize] = Slot::Link(a);
                    return Ok(a);
                }
                if kx == Some(VarKind::Any) {
                    self.slots[x as usize] = Slot::Link(b);
                    return Ok(b);
                }
                if kx != ky {
                    return Err(format!(
                        "expected `{}`, found `{}`",
                        self.describe(a),
                        self.describe(b)
                    ));
                }
                self.slots[y as usize] = Slot::Link(a);
                Ok(a)
            }
            (Ty::Var(v), Ty::S(s)) | (Ty::S(s), Ty::Var(v)) => {
                let ok = match self.kind(Ty::Var(v)) {
                    Some(VarKind::Int) => s.is_int(),
                    Some(VarKind::Float) => s.is_float(),
                    Some(VarKind::Any) => true,
                    None => false,
                };
                if !ok {
                    return Err(format!(
                        "expected `{}`, found `{}`",
                        self.describe(a),
                        self.describe(b)
                    ));
                }
                self.slots[v as usize] = Slot::Link(Ty::S(s));
                Ok(Ty::S(s))
            }
            _ => Err(format!(
                "expected `{}`, found `{}`",
                self.describe(a),
                self.describe(b)
            )),
        }
    }

    /// Whether a type is (or will default to) an integer type.
    pub fn is_int(&self, t: Ty) -> bool {
        match self.shallow(t) {
            Ty::S(s) => s.is_int(),
            Ty::Var(_) => self.kind(t) == Some(VarKind::Int),
            _ => false,
        }
    }

    /// Whether a type is (or will default to) a float type.
    pub fn is_float(&self, t: Ty) -> bool {
        match self.shallow(t) {
            Ty::S(s) => s.is_float(),
            Ty::Var(_) => self.kind(t) == Some(VarKind::Float),
            _ => false,
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum UnOp {
    /// `-x`
    Neg,
    /// `!x`: logical on bool, bitwise on integers.
    Not,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    BitAnd,
    BitOr,
    BitXor,
    Shl,
    Shr,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
}

impl BinOp {
    pub fn c(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
            BinOp::BitAnd => "&",
            BinOp::BitOr => "|",
            BinOp::BitXor => "^",
            BinOp::Shl => "<<",
            BinOp::Shr => ">>",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::And => "&&",
            BinOp::Or => "||",
        }
    }

    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge
        )
    }
}

/// Math functions, intrinsics and the integer helpers the subset maps to OpenCL C.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Builtin {
    /// A float function with an OpenCL builtin of the same arity (`sqrt`, `atan2`, `fma`, ...).
    FloatFn(&'static str),
    /// `signum` (NaN passes through).
    Signum,
    /// `abs` on a signed integer (wrapping at MIN like Rust's release build).
    IntAbs,
    /// `min`/`max` on integers.
    IntMinMax(&'static str),
    /// `clamp` (floats and integers).
    Clamp,
    /// Integer `pow(u32)` (wrapping).
    IntPow,
    /// `powi(i32)` on floats.
    Powi,
    /// `is_nan`, `is_finite`, `is_infinite`.
    FloatTest(&'static str),
    /// `global_id(d)` and friends: `get_global_id` etc.
    WorkItem(&'static str),
}

/// An atomic read-modify-write on an element of a `&mut [i32|u32]` or local array.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum AtomicOp {
    Add,
    Sub,
    Min,
    Max,
    And,
    Or,
    Xor,
    Xchg,
    Cmpxchg,
}

impl AtomicOp {
    /// Every atomic operation, for name lookups.
    pub const ALL: [AtomicOp; 9] = [
        AtomicOp::Add,
        AtomicOp::Sub,
        AtomicOp::Min,
        AtomicOp::Max,
        AtomicOp::And,
        AtomicOp::Or,
        AtomicOp::Xor,
        AtomicOp::Xchg,
        AtomicOp::Cmpxchg,
    ];

    /// The operation a Rust intrinsic name (the same as its OpenCL C name) stands for.
    pub fn from_name(s: &str) -> Option<AtomicOp> {
        AtomicOp::ALL.into_iter().find(|op| op.c() == s)
    }

    pub fn c(self) -> &'static str {
        match self {
            AtomicOp::Add => "atomic_add",
            AtomicOp::Sub => "atomic_sub",
            AtomicOp::Min => "atomic_min",
            AtomicOp::Max => "atomic_max",
            AtomicOp::And => "atomic_and",
            AtomicOp::Or => "atomic_or",
            AtomicOp::Xor => "atomic_xor",
            AtomicOp::Xchg => "atomic_xchg",
            AtomicOp::Cmpxchg => "atomic_cmpxchg",
        }
    }
}

/// An array an index can refer to.
#[derive(Clone, Debug)]
pub struct ArrayRef {
    /// OpenCL C name.
    pub name: String,
    pub elem: Scalar,
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
    Atomic(AtomicOp, ArrayRef, Box<Expr>, Vec<Expr>),
    /// `if c { a } else { b }` as a value.
    If(Box<Expr>, Block, Block),
    /// `{ stmts; tail }` as a value.
    Block(Block),
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
    For {
        var: String,
        ty: Ty,
        start: Expr,
        end: Expr,
        /// `a..=b`
        inclusive: bool,
        step: Option<Expr>,
        body: Block,
        label: Option<String>,
    },
    /// `break` / `break 'label` (the label's OpenCL C name).
    Break(Option<String>),
    /// `continue` / `continue 'label`.
    Continue(Option<String>),
    Return(Option<Expr>),
    Barrier,
}

/// A parameter type of a kernel or device function.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ParamTy {
    Scalar(Scalar),
    Slice { elem: Scalar, mutable: bool },
}

#[derive(Clone, Debug)]
pub struct Param {
    /// The Rust name.
    pub name: syn::Ident,
    pub ty: ParamTy,
    /// `mut x: f32`
    pub mutable: bool,
}

/// The signature of a device function, as other macro invocations see it.
#[derive(Clone, Debug, PartialEq)]
pub struct DevSig {
    pub name: String,
    pub params: Vec<ParamTy>,
    pub ret: Option<Scalar>,
    pub uses_f64: bool,
}

/// The OpenCL C name of a device function.
pub fn device_fn_cl_name(name: &str) -> String {
    format!("lzc_fn_{name}")
}

impl DevSig {
    /// Serialized form passed between macro invocations: `name|p1,p2|ret|f64`.
    pub fn encode(&self) -> String {
        let params: Vec<String> = self.params.iter().map(|p| encode_param(*p)).collect();
        format!(
            "{}|{}|{}|{}",
            self.name,
            params.join(","),
            self.ret.map(|s| s.rust()).unwrap_or("()"),
            u8::from(self.uses_f64)
        )
    }

    pub fn decode(s: &str) -> Option<DevSig> {
        let mut parts = s.split('|');
        let name = parts.next()?.to_string();
        let params_s = parts.next()?;
        let ret_s = parts.next()?;
        let f64_s = parts.next()?;
        let mut params = Vec::new();
        for p in params_s.split(',').filter(|p| !p.is_empty()) {
            params.push(decode_param(p)?);
        }
        let ret = if ret_s == "()" {
            None
        } else {
            Some(Scalar::from_rust(ret_s)?)
        };
        Some(DevSig {
            name,
            params,
            ret,
            uses_f64: f64_s == "1",
        })
    }
}

fn encode_param(p: ParamTy) -> String {
    match p {
        ParamTy::Scalar(s) => s.rust().to_string(),
        ParamTy::Slice { elem, mutable: false } => format!("&[{}]", elem.rust()),
        ParamTy::Slice { elem, mutable: true } => format!("&mut [{}]", elem.rust()),
    }
}

fn decode_param(p: &str) -> Option<ParamTy> {
    if let Some(rest) = p.strip_prefix("&mut [") {
        Some(ParamTy::Slice {
            elem: Scalar::from_rust(rest.strip_suffix(']')?)?,
            mutable: true,
        })
    } else if let Some(rest) = p.strip_prefix("&[") {
        Some(ParamTy::Slice {
            elem: Scalar::from_rust(rest.strip_suffix(']')?)?,
            mutable: false,
        })
    } else {
        Some(ParamTy::Scalar(Scalar::from_rust(p)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sig_roundtrip() {
        let s = DevSig {
            name: "f".into(),
            params: vec![
                ParamTy::Scalar(Scalar::F32),
                ParamTy::Slice {
                    elem: Scalar::I32,
                    mutable: true,
                },
                ParamTy::Slice {
                    elem: Scalar::Bool,
                    mutable: false,
                },
            ],
            ret: Some(Scalar::Usize),
            uses_f64: true,
        };
        assert_eq!(DevSig::decode(&s.encode()), Some(s));
    }

    #[test]
    fn literal_inference() {
        let mut inf = Infer::default();
        let a = inf.fresh(VarKind::Float);
        let b = inf.fresh(VarKind::Float);
        assert!(inf.unify(a, b).is_ok());
        assert!(inf.unify(b, Ty::S(Scalar::F32)).is_ok());
        assert_eq!(inf.scalar(a), Some(Scalar::F32));
        let c = inf.fresh(VarKind::Int);
        assert!(inf.unify(c, Ty::S(Scalar::F32)).is_err());
        assert_eq!(inf.scalar(c), Some(Scalar::I32));
    }
}
