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
}

/// What kind of number a type is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Bool,
    Signed,
    Unsigned,
    Float,
}

/// One row of the table.
struct Row {
    rust: &'static str,
    /// In memory and in the runtime's kernels.
    cl_name: &'static str,
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

/// The table, in the order of [`DType`]'s variants.
#[rustfmt::skip]
const TABLE: [Row; 7] = [
    row("bool", "uchar",  "bool",   "uchar", "uint",   1, 4, Kind::Bool),
    row("i32",  "int",    "int",    "uint",  "int",    4, 4, Kind::Signed),
    row("u32",  "uint",   "uint",   "uint",  "uint",   4, 4, Kind::Unsigned),
    row("i64",  "long",   "long",   "ulong", "long",   8, 8, Kind::Signed),
    row("u64",  "ulong",  "ulong",  "ulong", "ulong",  8, 8, Kind::Unsigned),
    row("f32",  "float",  "float",  "uint",  "float",  4, 4, Kind::Float),
    row("f64",  "double", "double", "ulong", "double", 8, 8, Kind::Float),
];

#[allow(clippy::too_many_arguments)]
const fn row(
    rust: &'static str,
    cl_name: &'static str,
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
    pub const ALL: [DType; 7] = [
        DType::Bool,
        DType::I32,
        DType::U32,
        DType::I64,
        DType::U64,
        DType::F32,
        DType::F64,
    ];

    const fn row(self) -> &'static Row {
        &TABLE[self as usize]
    }

    /// The OpenCL C type of an element in memory, and of a value in the runtime's kernels
    /// (`bool` is `uchar`, 0 or 1).
    pub const fn cl_name(self) -> &'static str {
        self.row().cl_name
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

    /// Bits per element on the device.
    pub const fn bits(self) -> u32 {
        self.row().size as u32 * 8
    }

    /// Bytes of a by-value kernel argument ([`cl_arg`](Self::cl_arg)).
    pub const fn arg_size(self) -> usize {
        self.row().arg_size
    }

    /// `f32` or `f64`.
    pub const fn is_float(self) -> bool {
        matches!(self.row().kind, Kind::Float)
    }

    /// A signed or unsigned integer type (not bool).
    pub const fn is_int(self) -> bool {
        matches!(self.row().kind, Kind::Signed | Kind::Unsigned)
    }

    /// A signed type (integers and floats).
    pub const fn is_signed(self) -> bool {
        matches!(self.row().kind, Kind::Signed | Kind::Float)
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
            let unsigned = DType::ALL
                .iter()
                .find(|u| u.cl_name() == d.cl_unsigned())
                .unwrap();
            assert!(!unsigned.is_signed() && unsigned.size() == d.size(), "{d}");
            assert_eq!(d.cl_value() == d.cl_name(), d != DType::Bool);
        }
        assert_eq!(DType::Bool.cl_name(), "uchar");
        assert_eq!(DType::Bool.cl_arg(), "uint");
        assert_eq!(DType::I64.cl_unsigned(), "ulong");
        assert!(DType::F32.is_signed() && !DType::F32.is_int());
        assert!(!DType::Bool.is_int() && !DType::Bool.is_signed());
    }
}
