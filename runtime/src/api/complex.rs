//! Complex arrays' own methods (parts, conjugate, polar form, complex powers) and the
//! constructors of complex arrays from real ones. Their arithmetic is in `operators`,
//! their `exp`/`ln`/`sqrt`/`powf`/`abs`, sums and products beside the real types' in
//! `ops` and `reduce`: one method for both, as in numpy.

use crate::api::array::Array;
use crate::api::ops::{CtxRef, Operand};
use crate::dtype::{ComplexFloat, ComplexPart};
use crate::graph::{BinaryOp, UnaryOp};

/// The parts and the polar form of complex arrays (`num_complex`'s names).
///
/// ```
/// # use lazycl::prelude::*;
/// # fn main() -> lazycl::Result<()> {
/// let ctx = Context::new()?;
/// let z = ctx.from_slice(&[c32::new(3.0, 4.0), c32::new(0.0, -1.0)])?;
/// assert_eq!(z.re().to_vec()?, [3.0, 0.0]);
/// assert_eq!(z.abs().to_vec()?, [5.0, 1.0]);
/// assert_eq!(z.conj().to_vec()?, [c32::new(3.0, -4.0), c32::new(0.0, 1.0)]);
/// assert_eq!((&z * &z.conj()).to_vec()?, [c32::new(25.0, 0.0), c32::new(1.0, 0.0)]);
/// # Ok(())
/// # }
/// ```
impl<T: ComplexFloat> Array<T> {
    /// The real parts.
    #[track_caller]
    pub fn re(&self) -> Array<T::Real> {
        self.unary(UnaryOp::Re)
    }
    /// The imaginary parts.
    #[track_caller]
    pub fn im(&self) -> Array<T::Real> {
        self.unary(UnaryOp::Im)
    }
    /// The complex conjugates, `re - i im`.
    #[track_caller]
    pub fn conj(&self) -> Array<T> {
        self.unary(UnaryOp::Conj)
    }
    /// The arguments (angles), `atan2(im, re)`, in `[-π, π]`.
    #[track_caller]
    pub fn arg(&self) -> Array<T::Real> {
        self.unary(UnaryOp::Arg)
    }
    /// The squared magnitudes, `re² + im²` (cheaper than `abs()`, no square root).
    #[track_caller]
    pub fn norm_sqr(&self) -> Array<T::Real> {
        self.unary(UnaryOp::NormSqr)
    }
    /// `self^exp` with a complex exponent: `e^(exp ln self)`, and 1 for `exp = 0`.
    #[track_caller]
    pub fn powc(&self, exp: impl Operand<T>) -> Array<T> {
        self.binary_with(BinaryOp::Pow, exp)
    }
}

/// Complex arrays made from real ones.
///
/// ```
/// # use lazycl::prelude::*;
/// # fn main() -> lazycl::Result<()> {
/// let ctx = Context::new()?;
/// let re = ctx.from_slice(&[1.0f32, 2.0])?;
/// let im = ctx.from_slice(&[0.5f32, -1.0])?;
/// assert_eq!(re.complex(&im).to_vec()?, [c32::new(1.0, 0.5), c32::new(2.0, -1.0)]);
/// // e^(iπ/2) = i: one kernel computes the cosine, the sine and the pairs.
/// let theta = ctx.from_slice(&[std::f32::consts::FRAC_PI_2])?;
/// let z = ctx.ones::<f32>([1])?.from_polar(&theta).to_vec()?;
/// assert!(z[0].re.abs() < 1e-6 && (z[0].im - 1.0).abs() < 1e-6);
/// # Ok(())
/// # }
/// ```
impl<T: ComplexPart> Array<T> {
    /// The complex numbers `self + i im` (torch's `complex`), broadcast together; `im` is
    /// an array or a scalar.
    #[track_caller]
    pub fn complex(&self, im: impl Operand<T>) -> Array<T::Complex> {
        self.binary_with(BinaryOp::Complex, im)
    }
    /// The complex numbers of magnitude `self` and angle `theta`, `self (cos θ + i sin θ)`
    /// (`num_complex`'s `from_polar`, torch's `polar`).
    #[track_caller]
    pub fn from_polar(&self, theta: impl Operand<T>) -> Array<T::Complex> {
        let theta = theta.into_array(CtxRef(&self.node.ctx));
        (self * &theta.cos()).complex(self * &theta.sin())
    }
}
