//! The operators of [`Array`] (`+`, `-`, `*`, `/`, `%`, `&`, `|`, `^`, unary `-` and `!`):
//! between arrays, with a scalar on either side, or a numeric array with a mask (0 and 1 of
//! its type), owned or borrowed; a complex array with a real array or scalar of its parts'
//! type (`&z * 2.0`, `&z + &x`); each records through the methods of `ops`.

use std::ops::{Add, BitAnd, BitOr, BitXor, Div, Mul, Neg, Not, Rem, Sub};

use crate::api::array::Array;
use crate::dtype::{c32, c64, Arithmetic, Element, Integer, Numeric, Signed};
use crate::graph::{BinaryOp, Side, UnaryOp};

macro_rules! binary_ops {
    ($bound:ident: $($Trait:ident $method:ident => $op:ident),*) => {$(
        impl<T: $bound> $Trait<&Array<T>> for &Array<T> {
            type Output = Array<T>;
            #[track_caller]
            fn $method(self, rhs: &Array<T>) -> Array<T> { self.binary(BinaryOp::$op, rhs.clone()) }
        }
        impl<T: $bound> $Trait<Array<T>> for &Array<T> {
            type Output = Array<T>;
            #[track_caller]
            fn $method(self, rhs: Array<T>) -> Array<T> { self.binary(BinaryOp::$op, rhs) }
        }
        impl<T: $bound> $Trait<&Array<T>> for Array<T> {
            type Output = Array<T>;
            #[track_caller]
            fn $method(self, rhs: &Array<T>) -> Array<T> { (&self).binary(BinaryOp::$op, rhs.clone()) }
        }
        impl<T: $bound> $Trait<Array<T>> for Array<T> {
            type Output = Array<T>;
            #[track_caller]
            fn $method(self, rhs: Array<T>) -> Array<T> { (&self).binary(BinaryOp::$op, rhs) }
        }
        impl<T: $bound> $Trait<T> for &Array<T> {
            type Output = Array<T>;
            #[track_caller]
            fn $method(self, rhs: T) -> Array<T> { self.binary_with(BinaryOp::$op, rhs) }
        }
        impl<T: $bound> $Trait<T> for Array<T> {
            type Output = Array<T>;
            #[track_caller]
            fn $method(self, rhs: T) -> Array<T> { (&self).binary_with(BinaryOp::$op, rhs) }
        }
    )*};
}

binary_ops!(Arithmetic: Add add => Add, Sub sub => Sub, Mul mul => Mul, Div div => Div);
binary_ops!(Numeric: Rem rem => Rem);
binary_ops!(Integer: BitAnd bitand => BitAnd, BitOr bitor => BitOr, BitXor bitxor => BitXor);

macro_rules! bool_ops {
    ($($Trait:ident $method:ident => $op:ident),*) => {$(
        impl $Trait<&Array<bool>> for &Array<bool> {
            type Output = Array<bool>;
            #[track_caller]
            fn $method(self, rhs: &Array<bool>) -> Array<bool> { self.binary(BinaryOp::$op, rhs.clone()) }
        }
        impl $Trait<Array<bool>> for Array<bool> {
            type Output = Array<bool>;
            #[track_caller]
            fn $method(self, rhs: Array<bool>) -> Array<bool> { (&self).binary(BinaryOp::$op, rhs) }
        }
        impl $Trait<bool> for &Array<bool> {
            type Output = Array<bool>;
            #[track_caller]
            fn $method(self, rhs: bool) -> Array<bool> { self.binary_with(BinaryOp::$op, rhs) }
        }
    )*};
}
bool_ops!(BitAnd bitand => BitAnd, BitOr bitor => BitOr, BitXor bitxor => BitXor);

/// Scalar on the left: `2.0 * &x`, `c32::new(0.0, 1.0) * &z`. Implemented per type
/// (Rust's orphan rule): `+ - * /` for every type with arithmetic, `%` for the numeric
/// ones.
macro_rules! scalar_lhs {
    (@op $t:ty: $($Trait:ident $method:ident => $op:ident),*) => {$(
        impl $Trait<&Array<$t>> for $t {
            type Output = Array<$t>;
            fn $method(self, r: &Array<$t>) -> Array<$t> { r.with_scalar(BinaryOp::$op, self.to_arg_bits(), <$t>::DTYPE, Side::Left) }
        }
        impl $Trait<Array<$t>> for $t {
            type Output = Array<$t>;
            fn $method(self, r: Array<$t>) -> Array<$t> { r.with_scalar(BinaryOp::$op, self.to_arg_bits(), <$t>::DTYPE, Side::Left) }
        }
    )*};
    (@arithmetic $($t:ty),*) => {$(
        scalar_lhs!(@op $t: Add add => Add, Sub sub => Sub, Mul mul => Mul, Div div => Div);
    )*};
    ($($t:ty),*) => {$(
        scalar_lhs!(@op $t: Add add => Add, Sub sub => Sub, Mul mul => Mul, Div div => Div, Rem rem => Rem);
    )*};
}
crate::dtype::for_each_numeric!(scalar_lhs);
scalar_lhs!(@arithmetic c32, c64);

/// A complex array beside a real array or scalar of its parts' type, either side: the
/// real operand shifts the real part (`+ -`) or scales both parts (`* /`), as
/// `num_complex`'s `Complex<T> * T` does; a real divided by a complex number is the
/// complex quotient.
macro_rules! mixed_ops {
    ($($c:ty, $r:ty);*) => {$(
        mixed_ops!(@op $c, $r: Add add => Add, Sub sub => Sub, Mul mul => Mul, Div div => Div);
    )*};
    (@op $c:ty, $r:ty: $($Trait:ident $method:ident => $op:ident),*) => {$(
        impl $Trait<&Array<$r>> for &Array<$c> {
            type Output = Array<$c>;
            #[track_caller]
            fn $method(self, rhs: &Array<$r>) -> Array<$c> { self.binary(BinaryOp::$op, rhs.clone()) }
        }
        impl $Trait<Array<$r>> for &Array<$c> {
            type Output = Array<$c>;
            #[track_caller]
            fn $method(self, rhs: Array<$r>) -> Array<$c> { self.binary(BinaryOp::$op, rhs) }
        }
        impl $Trait<&Array<$r>> for Array<$c> {
            type Output = Array<$c>;
            #[track_caller]
            fn $method(self, rhs: &Array<$r>) -> Array<$c> { (&self).binary(BinaryOp::$op, rhs.clone()) }
        }
        impl $Trait<Array<$r>> for Array<$c> {
            type Output = Array<$c>;
            #[track_caller]
            fn $method(self, rhs: Array<$r>) -> Array<$c> { (&self).binary(BinaryOp::$op, rhs) }
        }
        impl $Trait<&Array<$c>> for &Array<$r> {
            type Output = Array<$c>;
            #[track_caller]
            fn $method(self, rhs: &Array<$c>) -> Array<$c> { self.binary(BinaryOp::$op, rhs.clone()) }
        }
        impl $Trait<Array<$c>> for &Array<$r> {
            type Output = Array<$c>;
            #[track_caller]
            fn $method(self, rhs: Array<$c>) -> Array<$c> { self.binary(BinaryOp::$op, rhs) }
        }
        impl $Trait<&Array<$c>> for Array<$r> {
            type Output = Array<$c>;
            #[track_caller]
            fn $method(self, rhs: &Array<$c>) -> Array<$c> { (&self).binary(BinaryOp::$op, rhs.clone()) }
        }
        impl $Trait<Array<$c>> for Array<$r> {
            type Output = Array<$c>;
            #[track_caller]
            fn $method(self, rhs: Array<$c>) -> Array<$c> { (&self).binary(BinaryOp::$op, rhs) }
        }
        impl $Trait<$r> for &Array<$c> {
            type Output = Array<$c>;
            #[track_caller]
            fn $method(self, rhs: $r) -> Array<$c> { self.binary_with(BinaryOp::$op, rhs) }
        }
        impl $Trait<$r> for Array<$c> {
            type Output = Array<$c>;
            #[track_caller]
            fn $method(self, rhs: $r) -> Array<$c> { (&self).binary_with(BinaryOp::$op, rhs) }
        }
        impl $Trait<&Array<$c>> for $r {
            type Output = Array<$c>;
            fn $method(self, r: &Array<$c>) -> Array<$c> { r.with_scalar(BinaryOp::$op, self.to_arg_bits(), <$r>::DTYPE, Side::Left) }
        }
        impl $Trait<Array<$c>> for $r {
            type Output = Array<$c>;
            fn $method(self, r: Array<$c>) -> Array<$c> { r.with_scalar(BinaryOp::$op, self.to_arg_bits(), <$r>::DTYPE, Side::Left) }
        }
    )*};
}
mixed_ops!(c32, f32; c64, f64);

impl<T: Signed> Neg for &Array<T> {
    type Output = Array<T>;
    #[track_caller]
    fn neg(self) -> Array<T> {
        self.unary(UnaryOp::Neg)
    }
}
impl<T: Signed> Neg for Array<T> {
    type Output = Array<T>;
    #[track_caller]
    fn neg(self) -> Array<T> {
        self.unary(UnaryOp::Neg)
    }
}
impl Not for &Array<bool> {
    type Output = Array<bool>;
    #[track_caller]
    fn not(self) -> Array<bool> {
        self.unary(UnaryOp::Not)
    }
}
impl Not for Array<bool> {
    type Output = Array<bool>;
    #[track_caller]
    fn not(self) -> Array<bool> {
        self.unary(UnaryOp::Not)
    }
}
impl<T: Integer> Not for &Array<T> {
    type Output = Array<T>;
    #[track_caller]
    fn not(self) -> Array<T> {
        self.unary(UnaryOp::Not)
    }
}

/// A mask next to a numeric array in arithmetic counts as 0 and 1 of the array's type,
/// as in numpy: `&g * h.gt(0.0)` is `&g * h.gt(0.0).cast::<f32>()`. The cast is recorded
/// lazily and fuses with the operation. Implemented per numeric type, so that `bool`
/// never meets a blanket impl.
macro_rules! mask_ops {
    ($($t:ty),*) => {$(
        mask_ops!(@type $t: Add add => Add, Sub sub => Sub, Mul mul => Mul, Div div => Div, Rem rem => Rem);
    )*};
    (@type $t:ty: $($Trait:ident $method:ident => $op:ident),*) => {$(
        impl $Trait<&Array<bool>> for &Array<$t> {
            type Output = Array<$t>;
            #[track_caller]
            fn $method(self, rhs: &Array<bool>) -> Array<$t> { self.binary(BinaryOp::$op, rhs.cast::<$t>()) }
        }
        impl $Trait<Array<bool>> for &Array<$t> {
            type Output = Array<$t>;
            #[track_caller]
            fn $method(self, rhs: Array<bool>) -> Array<$t> { self.binary(BinaryOp::$op, rhs.cast::<$t>()) }
        }
        impl $Trait<&Array<bool>> for Array<$t> {
            type Output = Array<$t>;
            #[track_caller]
            fn $method(self, rhs: &Array<bool>) -> Array<$t> { (&self).binary(BinaryOp::$op, rhs.cast::<$t>()) }
        }
        impl $Trait<Array<bool>> for Array<$t> {
            type Output = Array<$t>;
            #[track_caller]
            fn $method(self, rhs: Array<bool>) -> Array<$t> { (&self).binary(BinaryOp::$op, rhs.cast::<$t>()) }
        }
        impl $Trait<&Array<$t>> for &Array<bool> {
            type Output = Array<$t>;
            #[track_caller]
            fn $method(self, rhs: &Array<$t>) -> Array<$t> { self.cast::<$t>().binary(BinaryOp::$op, rhs.clone()) }
        }
        impl $Trait<Array<$t>> for &Array<bool> {
            type Output = Array<$t>;
            #[track_caller]
            fn $method(self, rhs: Array<$t>) -> Array<$t> { self.cast::<$t>().binary(BinaryOp::$op, rhs) }
        }
        impl $Trait<&Array<$t>> for Array<bool> {
            type Output = Array<$t>;
            #[track_caller]
            fn $method(self, rhs: &Array<$t>) -> Array<$t> { self.cast::<$t>().binary(BinaryOp::$op, rhs.clone()) }
        }
        impl $Trait<Array<$t>> for Array<bool> {
            type Output = Array<$t>;
            #[track_caller]
            fn $method(self, rhs: Array<$t>) -> Array<$t> { self.cast::<$t>().binary(BinaryOp::$op, rhs) }
        }
    )*};
}
crate::dtype::for_each_numeric!(mask_ops);
