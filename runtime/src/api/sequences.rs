//! Arrays computed from their positions: [`Context::iota`] (XLA's `iota`, JAX's
//! `broadcasted_iota`), and built from it [`arange`](Context::arange),
//! [`linspace`](Context::linspace), [`eye`](Context::eye) and
//! [`eye_offset`](Context::eye_offset); [`ones`](Context::ones), a fill.
//!
//! The positions are one lazy node with no memory of its own (`IndexFn::Position`, beside
//! the random numbers of `api::random`): element `i` of a 1-D position array is `i`,
//! computed where it is read, and read through a view or a broadcast each element keeps
//! its own value. A coordinate along an axis of a larger shape is that 1-D array viewed
//! with unit axes around it and broadcast, so `eye` is a comparison of two broadcast
//! position arrays, `arange` a multiply-add, `linspace` a multiply-add and a select: all
//! elementwise, so they fuse into whatever reads them (`&x + ctx.eye(n)?` is one kernel
//! that stores no identity matrix). Starts, steps, offsets and lengths are kernel
//! arguments: a new start builds no program, and no scalar ever waits for the device.

use crate::backend::context::Context;
use crate::dtype::{Arithmetic, DType, Element, Float, Integer, Numeric};
use crate::error::{Error, Result};
use crate::graph::shape::{checked_numel, IntoShape};

use super::array::Array;
use super::views::{resolve_axis, AsAxis};

/// Arrays computed from their positions.
impl Context {
    /// The coordinate along `axis` of each element of an array of `shape`, converted to
    /// `T` (JAX's `lax.broadcasted_iota(T, shape, axis)`; a 1-D `iota` is numpy's
    /// `arange(n)`). Lazy, with no memory of its own: it is computed where it is read.
    /// An integer `T` too narrow for the largest coordinate is an error.
    ///
    /// ```
    /// # use lazycl::prelude::*;
    /// # fn main() -> lazycl::Result<()> {
    /// let ctx = Context::new()?;
    /// assert_eq!(ctx.iota::<u32>([4], 0)?.to_vec()?, [0, 1, 2, 3]);
    /// let cols = ctx.iota::<f32>([2, 3], -1)?; // the column of each element
    /// assert_eq!(cols.to_vec()?, [0.0, 1.0, 2.0, 0.0, 1.0, 2.0]);
    /// assert_eq!(ctx.iota::<i32>([2, 3], 0)?.t().to_vec()?, [0, 1, 0, 1, 0, 1]);
    /// # Ok(())
    /// # }
    /// ```
    #[track_caller]
    pub fn iota<T: Numeric>(&self, shape: impl IntoShape, axis: impl AsAxis) -> Result<Array<T>> {
        let shape = shape.into_shape();
        checked_numel(&shape)?;
        let axis = resolve_axis("iota", axis.axis_value(), &shape, false)?;
        let len = shape[axis];
        let mut unit = vec![1; shape.len()];
        unit[axis] = len;
        Ok(positions::<T>(self, "iota", len)?
            .reshape(unit)
            .broadcast_to(&shape))
    }

    /// `start, start + step, ...` up to `end` excluded (numpy's `arange(start, end,
    /// step)`): `ceil((end - start) / step)` elements, none where the range is empty (a
    /// step of the wrong sign), element `i` computed as numpy does, `start + i * step`
    /// (for floats `step` is numpy's `(start + step) - start` in `T`). A step of 0, or a
    /// float range whose length is not finite, is an error. Lazy, with no memory of its
    /// own; `start` and `step` are kernel arguments.
    ///
    /// ```
    /// # use lazycl::prelude::*;
    /// # fn main() -> lazycl::Result<()> {
    /// let ctx = Context::new()?;
    /// assert_eq!(ctx.arange(2i32, 11, 3)?.to_vec()?, [2, 5, 8]);
    /// assert_eq!(ctx.arange(5i64, 0, -2)?.to_vec()?, [5, 3, 1]);
    /// assert_eq!(ctx.arange(0.0f32, 1.0, 0.25)?.to_vec()?, [0.0, 0.25, 0.5, 0.75]);
    /// assert_eq!(ctx.arange(3u32, 1, 1)?.len(), 0); // empty, as in numpy
    /// assert!(ctx.arange(0i32, 4, 0).is_err());
    /// # Ok(())
    /// # }
    /// ```
    #[track_caller]
    pub fn arange<T: Numeric>(&self, start: T, end: T, step: T) -> Result<Array<T>> {
        let fail = |why: &str| {
            Error::InvalidShape(format!(
                "arange(start = {start:?}, end = {end:?}, step = {step:?}): {why}"
            ))
        };
        let (len, delta) = match (host(start), host(end), host(step)) {
            (Host::Int(_), Host::Int(_), Host::Int(0)) => return Err(fail("the step is 0")),
            (Host::Int(s), Host::Int(e), Host::Int(st)) => {
                let (d, st) = if st > 0 { (e - s, st) } else { (s - e, -st) };
                (if d > 0 { (d + st - 1) / st } else { 0 }, step)
            }
            (Host::Float(s), Host::Float(e), Host::Float(st)) => {
                if st == 0.0 {
                    return Err(fail("the step is 0"));
                }
                let len = ((e - s) / st).ceil();
                if !len.is_finite() {
                    return Err(fail("the length is not finite"));
                }
                // numpy fills `start + i * delta`, `delta` the second element less the
                // first, both in the element type.
                let next = T::__from_f64(s + st).__to_f64();
                let delta = match T::DTYPE {
                    DType::F32 => f64::from(next as f32 - s as f32),
                    _ => next - s,
                };
                (len.max(0.0) as i128, T::__from_f64(delta))
            }
            _ => return Err(fail("mixed element types")),
        };
        let len = usize::try_from(len).map_err(|_| fail("too many elements"))?;
        let i = positions::<T>(self, "arange", len)?;
        Ok(i * delta + start)
    }

    /// `n` evenly spaced values from `a` to `b`, both included (numpy's `linspace(a, b,
    /// n)`, by numpy's formula: `a + i * step` with `step = (b - a) / (n - 1)`, and the
    /// last element `b` itself). Lazy, with no memory of its own; `a`, `b` and the step
    /// are kernel arguments.
    ///
    /// ```
    /// # use lazycl::prelude::*;
    /// # fn main() -> lazycl::Result<()> {
    /// let ctx = Context::new()?;
    /// assert_eq!(ctx.linspace(0.0f64, 1.0, 5)?.to_vec()?, [0.0, 0.25, 0.5, 0.75, 1.0]);
    /// let x = ctx.linspace(0.1f32, 0.7, 7)?.to_vec()?;
    /// assert_eq!(x[6], 0.7); // the end exactly
    /// assert_eq!(ctx.linspace(2.0f32, 3.0, 1)?.to_vec()?, [2.0]);
    /// # Ok(())
    /// # }
    /// ```
    #[track_caller]
    pub fn linspace<T: Float>(&self, a: T, b: T, n: usize) -> Result<Array<T>> {
        Ok(spaced(&positions::<u64>(self, "linspace", n)?, a, b, n))
    }

    /// An array of ones (numpy's `ones`; a fill like [`full`](Context::full)).
    ///
    /// ```
    /// # use lazycl::prelude::*;
    /// # fn main() -> lazycl::Result<()> {
    /// let ctx = Context::new()?;
    /// assert_eq!(ctx.ones::<i64>([2, 2])?.to_vec()?, [1, 1, 1, 1]);
    /// # Ok(())
    /// # }
    /// ```
    #[track_caller]
    pub fn ones<T: Arithmetic>(&self, shape: impl IntoShape) -> Result<Array<T>> {
        self.full(shape, T::__from_f64(1.0))
    }

    /// The `n × n` identity matrix (numpy's `eye(n)`): lazy, with no memory of its own,
    /// so `&x + ctx.eye(n)?` is one kernel that stores no identity.
    ///
    /// ```
    /// # use lazycl::prelude::*;
    /// # fn main() -> lazycl::Result<()> {
    /// let ctx = Context::new()?;
    /// assert_eq!(ctx.eye::<f32>(2)?.to_vec()?, [1.0, 0.0, 0.0, 1.0]);
    /// # Ok(())
    /// # }
    /// ```
    #[track_caller]
    pub fn eye<T: Numeric>(&self, n: usize) -> Result<Array<T>> {
        self.eye_offset(n, n, 0)
    }

    /// An `n × m` matrix with ones on diagonal `k` and zeros elsewhere (numpy's `eye(N,
    /// M, k)`: `k > 0` above the main diagonal, `k < 0` below). Lazy like
    /// [`eye`](Context::eye); `k` is a kernel argument.
    ///
    /// ```
    /// # use lazycl::prelude::*;
    /// # fn main() -> lazycl::Result<()> {
    /// let ctx = Context::new()?;
    /// let e = ctx.eye_offset::<u32>(2, 3, 1)?;
    /// assert_eq!(e.to_vec()?, [0, 1, 0, 0, 0, 1]);
    /// assert_eq!(ctx.eye_offset::<i32>(3, 2, -1)?.to_vec()?, [0, 0, 1, 0, 0, 1]);
    /// # Ok(())
    /// # }
    /// ```
    #[track_caller]
    pub fn eye_offset<T: Numeric>(&self, n: usize, m: usize, k: isize) -> Result<Array<T>> {
        checked_numel(&[n, m])?;
        let rows = positions::<i64>(self, "eye", n)?.insert_axis(1);
        let cols = positions::<i64>(self, "eye", m)?;
        Ok((rows + k as i64).eq(&cols).cast::<T>())
    }
}

/// Element `i` of `linspace(a, b, n)` for each position `i` of `i` (any shape): numpy's
/// `a + i * step` with `step = (b - a) / (n - 1)` in `T` (`a + i / (n - 1) * (b - a)`
/// where that step underflows to 0), and `b` at `i = n - 1`; `a` where `n` is 1.
#[track_caller]
pub(crate) fn spaced<I: Integer, T: Float>(i: &Array<I>, a: T, b: T, n: usize) -> Array<T> {
    let x = i.cast::<T>();
    if n <= 1 {
        return x * T::__from_f64(0.0) + a;
    }
    let (fa, fb) = (a.__to_f64(), b.__to_f64());
    let div = (n - 1) as f64;
    let (delta, step) = match T::DTYPE {
        DType::F32 => {
            let delta = fb as f32 - fa as f32;
            (f64::from(delta), f64::from(delta / div as f32))
        }
        _ => (fb - fa, (fb - fa) / div),
    };
    let y = match step == 0.0 && delta != 0.0 {
        true => x / T::__from_f64(div) * T::__from_f64(delta),
        false => x * T::__from_f64(step),
    };
    i.eq(I::__from_f64(div)).select(b, y + a)
}

/// The lazy positions `0..len` in `T`, or the error of operation `op` where an integer
/// `T` cannot hold them.
#[track_caller]
pub(crate) fn positions<T: Numeric>(ctx: &Context, op: &str, len: usize) -> Result<Array<T>> {
    ctx.inner.check_dtype(T::DTYPE)?;
    let max: u128 = match T::DTYPE {
        DType::I32 => i32::MAX as u128,
        DType::U32 => u32::MAX as u128,
        DType::I64 => i64::MAX as u128,
        DType::U64 => u64::MAX as u128,
        _ => u128::MAX,
    };
    if len as u128 > max.saturating_add(1) {
        return Err(Error::InvalidShape(format!(
            "{op}: {len} positions do not fit the element type {:?} (at most {max} is)",
            T::DTYPE
        )));
    }
    checked_numel(&[len])?;
    Ok(crate::api::construct::positions(&ctx.inner, len))
}

/// A host scalar of a numeric element type, exactly: integers in `i128`, floats in `f64`.
enum Host {
    Int(i128),
    Float(f64),
}

#[track_caller]
fn host<T: Element>(v: T) -> Host {
    let bits = v.to_arg_bits().low();
    match T::DTYPE {
        d if d.is_float() => Host::Float(v.__to_f64()),
        DType::I64 => Host::Int(i128::from(bits as i64)),
        DType::U64 => Host::Int(i128::from(bits)),
        // (Exact in an `f64`: 32 bits and fewer.)
        _ => Host::Int(v.__to_f64() as i128),
    }
}
