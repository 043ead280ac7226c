//! The scalar types of the kernel subset: their Rust and OpenCL C spellings and the
//! properties the type rules and the emitter ask about.

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
