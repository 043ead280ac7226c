//! Operators and builtins of the IR: unary and binary operators, the math functions and
//! intrinsics the subset maps to OpenCL C, complex numbers' functions, and atomics.

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
    /// A complex number's constructor, part or method.
    Complex(ComplexFn),
}

/// What the subset does with complex numbers besides their operators: `num-complex`'s
/// constructors, public fields and methods. The first argument is the receiver.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ComplexFn {
    /// `Complex::new(re, im)`.
    New,
    /// `Complex::from_polar(r, theta)`.
    FromPolar,
    /// `z.re`.
    Re,
    /// `z.im`.
    Im,
    Conj,
    /// The magnitude, `hypot(re, im)`.
    Norm,
    NormSqr,
    /// The angle, `atan2(im, re)`.
    Arg,
    Exp,
    Ln,
    Sqrt,
    /// `z.powf(p)` of a real `p`.
    Powf,
    /// `z.powc(w)` of a complex `w`.
    Powc,
    Inv,
    /// `z.scale(t)`: both parts times a real `t`.
    Scale,
    /// `z.unscale(t)`: both parts over a real `t`.
    Unscale,
    IsNan,
    IsFinite,
    IsInfinite,
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
