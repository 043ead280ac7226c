//! The scalar types of the kernel subset: their Rust and OpenCL C spellings and the
//! properties the type rules and the emitter ask about, read from the element-type table
//! the runtime shares (`lazycl-clc`); `usize` is its `u64`. The complex types `c32` and
//! `c64` (`num_complex::Complex32`/`Complex64`) are scalars too: one value each, a
//! `float2`/`double2` in OpenCL C.

pub use lazycl_clc::DType;

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
    I8,
    U8,
    I16,
    U16,
    /// `half::f16`: a `float` in OpenCL C, stored as `half`.
    F16,
    /// `half::bf16`: a `float` in OpenCL C, stored as `ushort`.
    BF16,
    /// `num_complex::Complex32`: a `float2`, real part in `.x`.
    C32,
    /// `num_complex::Complex64`: a `double2`, real part in `.x`.
    C64,
}

impl Scalar {
    /// The element types (of arrays and `expr!` operands), in the order `expr!` tries
    /// them: floats, integers, `bool`, then the narrow types, then the complex types (so
    /// that the first variants and instances, and their numbering, are those of the 32-
    /// and 64-bit real types).
    pub const ELEMENTS: [Scalar; 15] = [
        Scalar::F32,
        Scalar::F64,
        Scalar::I32,
        Scalar::U32,
        Scalar::I64,
        Scalar::U64,
        Scalar::Bool,
        Scalar::F16,
        Scalar::BF16,
        Scalar::I8,
        Scalar::U8,
        Scalar::I16,
        Scalar::U16,
        Scalar::C32,
        Scalar::C64,
    ];

    /// The types a `{float}` literal's class of `expr!` operands may have: the floats,
    /// then the complex types (`z * 2.0` scales a complex number, as `num-complex`'s
    /// `Complex<T> * T` does).
    pub const FLOATS_AND_COMPLEX: [Scalar; 6] = [
        Scalar::F32,
        Scalar::F64,
        Scalar::F16,
        Scalar::BF16,
        Scalar::C32,
        Scalar::C64,
    ];

    /// The integer element types, in the order `expr!` tries them.
    pub const INTEGERS: [Scalar; 8] = [
        Scalar::I32,
        Scalar::U32,
        Scalar::I64,
        Scalar::U64,
        Scalar::I8,
        Scalar::U8,
        Scalar::I16,
        Scalar::U16,
    ];

    pub const ALL: [Scalar; 16] = [
        Scalar::Bool,
        Scalar::I32,
        Scalar::U32,
        Scalar::I64,
        Scalar::U64,
        Scalar::Usize,
        Scalar::F32,
        Scalar::F64,
        Scalar::I8,
        Scalar::U8,
        Scalar::I16,
        Scalar::U16,
        Scalar::F16,
        Scalar::BF16,
        Scalar::C32,
        Scalar::C64,
    ];

    /// The element type whose facts (OpenCL C names, width, signedness) this scalar has:
    /// `usize` is `u64` (`ulong`: 64 bits on every device, so host and device agree).
    pub fn elem(self) -> DType {
        match self {
            Scalar::Bool => DType::Bool,
            Scalar::I32 => DType::I32,
            Scalar::U32 => DType::U32,
            Scalar::I64 => DType::I64,
            Scalar::U64 | Scalar::Usize => DType::U64,
            Scalar::F32 => DType::F32,
            Scalar::F64 => DType::F64,
            Scalar::I8 => DType::I8,
            Scalar::U8 => DType::U8,
            Scalar::I16 => DType::I16,
            Scalar::U16 => DType::U16,
            Scalar::F16 => DType::F16,
            Scalar::BF16 => DType::BF16,
            Scalar::C32 => DType::C32,
            Scalar::C64 => DType::C64,
        }
    }

    /// A 16-bit float: a `float` value in OpenCL C, rounded to 16 bits where it is stored
    /// or converted to the type.
    pub fn is_narrow_float(self) -> bool {
        self.elem().is_stored_narrow()
    }

    /// A complex type (`c32`, `c64`).
    pub fn is_complex(self) -> bool {
        self.elem().is_complex()
    }

    /// The type of a complex type's parts (`f32` for `c32`); a real type's own.
    pub fn real(self) -> Scalar {
        match self {
            Scalar::C32 => Scalar::F32,
            Scalar::C64 => Scalar::F64,
            s => s,
        }
    }

    /// The complex type whose parts have this type (`c32` for `f32`, `c64` for `f64`).
    pub fn complex(self) -> Option<Scalar> {
        match self {
            Scalar::F32 | Scalar::C32 => Some(Scalar::C32),
            Scalar::F64 | Scalar::C64 => Some(Scalar::C64),
            _ => None,
        }
    }

    /// Whether a value of the type is or holds a `double` (needs `cl_khr_fp64`).
    pub fn needs_fp64(self) -> bool {
        self.real() == Scalar::F64
    }

    /// The type as generated Rust code names it: a primitive's name, or the runtime's
    /// re-export of the `half` or `num-complex` type (`::lazycl::__private::f16`,
    /// `::lazycl::__private::c32`).
    pub fn rust_type(self, span: proc_macro2::Span) -> proc_macro2::TokenStream {
        let id = proc_macro2::Ident::new(self.rust(), span);
        match self.is_narrow_float() || self.is_complex() {
            true => quote::quote_spanned! {span=> ::lazycl::__private::#id },
            false => quote::quote! { #id },
        }
    }

    /// The runtime's `DType` of an element type (`None` for `usize`, which is no element
    /// type of arrays).
    pub fn dtype(self) -> Option<DType> {
        (self != Scalar::Usize).then(|| self.elem())
    }

    /// The Rust spelling.
    pub fn rust(self) -> &'static str {
        match self {
            Scalar::Usize => "usize",
            t => t.elem().rust_name(),
        }
    }

    /// Parses a Rust type name (the complex types also as `num-complex` names them,
    /// `Complex32` and `Complex64`).
    pub fn from_rust(s: &str) -> Option<Scalar> {
        match s {
            "Complex32" => Some(Scalar::C32),
            "Complex64" => Some(Scalar::C64),
            _ => Scalar::ALL.iter().copied().find(|t| t.rust() == s),
        }
    }

    /// The OpenCL C type of a value (`usize` is `ulong`).
    pub fn cl(self) -> &'static str {
        self.elem().cl_value()
    }

    /// The OpenCL C type of an element in memory (`bool` is `uchar`, `f16` is `half`,
    /// `bf16` is `ushort`).
    pub fn cl_storage(self) -> &'static str {
        self.elem().cl_memory()
    }

    /// The unsigned OpenCL type of the same width (integers only).
    pub fn cl_unsigned(self) -> &'static str {
        self.elem().cl_unsigned()
    }

    pub fn is_int(self) -> bool {
        self.elem().is_int()
    }

    pub fn is_float(self) -> bool {
        self.elem().is_float()
    }

    pub fn is_signed_int(self) -> bool {
        self.elem().is_signed_int()
    }

    pub fn bits(self) -> u32 {
        self.elem().bits()
    }

    /// The range of an integer type as (min, max).
    pub fn int_range(self) -> (i128, i128) {
        let bits = self.bits();
        if self.is_signed_int() {
            (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
        } else {
            (0, (1i128 << bits) - 1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_ranges() {
        assert_eq!(Scalar::I32.int_range(), (i32::MIN as i128, i32::MAX as i128));
        assert_eq!(Scalar::U32.int_range(), (0, u32::MAX as i128));
        assert_eq!(Scalar::I64.int_range(), (i64::MIN as i128, i64::MAX as i128));
        assert_eq!(Scalar::Usize.int_range(), (0, u64::MAX as i128));
        assert_eq!(Scalar::Usize.cl(), "ulong");
        assert_eq!(Scalar::Bool.cl(), "bool");
        assert_eq!(Scalar::Bool.cl_storage(), "uchar");
        assert_eq!(Scalar::C64.cl(), "double2");
        assert_eq!(Scalar::from_rust("Complex32"), Some(Scalar::C32));
        assert_eq!(Scalar::C32.real(), Scalar::F32);
        assert!(Scalar::C64.needs_fp64() && !Scalar::C32.needs_fp64() && Scalar::F64.needs_fp64());
        assert!(!Scalar::C32.is_float() && !Scalar::C32.is_int());
    }
}
