//! The element types and their facts, one row per type: what the macros and the runtime
//! both need to know to write a value of the type in OpenCL C.

use std::fmt;

/// The element type of an array, known at run time (the lazy graph is untyped). The
/// runtime re-exports it as `lazycl::DType`; the macros' `Scalar` maps onto it.
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
    /// `i8` / `char`.
    I8,
    /// `u8` / `uchar`.
    U8,
    /// `i16` / `short`.
    I16,
    /// `u16` / `ushort`.
    U16,
    /// `half::f16`: IEEE binary16, stored as OpenCL `half` (read and written with the core
    /// `vload_half`/`vstore_half_rte`, no extension needed) and computed in `float`.
    F16,
    /// `half::bf16`: the upper 16 bits of an `f32`, stored as `ushort` and computed in
    /// `float`.
    BF16,
    /// `num_complex::Complex32`: two `f32`s (real, imaginary), OpenCL `float2`.
    C32,
    /// `num_complex::Complex64`: two `f64`s (real, imaginary), OpenCL `double2` (needs
    /// `cl_khr_fp64`).
    C64,
}

/// What kind of number a type is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Bool,
    Signed,
    Unsigned,
    Float,
    Complex,
}

/// One row of the table.
struct Row {
    rust: &'static str,
    /// A value in the runtime's kernels (16-bit floats compute in `float`).
    cl_name: &'static str,
    /// An element in memory: what a buffer's pointer points to.
    cl_memory: &'static str,
    /// A value in the macros' code.
    cl_value: &'static str,
    /// The unsigned integer type of the same width.
    cl_unsigned: &'static str,
    /// A by-value kernel argument (OpenCL C kernel arguments cannot be `bool`).
    cl_arg: &'static str,
    size: usize,
    arg_size: usize,
    kind: Kind,
}

/// The table, in the order of [`DType`]'s variants. Types narrower than 32 bits travel as
/// 32-bit kernel arguments (OpenCL C kernel arguments cannot be `bool`, and a `float`
/// carries every 16-bit float exactly).
#[rustfmt::skip]
const TABLE: [Row; 15] = [
    //   rust    value     memory    macros    unsigned  argument  size arg kind
    row("bool", "uchar",  "uchar",  "bool",   "uchar",  "uint",   1, 4, Kind::Bool),
    row("i32",  "int",    "int",    "int",    "uint",   "int",    4, 4, Kind::Signed),
    row("u32",  "uint",   "uint",   "uint",   "uint",   "uint",   4, 4, Kind::Unsigned),
    row("i64",  "long",   "long",   "long",   "ulong",  "long",   8, 8, Kind::Signed),
    row("u64",  "ulong",  "ulong",  "ulong",  "ulong",  "ulong",  8, 8, Kind::Unsigned),
    row("f32",  "float",  "float",  "float",  "uint",   "float",  4, 4, Kind::Float),
    row("f64",  "double", "double", "double", "ulong",  "double", 8, 8, Kind::Float),
    row("i8",   "char",   "char",   "char",   "uchar",  "int",    1, 4, Kind::Signed),
    row("u8",   "uchar",  "uchar",  "uchar",  "uchar",  "uint",   1, 4, Kind::Unsigned),
    row("i16",  "short",  "short",  "short",  "ushort", "int",    2, 4, Kind::Signed),
    row("u16",  "ushort", "ushort", "ushort", "ushort", "uint",   2, 4, Kind::Unsigned),
    row("f16",  "float",  "half",   "float",  "uint",   "float",  2, 4, Kind::Float),
    row("bf16", "float",  "ushort", "float",  "uint",   "float",  2, 4, Kind::Float),
    row("c32",  "float2", "float2", "float2", "ulong",  "float2", 8, 8, Kind::Complex),
    row("c64",  "double2","double2","double2","ulong",  "double2",16,16,Kind::Complex),
];

#[allow(clippy::too_many_arguments)]
const fn row(
    rust: &'static str,
    cl_name: &'static str,
    cl_memory: &'static str,
    cl_value: &'static str,
    cl_unsigned: &'static str,
    cl_arg: &'static str,
    size: usize,
    arg_size: usize,
    kind: Kind,
) -> Row {
    Row {
        rust,
        cl_name,
        cl_memory,
        cl_value,
        cl_unsigned,
        cl_arg,
        size,
        arg_size,
        kind,
    }
}

impl DType {
    /// Every element type, in order.
    pub const ALL: [DType; 15] = [
        DType::Bool,
        DType::I32,
        DType::U32,
        DType::I64,
        DType::U64,
        DType::F32,
        DType::F64,
        DType::I8,
        DType::U8,
        DType::I16,
        DType::U16,
        DType::F16,
        DType::BF16,
        DType::C32,
        DType::C64,
    ];

    const fn row(self) -> &'static Row {
        &TABLE[self as usize]
    }

    /// The OpenCL C type of a value in the runtime's kernels (`bool` is `uchar`, 0 or 1;
    /// the 16-bit floats are `float`).
    pub const fn cl_name(self) -> &'static str {
        self.row().cl_name
    }

    /// The OpenCL C type of an element in memory, what a buffer of the type points to:
    /// [`cl_name`](Self::cl_name) but for the 16-bit floats (`half`, `ushort`), which are
    /// read and written through [`is_stored_narrow`](Self::is_stored_narrow)'s conversions.
    pub const fn cl_memory(self) -> &'static str {
        self.row().cl_memory
    }

    /// Whether a value is computed in a wider type than it is stored in (the 16-bit
    /// floats): a load converts it to `float`, a store rounds it to the nearest (ties to
    /// even), and so does a cast to it.
    pub const fn is_stored_narrow(self) -> bool {
        matches!(self, DType::F16 | DType::BF16)
    }

    /// The type reductions, scans and sorts of this type compute in: `f32` for the 16-bit
    /// floats, the 32-bit integer of the same signedness for the 8- and 16-bit integers,
    /// else the type itself (the complex types too).
    pub const fn compute(self) -> DType {
        match self {
            DType::F16 | DType::BF16 => DType::F32,
            DType::I8 | DType::I16 => DType::I32,
            DType::U8 | DType::U16 => DType::U32,
            d => d,
        }
    }

    /// The OpenCL C type of a value in the macros' code (`bool` is `bool`; otherwise
    /// [`cl_name`](Self::cl_name)).
    pub const fn cl_value(self) -> &'static str {
        self.row().cl_value
    }

    /// The unsigned OpenCL C integer type of the same width: wrapping integer arithmetic
    /// is computed in it (signed overflow is undefined in C).
    pub const fn cl_unsigned(self) -> &'static str {
        self.row().cl_unsigned
    }

    /// The OpenCL C type of a by-value kernel argument (kernel arguments cannot be `bool`:
    /// a `bool` is passed as a `uint`, 0 or 1).
    pub const fn cl_arg(self) -> &'static str {
        self.row().cl_arg
    }

    /// The Rust spelling.
    pub const fn rust_name(self) -> &'static str {
        self.row().rust
    }

    /// Bytes per element on the device.
    pub const fn size(self) -> usize {
        self.row().size
    }

    /// Bytes of a value of the type in a kernel ([`cl_name`](Self::cl_name)): the size
    /// but for the 16-bit floats, whose values are `float`s. What a kernel's own buffers
    /// of values (partial results) take per element.
    pub const fn value_size(self) -> usize {
        if self.is_stored_narrow() {
            4
        } else {
            self.row().size
        }
    }

    /// Bits per element on the device.
    pub const fn bits(self) -> u32 {
        self.row().size as u32 * 8
    }

    /// Bytes of a by-value kernel argument ([`cl_arg`](Self::cl_arg)).
    pub const fn arg_size(self) -> usize {
        self.row().arg_size
    }

    /// A floating-point type (`f16`, `bf16`, `f32`, `f64`).
    pub const fn is_float(self) -> bool {
        matches!(self.row().kind, Kind::Float)
    }

    /// A complex type (`c32`, `c64`): a pair of floats, real part first.
    pub const fn is_complex(self) -> bool {
        matches!(self.row().kind, Kind::Complex)
    }

    /// The type of a complex type's parts (`f32` for `c32`, `f64` for `c64`); a real
    /// type's own.
    pub const fn real(self) -> DType {
        match self {
            DType::C32 => DType::F32,
            DType::C64 => DType::F64,
            d => d,
        }
    }

    /// The complex type whose parts are this float type (`c32` for `f32` and the 16-bit
    /// floats, `c64` for `f64`); `None` for the other types. A complex type's own.
    pub const fn complex(self) -> Option<DType> {
        match self {
            DType::F16 | DType::BF16 | DType::F32 | DType::C32 => Some(DType::C32),
            DType::F64 | DType::C64 => Some(DType::C64),
            _ => None,
        }
    }

    /// The OpenCL C vector type of `w` values of this type ([`cl_name`](Self::cl_name)):
    /// `float4` for four `f32`s; `float8` for four `c32`s, whose lanes are pairs of
    /// components ([`lane`](Self::lane)).
    pub fn vector(self, w: usize) -> String {
        match self.is_complex() {
            true => format!("{}{}", self.real().cl_name(), 2 * w),
            false => format!("{}{w}", self.cl_name()),
        }
    }

    /// Lane `l` of vector value `v` of this type ([`vector`](Self::vector)): a component,
    /// or for a complex type the pair of components that is its `l`-th number.
    pub fn lane(self, v: &str, l: usize) -> String {
        match self.is_complex() {
            true => format!("{v}.s{:x}{:x}", 2 * l, 2 * l + 1),
            false => format!("{v}.s{l:x}"),
        }
    }

    /// A signed or unsigned integer type (not bool).
    pub const fn is_int(self) -> bool {
        matches!(self.row().kind, Kind::Signed | Kind::Unsigned)
    }

    /// A signed type (integers, floats and the complex types).
    pub const fn is_signed(self) -> bool {
        matches!(self.row().kind, Kind::Signed | Kind::Float | Kind::Complex)
    }

    /// A signed integer type.
    pub const fn is_signed_int(self) -> bool {
        matches!(self.row().kind, Kind::Signed)
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.rust_name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_in_variant_order_and_consistent() {
        for (i, d) in DType::ALL.into_iter().enumerate() {
            assert_eq!(d as usize, i);
            assert_eq!(format!("{d:?}").to_lowercase(), d.rust_name());
            assert_eq!(d.bits(), d.size() as u32 * 8);
            // The unsigned type of the width a value is computed in (a complex value is
            // no integer's: it has none).
            let unsigned = DType::ALL
                .iter()
                .find(|u| u.cl_name() == d.cl_unsigned() && !u.is_float() && **u != DType::Bool)
                .unwrap();
            let computed = if d.is_stored_narrow() { 4 } else { d.size() };
            assert!(!unsigned.is_signed(), "{d}");
            assert!(unsigned.size() == computed || d.is_complex(), "{d}");
            assert_eq!(d.is_complex(), d.real() != d, "{d}");
            assert_eq!(
                d.real().complex().is_some(),
                d.real().is_float() || d.is_complex(),
                "{d}"
            );
            assert_eq!(d.cl_value() == d.cl_name(), d != DType::Bool);
            assert_eq!(d.cl_memory() == d.cl_name(), !d.is_stored_narrow());
            assert!(d.arg_size() >= 4 && d.arg_size() >= d.size());
            let c = d.compute();
            assert!(c.is_float() == d.is_float() && c.compute() == c, "{d}");
            assert!(c.size() >= 4 || d == DType::Bool, "{d}");
            assert_eq!(c.is_signed(), d.is_signed());
        }
        assert_eq!(DType::Bool.cl_name(), "uchar");
        assert_eq!(DType::Bool.cl_arg(), "uint");
        assert_eq!(DType::I64.cl_unsigned(), "ulong");
        assert!(DType::F32.is_signed() && !DType::F32.is_int());
        assert!(!DType::Bool.is_int() && !DType::Bool.is_signed());
    }
}
