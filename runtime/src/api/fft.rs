//! Discrete Fourier transforms (numpy's `np.fft`): `fft`, `ifft`, `fft2`, `fftn`, `rfft`,
//! `irfft` along any axis, of any length, `c32` and `c64`. Lazy like every operation: a
//! transform is its passes ([`FftSpec`], one kernel each, `plan::fft`), the operand's
//! producers computed in the first pass's loads and the consumers in the last pass's
//! stores. A length with a prime factor above 7 is Bluestein's algorithm: a convolution
//! of power-of-two transforms with a chirp computed where it is read.

use ndarray::SliceInfoElem;

use crate::api::array::Array;
use crate::api::construct::positions;
use crate::api::ops::record;
use crate::api::views::{AsAxes, AsAxis};
use crate::dtype::{ComplexFloat, ComplexPart, Element};
use crate::error::Error;
use crate::graph::{BinaryOp, FftDevice, FftReal, FftSpec, Op, UnaryOp};

/// How a transform is scaled (numpy's `norm`): which direction divides by `n`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FftNorm {
    /// The forward transform unscaled, the inverse divided by `n` (numpy's default).
    #[default]
    Backward,
    /// Both directions divided by `√n`: the transform is unitary.
    Ortho,
    /// The forward transform divided by `n`, the inverse unscaled.
    Forward,
}

impl FftNorm {
    /// The factor of a transform of `n` points in the direction `inverse` says.
    fn scale(self, n: usize, inverse: bool) -> f64 {
        match (self, inverse) {
            (FftNorm::Backward, false) | (FftNorm::Forward, true) => 1.0,
            (FftNorm::Backward, true) | (FftNorm::Forward, false) => 1.0 / n as f64,
            (FftNorm::Ortho, _) => 1.0 / (n as f64).sqrt(),
        }
    }
}

/// Transforms of complex arrays.
///
/// ```
/// # use lazycl::prelude::*;
/// # fn main() -> lazycl::Result<()> {
/// let ctx = Context::new()?;
/// let x = ctx.from_slice(&[c32::new(1.0, 0.0), c32::new(2.0, 0.0), c32::new(0.0, 1.0)])?;
/// let back = x.fft(0).ifft(0).to_vec()?;
/// assert!((back[2] - c32::new(0.0, 1.0)).norm() < 1e-6);
/// // A windowed power spectrum: the window in the loads, the magnitude in the stores.
/// let window = ctx.from_slice(&[0.5f32, 1.0, 0.5])?;
/// let power = (&x * &window).fft(0).norm_sqr().to_vec()?;
/// assert!((power[0] - 6.5).abs() < 1e-5); // |0.5 + 2 + 0.5i|²
/// # Ok(())
/// # }
/// ```
impl<T: ComplexFloat> Array<T> {
    /// The discrete Fourier transform along `axis`, `X_k = Σ_j x_j e^(-2πi jk/n)`
    /// (numpy's `fft`, unscaled).
    #[track_caller]
    pub fn fft(&self, axis: impl AsAxis) -> Array<T> {
        self.fft_norm(axis, FftNorm::Backward)
    }
    /// The inverse transform along `axis`, `x_j = (1/n) Σ_k X_k e^(2πi jk/n)` (numpy's
    /// `ifft`).
    #[track_caller]
    pub fn ifft(&self, axis: impl AsAxis) -> Array<T> {
        self.ifft_norm(axis, FftNorm::Backward)
    }
    /// [`fft`](Array::fft) scaled as `norm` says.
    #[track_caller]
    pub fn fft_norm(&self, axis: impl AsAxis, norm: FftNorm) -> Array<T> {
        transform(self, "fft", axis, false, norm)
    }
    /// [`ifft`](Array::ifft) scaled as `norm` says.
    #[track_caller]
    pub fn ifft_norm(&self, axis: impl AsAxis, norm: FftNorm) -> Array<T> {
        transform(self, "ifft", axis, true, norm)
    }
    /// The transform along the last two axes (numpy's `fft2`).
    #[track_caller]
    pub fn fft2(&self) -> Array<T> {
        self.fftn(&[-2, -1])
    }
    /// The inverse transform along the last two axes (numpy's `ifft2`).
    #[track_caller]
    pub fn ifft2(&self) -> Array<T> {
        self.ifftn(&[-2, -1])
    }
    /// The transform along each of `axes` (numpy's `fftn`).
    #[track_caller]
    pub fn fftn(&self, axes: &(impl AsAxes + ?Sized)) -> Array<T> {
        axes.axis_values().iter().fold(self.clone(), |x, &a| {
            transform(&x, "fftn", a, false, FftNorm::Backward)
        })
    }
    /// The inverse transform along each of `axes` (numpy's `ifftn`).
    #[track_caller]
    pub fn ifftn(&self, axes: &(impl AsAxes + ?Sized)) -> Array<T> {
        axes.axis_values().iter().fold(self.clone(), |x, &a| {
            transform(&x, "ifftn", a, true, FftNorm::Backward)
        })
    }
    /// The `n` real samples whose transform along `axis` this array's first `n / 2 + 1`
    /// elements are (numpy's `irfft(x, n, axis)`): the other half is their conjugate
    /// mirror, and imaginary parts that a real signal's transform cannot have (of the
    /// first element, and of the middle one for an even `n`) are ignored. A longer input
    /// is cut, a shorter one padded with zeros.
    #[track_caller]
    pub fn irfft(&self, axis: impl AsAxis, n: usize) -> Array<T::Real> {
        let d = match self.axis_or_failed("irfft", axis, false) {
            Ok(d) => d,
            Err(failed) => return failed,
        };
        if n == 0 {
            return no_points(self, "irfft", d);
        }
        let half = n / 2 + 1;
        let have = self.shape()[d];
        let kept = if have >= half {
            self.slice(along(self.ndim(), d, 0, half, 1))
        } else {
            let mut widths = vec![(0, 0); self.ndim()];
            widths[d] = (0, half - have);
            self.pad(&widths, T::__from_f64(0.0))
        };
        if let Some(m) = real_pass::<T>(self, d, n) {
            return real_inverse(&kept, d, m);
        }
        // Elements `half..n` are the conjugates of `n - half..1`, in reverse.
        let mirrored = kept
            .conj()
            .slice(along(self.ndim(), d, 1, n - half + 1, 1))
            .flip(d);
        let full = match crate::api::regions::concatenate(d, &[&kept, &mirrored]) {
            Ok(full) => full,
            Err(e) => return Array::failed(&self.node.ctx, self.shape().to_vec(), e),
        };
        transform(&full, "irfft", d as isize, true, FftNorm::Backward).unary(UnaryOp::Re)
    }
}

/// Transforms of real arrays.
///
/// ```
/// # use lazycl::prelude::*;
/// # fn main() -> lazycl::Result<()> {
/// let ctx = Context::new()?;
/// let x = ctx.from_slice(&[1.0f64, 2.0, 3.0, 4.0])?;
/// let spectrum = x.rfft(0);
/// assert_eq!(spectrum.shape(), [3]);
/// assert_eq!(spectrum.to_vec()?[0], c64::new(10.0, 0.0));
/// let back = spectrum.irfft(0, 4).to_vec()?;
/// assert!(back.iter().zip([1.0, 2.0, 3.0, 4.0]).all(|(a, b)| (a - b).abs() < 1e-12));
/// # Ok(())
/// # }
/// ```
impl<T: ComplexPart> Array<T> {
    /// The transform of real samples along `axis`, its first `n / 2 + 1` elements (the
    /// rest are their conjugates): numpy's `rfft`. The samples are made complex in the
    /// first pass's loads.
    #[track_caller]
    pub fn rfft(&self, axis: impl AsAxis) -> Array<T::Complex> {
        let d = match self.axis_or_failed("rfft", axis, false) {
            Ok(d) => d,
            Err(failed) => return failed,
        };
        let n = self.shape()[d];
        if let Some(m) = real_pass::<T::Complex>(self, d, n) {
            return real_forward(self, d, m);
        }
        let full = transform(
            &self.cast::<T::Complex>(),
            "rfft",
            d as isize,
            false,
            FftNorm::Backward,
        );
        if n == 0 {
            return full;
        }
        full.slice(along(self.ndim(), d, 0, n / 2 + 1, 1))
    }
}

/// The radices of the passes of a transform of `n` points of type `C` along axis `d` of
/// `x`, on its device (`plan::fft::passes`; `None`: Bluestein's algorithm).
fn radices<C: ComplexFloat>(x: &Array<impl Element>, d: usize, n: usize) -> Option<Vec<u32>> {
    let local = x.node.ctx.profile.local_mem_bytes as usize;
    let strided = x.shape()[d + 1..].iter().product::<usize>() > 1;
    crate::plan::fft::passes(n, C::DTYPE, local, strided)
}

/// The half length `m` of a real transform of `n` samples along axis `d` of `x` that is
/// one pass of `m` complex points ([`FftReal`]): `n` even, `m` at least 2, and `m` points
/// one pass on the device (along an axis that is not the innermost, a sixteenth of it).
fn real_pass<C: ComplexFloat>(x: &Array<impl Element>, d: usize, n: usize) -> Option<u32> {
    let m = n / 2;
    if !n.is_multiple_of(2) || m < 2 || x.node.failed {
        return None;
    }
    match radices::<C>(x, d, m)?.as_slice() {
        &[radix] => Some(radix),
        _ => None,
    }
}

/// The pass of a real signal's transform ([`FftReal`]) of `m` points along axis `d` of
/// `operand` (whose length there the pass's kind says), recorded as `op`.
#[track_caller]
fn real_record<T: Element, R: Element>(
    operand: &Array<T>,
    op: &str,
    d: usize,
    m: u32,
    real: FftReal,
) -> Array<R> {
    let spec = FftSpec {
        axis: d,
        radix: m,
        done: 1,
        inverse: real == FftReal::Inverse,
        device: fft_device(operand),
        real,
    };
    let operand = operand.node.clone();
    record(&|| op.to_string(), &[&operand], || Op::Fft(spec, operand.clone()))
}

/// `rfft` of `2m` samples along axis `d` of `x` as one pass of `m` points: the points
/// `x_(2k) + i x_(2k+1)` made in its loads (padded by one, the length of the `m + 1`
/// values it stores).
#[track_caller]
fn real_forward<T: ComplexPart>(x: &Array<T>, d: usize, m: u32) -> Array<T::Complex> {
    let (rank, n) = (x.ndim(), 2 * m as usize);
    let even = x.slice(along(rank, d, 0, n, 2));
    let odd = x.slice(along(rank, d, 1, n, 2));
    let mut widths = vec![(0, 0); rank];
    widths[d] = (0, 1);
    let points = even.complex(&odd).pad(&widths, T::Complex::__from_f64(0.0));
    real_record(&points, "rfft", d, m, FftReal::Forward)
}

/// `irfft` of `half = m + 1` values along axis `d` of `kept` into `2m` samples as one
/// pass of `m` points: the values padded to `2m` (the samples' length; the padding is
/// never read) and scaled by `1 / 2m` in its loads.
#[track_caller]
fn real_inverse<T: ComplexFloat>(kept: &Array<T>, d: usize, m: u32) -> Array<T::Real> {
    let n = 2 * m as usize;
    let mut widths = vec![(0, 0); kept.ndim()];
    widths[d] = (0, n - (m as usize + 1));
    let scaled =
        kept.binary_with::<T::Real, T>(BinaryOp::Mul, <T::Real as Element>::__from_f64(1.0 / n as f64));
    real_record(
        &scaled.pad(&widths, T::__from_f64(0.0)),
        "irfft",
        d,
        m,
        FftReal::Inverse,
    )
}

/// What a transform pass's layout needs of `x`'s device.
fn fft_device<T: Element>(x: &Array<T>) -> FftDevice {
    let p = &x.node.ctx.profile;
    FftDevice {
        local_bytes: p.local_mem_bytes.min(u64::from(u32::MAX)) as u32,
        max_group: p.max_group.min(u32::MAX as usize) as u32,
    }
}

/// `start..end` by `step` along axis `d` of a rank-`rank` array, everything along the
/// others.
fn along(rank: usize, d: usize, start: usize, end: usize, step: isize) -> Vec<SliceInfoElem> {
    (0..rank)
        .map(|k| match k == d {
            true => SliceInfoElem::Slice {
                start: start as isize,
                end: Some(end as isize),
                step,
            },
            false => SliceInfoElem::Slice {
                start: 0,
                end: None,
                step: 1,
            },
        })
        .collect()
}

/// The failed result of a transform of no points (numpy refuses them too).
#[track_caller]
fn no_points<T: Element, U: Element>(x: &Array<T>, op: &str, d: usize) -> Array<U> {
    let e = Error::InvalidShape(format!(
        "{op}: a transform of no points along axis {d} of an array of shape {:?}",
        x.shape()
    ));
    Array::failed(&x.node.ctx, x.shape().to_vec(), e)
}

/// The transform `op` of `x` along `axis`, in the direction `inverse` says, scaled.
#[track_caller]
fn transform<T: ComplexFloat>(
    x: &Array<T>,
    op: &str,
    axis: impl AsAxis,
    inverse: bool,
    norm: FftNorm,
) -> Array<T> {
    let d = match x.axis_or_failed(op, axis, false) {
        Ok(d) => d,
        Err(failed) => return failed,
    };
    let n = x.shape()[d];
    if n == 0 {
        return no_points(x, op, d);
    }
    let y = unscaled(x, op, d, n, inverse);
    match norm.scale(n, inverse) {
        1.0 => y,
        s => y.binary_with::<T::Real, T>(BinaryOp::Mul, <T::Real as Element>::__from_f64(s)),
    }
}

/// The unscaled transform of the `n` points of `x` along axis `d`: its passes, or
/// Bluestein's convolution where `n` has a prime factor above 7.
#[track_caller]
fn unscaled<T: ComplexFloat>(x: &Array<T>, op: &str, d: usize, n: usize, inverse: bool) -> Array<T> {
    let Some(radices) = radices::<T>(x, d, n) else {
        return bluestein(x, op, d, n, inverse);
    };
    let mut done = 1;
    let mut y = x.clone();
    for radix in radices {
        let spec = FftSpec {
            axis: d,
            radix,
            done,
            inverse,
            device: fft_device(x),
            real: FftReal::No,
        };
        let operand = y.node.clone();
        y = record(&|| op.to_string(), &[&operand], || Op::Fft(spec, operand.clone()));
        done *= radix;
    }
    y
}

/// The chirp `e^(∓iπ (k² mod 2n) / n)` at positions `k` (`-` forward, `+` inverse), its
/// angle exact in integers before the one rounding.
#[track_caller]
fn chirp<T: ComplexFloat>(k: &Array<u64>, n: usize, inverse: bool) -> Array<T> {
    let two_n = 2 * n as u64;
    let k = k % two_n;
    let turn = (&k * &k) % two_n;
    let sign = if inverse { 1.0 } else { -1.0 };
    let theta: Array<T::Real> = turn.cast::<T::Real>();
    let theta: Array<T::Real> = theta.binary_with(
        BinaryOp::Mul,
        <T::Real as Element>::__from_f64(sign * std::f64::consts::PI / n as f64),
    );
    let (c, s): (Array<T::Real>, Array<T::Real>) = (theta.unary(UnaryOp::Cos), theta.unary(UnaryOp::Sin));
    c.binary(BinaryOp::Complex, s)
}

/// Bluestein's transform of the `n` points of `x` along axis `d`: `X_k = w_k Σ_j (x_j
/// w_j) conj(w_(k-j))` with the chirp `w` ([`chirp`]), the sum a circular convolution of
/// length `m ≥ 2n - 1`, a power of two, by transforms of that length.
#[track_caller]
fn bluestein<T: ComplexFloat>(x: &Array<T>, op: &str, d: usize, n: usize, inverse: bool) -> Array<T> {
    let ctx = &x.node.ctx;
    let rank = x.ndim();
    let m = (2 * n - 1).next_power_of_two();
    let along_d = |len: usize| {
        let mut shape = vec![1; rank];
        shape[d] = len;
        shape
    };
    let w = chirp::<T>(&positions::<u64>(ctx, n), n, inverse).reshape(along_d(n));
    let mut widths = vec![(0, 0); rank];
    widths[d] = (0, m - n);
    let a = (x * &w).pad(&widths, T::__from_f64(0.0));
    // The filter, `conj(w)` at the circular distances `0..n` from 0, zero between.
    let p = positions::<u64>(ctx, m);
    let distance = p.min(&(m as u64 - &p));
    let filter = distance
        .lt(n as u64)
        .select(chirp::<T>(&distance, n, inverse).conj(), T::__from_f64(0.0));
    let filter = unscaled(&filter, op, 0, m, false).reshape(along_d(m));
    let spectrum = unscaled(&a, op, d, m, false) * &filter;
    let convolution = unscaled(&spectrum, op, d, m, true);
    let convolution = convolution
        .binary_with::<T::Real, T>(BinaryOp::Mul, <T::Real as Element>::__from_f64(1.0 / m as f64));
    convolution.slice(along(rank, d, 0, n, 1)) * &w
}
