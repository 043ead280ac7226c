//! Element types: the sealed [`Element`] trait and its run-time twin [`DType`].

use std::fmt;

/// The element type of an array, known at run time (the lazy graph is untyped).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DType {
    /// `bool`, stored as OpenCL `uchar` (0 or 1).
    Bool,
    /// `i32` / `int`.
    I32,
    /// `u32` / `uint`.
    U32,
    /// `i64` / `long`.
    I64,
    /// `u64` / `ulong`.
    U64,
    /// `f32` / `float`.
    F32,
    /// `f64` / `double` (needs `cl_khr_fp64`).
    F64,
}

impl DType {
    /// The OpenCL C type used for values and storage.
    pub const fn cl_name(self) -> &'static str {
        match self {
            DType::Bool => "uchar",
            DType::I32 => "int",
            DType::U32 => "uint",
            DType::I64 => "long",
            DType::U64 => "ulong",
            DType::F32 => "float",
            DType::F64 => "double",
        }
    }

    /// The Rust spelling.
    pub const fn rust_name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::I32 => "i32",
            DType::U32 => "u32",
            DType::I64 => "i64",
            DType::U64 => "u64",
            DType::F32 => "f32",
            DType::F64 => "f64",
        }
    }

    /// Bytes per element on the device.
    pub const fn size(self) -> usize {
        match self {
            DType::Bool => 1,
            DType::I32 | DType::U32 | DType::F32 => 4,
            DType::I64 | DType::U64 | DType::F64 => 8,
        }
    }

    /// `f32` or `f64`.
    pub const fn is_float(self) -> bool {
        matches!(self, DType::F32 | DType::F64)
    }

    /// A signed or unsigned integer type (not bool).
    pub const fn is_int(self) -> bool {
        matches!(self, DType::I32 | DType::U32 | DType::I64 | DType::U64)
    }

    /// A signed type (integers and floats).
    pub const fn is_signed(self) -> bool {
        matches!(self, DType::I32 | DType::I64 | DType::F32 | DType::F64)
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.rust_name())
    }
}

mod sealed {
    pub trait Sealed {}
}

/// A Rust type that can live in a device array. Sealed: implemented for
/// `bool`, `i32`, `u32`, `i64`, `u64`, `f32` and `f64`.
pub trait Element:
    sealed::Sealed + Copy + Send + Sync + PartialEq + PartialOrd + fmt::Debug + Default + 'static
{
    /// The run-time type tag.
    const DTYPE: DType;
    /// The OpenCL C type name (`float`, `int`, ...).
    const CL_TYPE: &'static str;
    /// The value as the little-endian bytes of a kernel argument (`bool` is a `uint`).
    fn to_arg_bits(self) -> ScalarBits;
}

/// A scalar's kernel-argument bytes: 4 or 8 bytes, stored in a `u64`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ScalarBits {
    /// The raw bits (low bytes used when `size == 4`).
    pub bits: u64,
    /// 4 or 8.
    pub size: u8,
}

impl ScalarBits {
    pub(crate) fn bytes(&self) -> [u8; 8] {
        self.bits.to_le_bytes()
    }
}

macro_rules! element {
    ($t:ty, $d:ident, $cl:literal, |$v:ident| $bits:expr, $size:literal) => {
        impl sealed::Sealed for $t {}
        impl Element for $t {
            const DTYPE: DType = DType::$d;
            const CL_TYPE: &'static str = $cl;
            #[inline]
            fn to_arg_bits(self) -> ScalarBits {
                let $v = self;
                ScalarBits {
                    bits: $bits,
                    size: $size,
                }
            }
        }
    };
}

element!(bool, Bool, "uchar", |v| v as u64, 4);
element!(i32, I32, "int", |v| v as u32 as u64, 4);
element!(u32, U32, "uint", |v| v as u64, 4);
element!(i64, I64, "long", |v| v as u64, 8);
element!(u64, U64, "ulong", |v| v, 8);
element!(f32, F32, "float", |v| v.to_bits() as u64, 4);
element!(f64, F64, "double", |v| v.to_bits(), 8);

/// Numeric element types (everything but `bool`): arithmetic is defined on these.
pub trait Numeric: Element {}
impl Numeric for i32 {}
impl Numeric for u32 {}
impl Numeric for i64 {}
impl Numeric for u64 {}
impl Numeric for f32 {}
impl Numeric for f64 {}

/// Floating-point element types: the math methods (`sqrt`, `exp`, ...) are defined on these.
pub trait Float: Numeric {}
impl Float for f32 {}
impl Float for f64 {}

/// Integer element types (`i32 u32 i64 u64`): bitwise operations and `pow` are defined on these.
pub trait Integer: Numeric {}
impl Integer for i32 {}
impl Integer for u32 {}
impl Integer for i64 {}
impl Integer for u64 {}

/// Signed element types: unary minus is defined on these.
pub trait Signed: Numeric {}
impl Signed for i32 {}
impl Signed for i64 {}
impl Signed for f32 {}
impl Signed for f64 {}
