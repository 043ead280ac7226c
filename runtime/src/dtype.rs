//! Element types: the sealed [`Element`] trait and its run-time twin [`DType`] (the table
//! in `lazycl-clc`, which the macros share: OpenCL C names, sizes, signedness).

use std::fmt;

/// The element type of an array, known at run time: the table of element types that the
/// macros share (`lazycl-clc`), re-exported.
pub use lazycl_clc::DType;

/// How a random element is drawn from Philox's words (the bit layouts, `lazycl-clc`'s).
pub(crate) use lazycl_clc::Draw;

/// The element type of every position an operation returns: `argmin`/`argmax`,
/// `argsort`, `topk`'s indices, `nonzero`, `searchsorted`, `unique`'s inverse, and the
/// counts of `bincount` and `histogram` (JAX's `int32` choice, unsigned).
///
/// 32 bits, not 64: positions are the payload that sorts and selections move, and on a
/// GPU half the bytes is half the time. An operation whose positions or counts could
/// pass `u32::MAX` (an axis, or an input, longer than that) refuses with an error
/// instead of wrapping. `take`, `take_along_axis` and the scatters accept any integer
/// element type as indices.
pub type Index = u32;

mod sealed {
    pub trait Sealed {}
}

/// A Rust type that can live in a device array. Sealed: implemented for `bool`, the
/// integers `i8 u8 i16 u16 i32 u32 i64 u64`, the floats `f32`, `f64` and the `half`
/// crate's [`f16`](half::f16) and [`bf16`](half::bf16), and the complex numbers
/// [`c32`] and [`c64`] (`num_complex`'s).
///
/// The 16-bit floats are stored in 16 bits and computed in `f32` on every device (the
/// core `vload_half`/`vstore_half_rte` and `bf16`'s bits are all a kernel needs, no
/// `cl_khr_fp16`): a kernel rounds a value to 16 bits, to the nearest with ties to even,
/// where it stores it and where a cast asks for it, so a fused chain rounds once.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an element type (`bool`, `i8`..`u64`, `f16`, `bf16`, `f32`, `f64`, `c32` or `c64`)",
    label = "not an element type",
    note = "arrays hold, and expr! takes as scalar operands, `bool i8 u8 i16 u16 i32 u32 i64 u64 f16 bf16 f32 f64` \
            (`f16`/`bf16` from the `half` crate, `lazycl::half`), and arrays hold `c32 c64` \
            (`num_complex::Complex32`/`Complex64`); convert a host value first (`n as u64` for a \
            `usize`); an array operand is an `Array<T>` or `&Array<T>`",
    note = "in a function generic over the element type, bound the type parameter by `lazycl::Element` (or \
            `Numeric`, `Float`, ...): `fn f<T: lazycl::Element>(x: &Array<T>)`"
)]
pub trait Element: sealed::Sealed + Copy + Send + Sync + PartialEq + fmt::Debug + Default + 'static {
    /// The run-time type tag.
    const DTYPE: DType;

    /// The OpenCL C type name (`float`, `int`, ...).
    const CL_TYPE: &'static str;
    /// The value as the little-endian bytes of a kernel argument (`bool` is a `uint`).
    fn to_arg_bits(self) -> ScalarBits;
    /// `v` converted as Rust's `as` does (`bool`: not zero). For counts and means.
    #[doc(hidden)]
    fn __from_f64(v: f64) -> Self;
    /// The value as an `f64`, as Rust's `as` converts it (`bool`: 0 or 1).
    #[doc(hidden)]
    fn __to_f64(self) -> f64;
}

/// A scalar's kernel-argument bytes: 4, 8 or 16 bytes (a `c64`), stored in a `u128`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ScalarBits {
    /// The raw bits, little-endian (low bytes used when `size` is under 16).
    pub bits: u128,
    /// 4, 8 or 16.
    pub size: u8,
}

impl ScalarBits {
    pub(crate) fn bytes(&self) -> [u8; 16] {
        self.bits.to_le_bytes()
    }

    /// The low 64 bits (every scalar but a complex one fits them).
    pub(crate) fn low(&self) -> u64 {
        self.bits as u64
    }
}

macro_rules! element {
    ($t:ty, $d:ident, |$v:ident| $bits:expr_2021, |$f:ident| $from:expr_2021, |$x:ident| $to:expr_2021) => {
        impl sealed::Sealed for $t {}
        impl Element for $t {
            const DTYPE: DType = DType::$d;

            const CL_TYPE: &'static str = DType::$d.cl_name();
            #[inline]
            fn to_arg_bits(self) -> ScalarBits {
                let $v = self;
                ScalarBits {
                    bits: $bits,
                    size: DType::$d.arg_size() as u8,
                }
            }
            #[inline]
            fn __from_f64($f: f64) -> Self {
                $from
            }
            #[inline]
            fn __to_f64(self) -> f64 {
                let $x = self;
                $to
            }
        }
    };
}

element!(bool, Bool, |v| u128::from(v), |f| f != 0.0, |x| f64::from(
    u8::from(x)
));
element!(i32, I32, |v| u128::from(v as u32), |f| f as i32, |x| f64::from(x));
element!(u32, U32, |v| u128::from(v), |f| f as u32, |x| f64::from(x));
element!(i64, I64, |v| u128::from(v as u64), |f| f as i64, |x| x as f64);
element!(u64, U64, |v| u128::from(v), |f| f as u64, |x| x as f64);
element!(
    f32,
    F32,
    |v| u128::from(v.to_bits()),
    |f| f as f32,
    |x| f64::from(x)
);
element!(f64, F64, |v| u128::from(v.to_bits()), |f| f, |x| x);
element!(i8, I8, |v| u128::from(i32::from(v) as u32), |f| f as i8, |x| {
    f64::from(x)
});
element!(u8, U8, |v| u128::from(v), |f| f as u8, |x| f64::from(x));
element!(i16, I16, |v| u128::from(i32::from(v) as u32), |f| f as i16, |x| {
    f64::from(x)
});
element!(u16, U16, |v| u128::from(v), |f| f as u16, |x| f64::from(x));
element!(
    half::f16,
    F16,
    |v| u128::from(v.to_f32().to_bits()),
    |f| half::f16::from_f64(f),
    |x| x.to_f64()
);
element!(
    half::bf16,
    BF16,
    |v| u128::from(v.to_f32().to_bits()),
    |f| half::bf16::from_f64(f),
    |x| x.to_f64()
);

/// The complex number of two `f32`s ([`num_complex::Complex32`]): OpenCL `float2`.
#[allow(non_camel_case_types)]
pub type c32 = num_complex::Complex32;
/// The complex number of two `f64`s ([`num_complex::Complex64`]): OpenCL `double2`.
#[allow(non_camel_case_types)]
pub type c64 = num_complex::Complex64;

element!(
    c32,
    C32,
    |v| u128::from(v.re.to_bits()) | u128::from(v.im.to_bits()) << 32,
    |f| c32::new(f as f32, 0.0),
    |x| f64::from(x.re)
);
element!(
    c64,
    C64,
    |v| u128::from(v.re.to_bits()) | u128::from(v.im.to_bits()) << 64,
    |f| c64::new(f, 0.0),
    |x| x.re
);

/// `$m!(T1, T2, ...)` over every numeric element type: the one list that the impls per
/// type (a scalar on the left of an operator, a mask beside a number, an `expr!` scalar
/// operand) are written from, since a trait impl for a foreign type names it.
macro_rules! for_each_numeric {
    ($m:ident) => {
        $m!(
            f32,
            f64,
            i32,
            u32,
            i64,
            u64,
            i8,
            u8,
            i16,
            u16,
            half::f16,
            half::bf16
        );
    };
}
pub(crate) use for_each_numeric;

/// Element types with arithmetic (`+ - * /`, sums, products, means): the numeric types
/// and the complex ones.
///
/// Sums and products (`sum`, `prod`, `cumsum`, `cumprod`, `mean` and their axis forms)
/// of an 8- or 16-bit integer return the 32-bit integer of its signedness, wrapping
/// there; of a 16-bit float, the same 16-bit float, accumulated in `f32` and rounded
/// once ([`Arithmetic::Sum`]). This is JAX's rule: 32 bits is a GPU's native width, a `u8`
/// sum that wraps at 256 is rarely what anyone wants, and numpy's and torch's 64-bit
/// results would double the bytes every later kernel moves.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an element type with arithmetic (an integer, a float, `c32` or `c64`)",
    label = "arithmetic needs a numeric or complex element type",
    note = "a `bool` mask counts as 0 and 1 next to a numeric array (`&x * mask`); for arithmetic of its own, \
            convert it: `mask.cast::<f32>()` (`as` inside expr!), or select with `mask.select(&a, &b)`",
    note = "in a function generic over the element type, bound the type parameter by `lazycl::Arithmetic` \
            (or `lazycl::Numeric` for ordered types): `fn f<T: lazycl::Arithmetic>(x: &Array<T>)`"
)]
pub trait Arithmetic: Element {
    /// The element type of this type's sums and products: `i32` for `i8` and `i16`, `u32`
    /// for `u8` and `u16`, else the type itself.
    type Sum: Arithmetic;
    /// The type of this type's real part and magnitude (`abs`): a complex type's parts
    /// (`f32` for [`c32`]), a real type itself.
    type Real: Numeric;
}

/// Numeric element types (everything but `bool` and the complex types): ordered, so
/// that comparisons, `min`/`max`, sorts and selections are defined on these, and
/// arithmetic ([`Arithmetic`]).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a numeric element type (an integer, `f16`, `bf16`, `f32` or `f64`)",
    label = "needs ordered numeric elements",
    note = "a `bool` mask counts as 0 and 1 next to a numeric array (`&x * mask`); for arithmetic of its own, \
            convert it: `mask.cast::<f32>()` (`as` inside expr!), or select with `mask.select(&a, &b)`",
    note = "complex numbers (`c32`, `c64`) have arithmetic but no order: compare their `abs()` or `re()` instead",
    note = "in a function generic over the element type, bound the type parameter by `lazycl::Numeric`: \
            `fn f<T: lazycl::Numeric>(x: &Array<T>)`"
)]
pub trait Numeric: Arithmetic<Real = Self> + PartialOrd {
    /// The type kernels reduce, scan and sort this type in ([`DType::compute`]): `f32`
    /// for the 16-bit floats, `i32`/`u32` for the 8- and 16-bit integers, else the type
    /// itself.
    type Compute: Numeric;
}

macro_rules! numeric {
    ($($t:ty => $sum:ty, $compute:ty);* $(;)?) => {$(
        impl Arithmetic for $t {
            type Sum = $sum;
            type Real = $t;
        }
        impl Numeric for $t {
            type Compute = $compute;
        }
    )*};
}

numeric!(
    i8 => i32, i32; u8 => u32, u32; i16 => i32, i32; u16 => u32, u32;
    i32 => i32, i32; u32 => u32, u32; i64 => i64, i64; u64 => u64, u64;
    half::f16 => half::f16, f32; half::bf16 => half::bf16, f32; f32 => f32, f32; f64 => f64, f64;
);

/// The inexact element types, float and complex (numpy's `inexact`): `exp`, `ln`,
/// `sqrt`, `powf` and means are defined on these.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a float or complex element type (`f16`, `bf16`, `f32`, `f64`, `c32` or `c64`)",
    label = "needs float or complex elements",
    note = "convert an integer array first: `x.cast::<f32>()` (`x as f32` inside expr!)",
    note = "in a function generic over the element type, bound the type parameter by `lazycl::Inexact` \
            (or `lazycl::Float`): `fn f<T: lazycl::Inexact>(x: &Array<T>)`"
)]
pub trait Inexact: Arithmetic<Sum = Self> {}

/// Complex element types ([`c32`], [`c64`]): arithmetic, `re`, `im`, `conj`, `abs`,
/// `arg`, `norm_sqr`, `exp`, `ln`, `sqrt`, `powf`, equality, sums, products and means.
/// No order: `<`, `min`, sorts and selections are not defined on these.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a complex element type (`c32` or `c64`)",
    label = "needs complex elements",
    note = "make a complex array from real ones with `re.complex(&im)` or `r.from_polar(&theta)`, \
            or convert with `x.cast::<c32>()`",
    note = "in a function generic over the element type, bound the type parameter by `lazycl::ComplexFloat`: \
            `fn f<T: lazycl::ComplexFloat>(x: &Array<T>)`"
)]
pub trait ComplexFloat: Inexact {}
impl Arithmetic for c32 {
    type Sum = c32;
    type Real = f32;
}
impl Arithmetic for c64 {
    type Sum = c64;
    type Real = f64;
}
impl Inexact for c32 {}
impl Inexact for c64 {}
impl ComplexFloat for c32 {}
impl ComplexFloat for c64 {}

/// The float types that are the parts of a complex type (`f32`, `f64`): complex arrays
/// are made from arrays of these (`re.complex(&im)`, `r.from_polar(&theta)`).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not the part of a complex element type (`f32` or `f64`)",
    label = "complex numbers have `f32` or `f64` parts",
    note = "convert a 16-bit float array first: `x.cast::<f32>()`"
)]
pub trait ComplexPart: Float {
    /// The complex type with parts of this type.
    type Complex: ComplexFloat + Arithmetic<Real = Self>;
}
impl ComplexPart for f32 {
    type Complex = c32;
}
impl ComplexPart for f64 {
    type Complex = c64;
}

/// Floating-point element types: the math methods (`sqrt`, `exp`, ...) are defined on these.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a floating-point element type (`f16`, `bf16`, `f32` or `f64`)",
    label = "needs floating-point elements",
    note = "float methods (`sqrt`, `exp`, ...), float literals (`2.0`), float constants and gradients (`grad`, \
            `value_and_grad`: an integer has no derivative) apply to `f16`, `bf16`, `f32` and `f64`; \
            convert an array first: `x.cast::<f32>()` (`x as f32` inside expr!)",
    note = "complex types (`c32`, `c64`) are no `Float`: they have methods of their own (`z.exp()`, `z.abs()`, \
            `z.conj()`; num-complex's `z.norm()` and `z.re` inside expr! and #[kernel]) and no gradients",
    note = "in a function generic over the element type, bound the type parameter by `lazycl::Float`: \
            `fn f<T: lazycl::Float>(x: &Array<T>)`"
)]
pub trait Float: Numeric + Inexact {}
impl Inexact for f32 {}
impl Inexact for f64 {}
impl Inexact for half::f16 {}
impl Inexact for half::bf16 {}
impl Float for f32 {}
impl Float for f64 {}
impl Float for half::f16 {}
impl Float for half::bf16 {}

/// Integer element types (`i8 u8 i16 u16 i32 u32 i64 u64`): bitwise operations and `pow`
/// are defined on these.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an integer element type (`i8`, `u8`, `i16`, `u16`, `i32`, `u32`, `i64` or `u64`)",
    label = "needs integer elements",
    note = "indices, counts, bitwise operators, shifts and integer literals (`2`) need integers; convert an array \
            first: `x.cast::<u32>()` (`x as u32` inside expr!), or write `2.0` for a float",
    note = "in a function generic over the element type, bound the type parameter by `lazycl::Integer`: \
            `fn f<T: lazycl::Integer>(x: &Array<T>)`"
)]
pub trait Integer: Numeric {}
impl Integer for i8 {}
impl Integer for u8 {}
impl Integer for i16 {}
impl Integer for u16 {}
impl Integer for i32 {}
impl Integer for u32 {}
impl Integer for i64 {}
impl Integer for u64 {}

/// Element types with bitwise operators (`& | ^ !`): the integers and `bool`. Every
/// [`Integer`] is one, so an `expr!` such as `x & m` (valid for both) compiles inside a
/// function generic over `T: Integer`.
///
/// ```
/// use lazycl::prelude::*;
///
/// fn masked<T: lazycl::Bitwise>(x: &Array<T>, m: T) -> Array<T> {
///     expr!(x & m)
/// }
///
/// # fn main() -> lazycl::Result<()> {
/// let ctx = Context::new()?;
/// assert_eq!(masked(&ctx.from_slice(&[6u32, 7])?, 3).to_vec()?, [2, 3]);
/// assert_eq!(masked(&ctx.from_slice(&[true, false])?, true).to_vec()?, [true, false]);
/// # Ok(())
/// # }
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an element type with bitwise operators (an integer or `bool`)",
    label = "needs integer or `bool` elements",
    note = "`& | ^ !` apply to integers and `bool`; convert a float array first: `x.cast::<u32>()` (`as` inside expr!)",
    note = "in a function generic over the element type, bound the type parameter by `lazycl::Integer` (or \
            `lazycl::Bitwise` to admit `bool`): `fn f<T: lazycl::Integer>(x: &Array<T>)`"
)]
pub trait Bitwise: Element {}
impl<T: Integer> Bitwise for T {}
impl Bitwise for bool {}

/// Signed element types: unary minus is defined on these (the signed integers, the
/// floats and the complex types).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a signed element type (`i8`, `i16`, `i32`, `i64`, a float or a complex type)",
    label = "needs signed elements",
    note = "negation and `abs` apply to signed types; convert an unsigned array first: `x.cast::<i64>()` \
            (`as` inside expr!)",
    note = "in a function generic over the element type, bound the type parameter by `lazycl::Signed`: \
            `fn f<T: lazycl::Signed>(x: &Array<T>)`"
)]
pub trait Signed: Arithmetic {}
impl Signed for i8 {}
impl Signed for i16 {}
impl Signed for i32 {}
impl Signed for i64 {}
impl Signed for f32 {}
impl Signed for f64 {}
impl Signed for half::f16 {}
impl Signed for half::bf16 {}
impl Signed for c32 {}
impl Signed for c64 {}
