//! The sample frequencies of discrete Fourier transforms and the shift that centres the
//! zero frequency (numpy's `np.fft.fftfreq`, `rfftfreq`, `fftshift`, `ifftshift`). Lazy:
//! the frequencies are computed where they are read from their positions, the shifts are
//! views.

use crate::backend::context::Context;
use crate::dtype::{Element, Float};
use crate::error::{Error, Result};

use super::array::Array;
use super::views::{resolve_axis, AsAxes};

impl Context {
    /// The sample frequencies of an `n`-point discrete Fourier transform with sample
    /// spacing `d` (numpy's `np.fft.fftfreq(n, d)`): `[0, 1, ..., ⌈n/2⌉ - 1, -⌊n/2⌋,
    /// ..., -1] / (d n)`, in cycles per unit of `d`. Lazy.
    ///
    /// Errors: `d` is zero or not finite.
    ///
    /// ```
    /// # use lazycl::prelude::*;
    /// # fn main() -> lazycl::Result<()> {
    /// let ctx = Context::new()?;
    /// assert_eq!(ctx.fftfreq(5, 0.1f64)?.to_vec()?, [0.0, 2.0, 4.0, -4.0, -2.0]);
    /// assert_eq!(ctx.fftfreq(4, 1.0f32)?.to_vec()?, [0.0, 0.25, -0.5, -0.25]);
    /// # Ok(())
    /// # }
    /// ```
    #[track_caller]
    pub fn fftfreq<T: Float>(&self, n: usize, d: T) -> Result<Array<T>> {
        let scale = frequency_scale("fftfreq", n, d)?;
        let k = self.arange(0i64, n as i64, 1)?;
        // The upper half of the positions stands for the negative frequencies.
        let upper = k.ge(n.div_ceil(2) as i64).cast::<i64>() * n as i64;
        Ok((k - upper).cast::<T>() * T::__from_f64(scale))
    }

    /// The sample frequencies of the transform of `n` real samples with spacing `d`
    /// (numpy's `np.fft.rfftfreq(n, d)`): `[0, 1, ..., ⌊n/2⌋] / (d n)`, the `n / 2 + 1`
    /// frequencies a real input's transform keeps. Lazy.
    ///
    /// ```
    /// # use lazycl::prelude::*;
    /// # fn main() -> lazycl::Result<()> {
    /// let ctx = Context::new()?;
    /// assert_eq!(ctx.rfftfreq(5, 0.1f64)?.to_vec()?, [0.0, 2.0, 4.0]);
    /// # Ok(())
    /// # }
    /// ```
    #[track_caller]
    pub fn rfftfreq<T: Float>(&self, n: usize, d: T) -> Result<Array<T>> {
        let scale = frequency_scale("rfftfreq", n, d)?;
        let k = self.arange(0i64, (n / 2 + 1) as i64, 1)?;
        Ok(k.cast::<T>() * T::__from_f64(scale))
    }
}

/// `1 / (d n)`, the spacing of the frequencies; an error for a spacing `d` that is zero or
/// not finite. (For `n = 0` the frequencies are empty and the scale unused.)
fn frequency_scale<T: Float>(op: &str, n: usize, d: T) -> Result<f64> {
    let d = d.__to_f64();
    if d == 0.0 || !d.is_finite() {
        return Err(Error::InvalidShape(format!(
            "{op}(n = {n}, d = {d}): the sample spacing must be finite and not zero"
        )));
    }
    Ok(1.0 / (d * n.max(1) as f64))
}

impl<T: Element> Array<T> {
    /// The zero frequency moved to the centre along every axis (numpy's
    /// `np.fft.fftshift(x)`): each axis rolled by half its length. A view, lazy.
    ///
    /// ```
    /// # use lazycl::prelude::*;
    /// # fn main() -> lazycl::Result<()> {
    /// let ctx = Context::new()?;
    /// let f = ctx.fftfreq(5, 1.0f64)?;
    /// assert_eq!(f.fftshift().to_vec()?, [-0.4, -0.2, 0.0, 0.2, 0.4]);
    /// assert_eq!(f.fftshift().ifftshift().to_vec()?, f.to_vec()?);
    /// # Ok(())
    /// # }
    /// ```
    #[track_caller]
    pub fn fftshift(&self) -> Array<T> {
        let axes: Vec<isize> = (0..self.ndim() as isize).collect();
        self.shifted_halves("fftshift_axes", &axes[..], 1)
    }

    /// [`fftshift`](Self::fftshift) along `axes` only (negative axes count from the
    /// end).
    #[track_caller]
    pub fn fftshift_axes(&self, axes: &(impl AsAxes + ?Sized)) -> Array<T> {
        self.shifted_halves("fftshift_axes", axes, 1)
    }

    /// The inverse of [`fftshift`](Self::fftshift) (numpy's `np.fft.ifftshift(x)`):
    /// each axis rolled back by half its length, which differs from `fftshift` for odd
    /// lengths.
    #[track_caller]
    pub fn ifftshift(&self) -> Array<T> {
        let axes: Vec<isize> = (0..self.ndim() as isize).collect();
        self.shifted_halves("ifftshift_axes", &axes[..], -1)
    }

    /// [`ifftshift`](Self::ifftshift) along `axes` only.
    #[track_caller]
    pub fn ifftshift_axes(&self, axes: &(impl AsAxes + ?Sized)) -> Array<T> {
        self.shifted_halves("ifftshift_axes", axes, -1)
    }

    /// Each of `axes` rolled by `sign` times half its length (rounded down).
    #[track_caller]
    fn shifted_halves(&self, op: &str, axes: &(impl AsAxes + ?Sized), sign: isize) -> Array<T> {
        let written = axes.axis_values();
        let mut shifts = Vec::with_capacity(written.len());
        for &a in &written {
            match resolve_axis(op, a, self.shape(), false) {
                Ok(d) => shifts.push(sign * (self.shape()[d] / 2) as isize),
                Err(e) => return Array::failed(&self.node.ctx, self.shape().to_vec(), e),
            }
        }
        self.roll_axes(&shifts, &written[..])
    }
}
