//! Counter-based random numbers: lazy arrays with no memory of their own, computed where
//! they are read. [`Context::random_uniform`], [`random_normal`](Context::random_normal)
//! and [`random_int`](Context::random_int) draw from stream 0 of a seed; an [`Rng`]
//! (`ctx.rng(seed)`, numpy's `default_rng(seed)`) draws successive independent batches,
//! one stream each.
//!
//! Each array is one lazy node whose element at row-major index `i` is a pure function
//! of the seed, the stream's offset and `i`: Philox4x32-10 (Salmon et al. 2011, the
//! constants of Random123) with the key `(seed low 32 bits, seed high 32 bits)` and the
//! counter `(c low, c high, offset low, offset high)`, where `c = i / 4` and the element
//! takes word `i % 4` (`c = i / 2` and words `2 (i % 2)`, `2 (i % 2) + 1` where it takes
//! two: `f64`, 64-bit integers, `f64` normals take all four words of `c = i / 2`). The
//! seed, the offset and an integer range are kernel arguments, never part of a kernel's
//! cache key: a new seed or stream builds no program. The node fuses into its readers
//! like any elementwise operation — `x * u.lt(p)` (dropout) is one kernel that stores no
//! random numbers — and read through a view (`u.t()`, `u.slice(..)`) or broadcast, each
//! element keeps its own value: `u.t()` is the transpose of `u`.
//!
//! Values from the words (docs/MATH.md, "Random numbers", has the details):
//! - uniform `f32`: `(w >> 8) * 2^-24`, in `[0, 1)`; `f64`: the 64-bit word of two words
//!   (the first the low half) `>> 11`, times `2^-53`. Bit-identical on every device.
//! - normal: Box–Muller, `sqrt(-2 ln u1) cos(2 pi u2)` and `sin` for the pair's second
//!   element, `u1` in `(0, 1]` (`((w >> 8) + 1) 2^-24`, `f64` likewise with 53 bits) and
//!   `u2` in `[0, 1)`. Within the device's `log`, `sqrt`, `cospi` and `sinpi` accuracy of
//!   a computation in `f64` (a few ulp; the tests allow `1e-5 (1 + |x|)` in `f32`).
//! - integers in `[lo, hi)`: `lo + (w * (hi - lo)) >> 32` (Lemire's multiply-shift, no
//!   rejection; a 64-bit word and `>> 64` for 64-bit types) in unsigned arithmetic, so
//!   bit-identical on every device. Its bias: each value has probability `k / 2^32` with
//!   `k` one of the two integers next to `2^32 / (hi - lo)`, so at most `(hi - lo) / 2^32`
//!   relative (`2^64` for 64-bit types).
//!
//! **Streams** (the offset, as torch's and JAX's Philox offsets): the offset has counter
//! words of its own, so two streams of one seed never share a counter, whatever their
//! arrays' sizes, and an [`Rng`] moves to the next stream (offset + 1) after each draw.
//! Stream `k` of seed `s` is the same wherever it is drawn: `Rng::at(ctx, s, k)` resumes a
//! sequence, and `ctx.random_uniform(shape, s)` is the first draw of `ctx.rng(s)`.

use crate::backend::context::Context;
use crate::dtype::{ComplexPart, DType, Element, Float, Integer, ScalarBits};
use crate::error::{Error, Result};
use crate::graph::shape::{checked_numel, IntoShape};
use crate::graph::{Draw, IndexFn, Node, NodeRef, Op, Shape, State};

use super::array::Array;

/// A generator of successive independent random arrays: a seed and the next stream
/// (numpy's `Generator`, from `default_rng(seed)`; torch's `Generator` with its Philox
/// offset). Each draw takes one stream, the offset, and moves to the next; docs/MATH.md
/// ("Random numbers") has the bit layout.
///
/// ```
/// # use lazycl::prelude::*;
/// # fn main() -> lazycl::Result<()> {
/// let ctx = Context::new()?;
/// let mut rng = ctx.rng(42);
/// let a = rng.random::<f32>([2, 3])?;      // stream 0
/// let b = rng.random::<f32>([2, 3])?;      // stream 1: independent of a
/// assert_eq!(rng.offset(), 2);
/// assert_eq!(a.to_vec()?, ctx.random_uniform::<f32>([2, 3], 42)?.to_vec()?);
/// assert_ne!(a.to_vec()?, b.to_vec()?);
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct Rng {
    ctx: Context,
    seed: u64,
    offset: u64,
}

impl Rng {
    /// A generator of `seed` on `ctx` whose next draw takes stream `offset` (to resume a
    /// sequence at [`offset`](Rng::offset)).
    #[track_caller]
    pub fn at(ctx: &Context, seed: u64, offset: u64) -> Rng {
        Rng {
            ctx: ctx.clone(),
            seed,
            offset,
        }
    }

    /// The seed.
    #[track_caller]
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The stream the next draw takes (the number of draws so far, from a fresh `rng`).
    #[track_caller]
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Sets the stream the next draw takes.
    #[track_caller]
    pub fn set_offset(&mut self, offset: u64) {
        self.offset = offset;
    }

    /// Uniform floats in `[0, 1)` (numpy's `Generator.random`, torch's `rand`).
    #[track_caller]
    pub fn random<T: Float>(&mut self, shape: impl IntoShape) -> Result<Array<T>> {
        let a = draw(
            &self.ctx,
            shape.into_shape(),
            Draw::Uniform,
            self.seed,
            self.offset,
            None,
        )?;
        self.offset = self.offset.wrapping_add(1);
        Ok(a)
    }

    /// Standard normal floats, mean 0 and variance 1 (numpy's
    /// `Generator.standard_normal`, torch's `randn`).
    #[track_caller]
    pub fn standard_normal<T: Float>(&mut self, shape: impl IntoShape) -> Result<Array<T>> {
        let a = draw(
            &self.ctx,
            shape.into_shape(),
            Draw::Normal,
            self.seed,
            self.offset,
            None,
        )?;
        self.offset = self.offset.wrapping_add(1);
        Ok(a)
    }

    /// Standard complex normals: real and imaginary parts independent normals of variance
    /// 1/2 each, so that `E|z|² = 1` (torch's `randn` of a complex type, JAX's `normal`
    /// of one). Two streams: the parts'. Lazy, one kernel with whatever reads it.
    ///
    /// ```
    /// # use lazycl::prelude::*;
    /// # fn main() -> lazycl::Result<()> {
    /// let ctx = Context::new()?;
    /// let z = ctx.rng(7).standard_complex_normal::<f32>([100_000])?;
    /// let power = z.norm_sqr().mean().item()?;
    /// assert!((power - 1.0).abs() < 0.02);
    /// # Ok(())
    /// # }
    /// ```
    #[track_caller]
    pub fn standard_complex_normal<T: ComplexPart>(
        &mut self,
        shape: impl IntoShape,
    ) -> Result<Array<T::Complex>> {
        let shape = shape.into_shape();
        let half = T::__from_f64(std::f64::consts::FRAC_1_SQRT_2);
        let re = self.standard_normal::<T>(shape.clone())? * half;
        let im = self.standard_normal::<T>(shape)? * half;
        Ok(re.complex(&im))
    }

    /// Integers uniform in `[lo, hi)` (numpy's `Generator.integers`, torch's `randint`).
    /// An empty range (`hi <= lo`) is an error, and takes no stream.
    #[track_caller]
    pub fn integers<T: Integer>(&mut self, shape: impl IntoShape, lo: T, hi: T) -> Result<Array<T>> {
        let a = integers(
            &self.ctx,
            "integers",
            shape.into_shape(),
            lo,
            hi,
            self.seed,
            self.offset,
        )?;
        self.offset = self.offset.wrapping_add(1);
        Ok(a)
    }
}

/// Random arrays (stream 0 of a seed; [`Context::rng`] draws more).
impl Context {
    /// A generator of successive independent random arrays from `seed`, starting at
    /// stream 0 ([`Rng`]; numpy's `default_rng(seed)`).
    #[track_caller]
    pub fn rng(&self, seed: u64) -> Rng {
        Rng::at(self, seed, 0)
    }

    /// Uniform floats in `[0, 1)` from `seed` (stream 0): a lazy array with no memory of
    /// its own, computed where it is read (numpy's `random`, torch's `rand`).
    ///
    /// ```
    /// # use lazycl::prelude::*;
    /// # fn main() -> lazycl::Result<()> {
    /// let ctx = Context::new()?;
    /// let x = ctx.full([4, 1000], 2.0f32)?;
    /// let u = ctx.random_uniform::<f32>([4, 1000], 7)?;
    /// // Dropout with p = 0.5: one kernel, no random array stored.
    /// let y = u.lt(0.5f32).select(&x / 0.5f32, 0.0f32);
    /// let kept = y.to_vec()?.iter().filter(|&&v| v == 4.0).count();
    /// assert!((1700..2300).contains(&kept));
    /// assert!(u.to_vec()?.iter().all(|&v| (0.0..1.0).contains(&v)));
    /// # Ok(())
    /// # }
    /// ```
    #[track_caller]
    pub fn random_uniform<T: Float>(&self, shape: impl IntoShape, seed: u64) -> Result<Array<T>> {
        draw(self, shape.into_shape(), Draw::Uniform, seed, 0, None)
    }

    /// Standard normal floats from `seed` (stream 0), by Box–Muller: lazy, like
    /// [`random_uniform`](Context::random_uniform) (numpy's `standard_normal`, torch's
    /// `randn`).
    ///
    /// ```
    /// # use lazycl::prelude::*;
    /// # fn main() -> lazycl::Result<()> {
    /// let ctx = Context::new()?;
    /// let z = ctx.random_normal::<f64>([100_000], 1)?;
    /// let mean = z.mean().item()?;
    /// let var = z.var(0.0).item()?;
    /// assert!(mean.abs() < 0.02 && (var - 1.0).abs() < 0.03);
    /// # Ok(())
    /// # }
    /// ```
    #[track_caller]
    pub fn random_normal<T: Float>(&self, shape: impl IntoShape, seed: u64) -> Result<Array<T>> {
        draw(self, shape.into_shape(), Draw::Normal, seed, 0, None)
    }

    /// Integers uniform in `[lo, hi)` from `seed` (stream 0): lazy, like
    /// [`random_uniform`](Context::random_uniform) (numpy's `integers`, torch's
    /// `randint`). `hi <= lo` is an error ([`Error::InvalidShape`]).
    ///
    /// ```
    /// # use lazycl::prelude::*;
    /// # fn main() -> lazycl::Result<()> {
    /// let ctx = Context::new()?;
    /// let dice = ctx.random_int([1000], 1i32, 7, 3)?.to_vec()?;
    /// assert!(dice.iter().all(|d| (1..7).contains(d)));
    /// assert!((1..7).all(|face| dice.contains(&face)));
    /// assert!(ctx.random_int([3], 5u32, 5, 3).is_err());
    /// # Ok(())
    /// # }
    /// ```
    #[track_caller]
    pub fn random_int<T: Integer>(&self, shape: impl IntoShape, lo: T, hi: T, seed: u64) -> Result<Array<T>> {
        integers(self, "random_int", shape.into_shape(), lo, hi, seed, 0)
    }
}

/// Integers in `[lo, hi)`: the range's low end and length as bits of the element type's
/// unsigned type, or the error of operation `op` for an empty range.
#[track_caller]
fn integers<T: Integer>(
    ctx: &Context,
    op: &str,
    shape: Vec<usize>,
    lo: T,
    hi: T,
    seed: u64,
    offset: u64,
) -> Result<Array<T>> {
    if hi <= lo {
        return Err(Error::InvalidShape(format!(
            "{op}: the range lo = {lo:?}, hi = {hi:?} is empty (hi must be greater than lo)"
        )));
    }
    let mask = match T::DTYPE.size() {
        8 => u64::MAX,
        _ => u64::from(u32::MAX),
    };
    let (l, h) = (lo.to_arg_bits().low() & mask, hi.to_arg_bits().low() & mask);
    // (hi > lo, so the difference wraps to the range's length in the unsigned type.)
    let range = h.wrapping_sub(l) & mask;
    draw(ctx, shape, Draw::Integers, seed, offset, Some((l, range)))
}

/// The random node drawing as `draw` from stream `offset` of `seed`, its integer range
/// (low end, length) where it has one: operands that are scalars, kernel arguments.
#[track_caller]
fn draw<T: Element>(
    ctx: &Context,
    shape: Vec<usize>,
    draw: Draw,
    seed: u64,
    offset: u64,
    range: Option<(u64, u64)>,
) -> Result<Array<T>> {
    ctx.inner.check_dtype(T::DTYPE)?;
    checked_numel(&shape)?;
    let scalar = |dtype: DType, bits: u64| -> NodeRef {
        let bits = ScalarBits {
            bits: bits.into(),
            size: dtype.arg_size() as u8,
        };
        Node::new(
            ctx.inner.clone(),
            dtype,
            Shape::new(),
            State::Lazy(Op::Scalar(bits)),
        )
    };
    let mut operands: smallvec::SmallVec<[NodeRef; 4]> =
        smallvec::smallvec![scalar(DType::U64, seed), scalar(DType::U64, offset)];
    if let Some((lo, len)) = range {
        let unsigned = match T::DTYPE.size() {
            8 => DType::U64,
            _ => DType::U32,
        };
        operands.extend([scalar(unsigned, lo), scalar(unsigned, len)]);
    }
    Ok(Array::lazy(
        &ctx.inner,
        shape,
        Op::FromIndex(IndexFn::Random(draw), operands),
    ))
}
