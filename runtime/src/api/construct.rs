//! Creating arrays: the [`Context`] constructors (uploads of host data, fills on the
//! device, lazy scalars) and the fills shaped like an array (`zeros_like`, ...). Every
//! one returns a `Result`.

use ndarray::{ArrayBase, Data, Dimension};

use crate::api::array::Array;
use crate::backend::buffer::DeviceBuffer;
use crate::backend::cl;
use crate::backend::context::Context;
use crate::backend::submit::Command;
use crate::dtype::{Arithmetic, Element};
use crate::error::{Error, Result};
use crate::graph::parts::{row_count, split_rows, Parts, Piece};
use crate::graph::shape::{checked_numel, IntoShape};
use crate::graph::{Node, Op, Origin, State};
use crate::stats::Counters;
use std::ops::Range;
use std::sync::Arc;

/// Creating arrays.
impl Context {
    /// Uploads any ndarray (views, non-contiguous and transposed ones included: the device
    /// receives the logical row-major order). The data is copied before the call returns,
    /// on a queue of its own, so the call never waits for queued work.
    ///
    /// ```
    /// # use lazycl::prelude::*;
    /// # fn main() -> lazycl::Result<()> {
    /// let ctx = Context::new()?;
    /// let host = ndarray::Array2::from_shape_fn((2, 3), |(i, j)| (10 * i + j) as f32);
    /// let a = ctx.array(&host.t())?; // a transposed view: uploaded in its logical order
    /// assert_eq!(a.shape(), [3, 2]);
    /// let back = (&a * 2.0).to_ndarray_dim::<ndarray::Ix2>()?;
    /// assert_eq!(back, host.t().mapv(|v| v * 2.0));
    /// # Ok(())
    /// # }
    /// ```
    #[track_caller]
    pub fn array<T: Element, S: Data<Elem = T>, D: Dimension>(
        &self,
        data: &ArrayBase<S, D>,
    ) -> Result<Array<T>> {
        let shape = data.shape().to_vec();
        let standard = data.as_standard_layout();
        match standard.as_slice() {
            Some(slice) => self.upload(slice, shape),
            None => {
                let v: Vec<T> = standard.iter().copied().collect();
                self.upload(&v, shape)
            }
        }
    }

    /// Uploads a slice as a 1-D array.
    #[track_caller]
    pub fn from_slice<T: Element>(&self, data: &[T]) -> Result<Array<T>> {
        self.upload(data, vec![data.len()])
    }

    /// Uploads a `Vec` as a 1-D array.
    #[track_caller]
    pub fn from_vec<T: Element>(&self, data: Vec<T>) -> Result<Array<T>> {
        self.from_slice(&data)
    }

    /// Uploads `data` (row-major) with the given shape.
    #[track_caller]
    pub fn from_shape_slice<T: Element>(&self, shape: impl IntoShape, data: &[T]) -> Result<Array<T>> {
        let shape = shape.into_shape();
        let n = checked_numel(&shape)?;
        if n != data.len() {
            return Err(Error::InvalidShape(format!(
                "shape {shape:?} holds {n} elements but {} were given",
                data.len()
            )));
        }
        self.upload(data, shape)
    }

    #[track_caller]
    fn upload<T: Element>(&self, data: &[T], shape: Vec<usize>) -> Result<Array<T>> {
        self.inner.check_dtype(T::DTYPE)?;
        if self.inner.multi.is_some() {
            let per_row: usize = shape.iter().skip(1).product();
            return self.split(shape, |part, rows, shape| {
                part.upload(&data[rows.start * per_row..rows.end * per_row], shape)
            });
        }
        let buffer = DeviceBuffer::from_bytes(&self.inner.cl, self.inner.transfer_queue()?, as_bytes(data))?;
        Ok(Array::ready(&self.inner, shape, buffer, Origin::Upload))
    }

    /// An array of zeros (a fill on the device, not an upload).
    #[track_caller]
    pub fn zeros<T: Element>(&self, shape: impl IntoShape) -> Result<Array<T>> {
        self.full(shape, T::default())
    }

    /// An array with every element `value` (a fill on the device, not an upload).
    ///
    /// ```
    /// # use lazycl::prelude::*;
    /// # fn main() -> lazycl::Result<()> {
    /// let ctx = Context::new()?;
    /// let ones = ctx.full([2, 3], 1i32)?; // shapes: an array, a Vec, a slice or a usize
    /// let zeros = ctx.zeros::<i32>(3)?;
    /// assert_eq!((&ones + &zeros).sum_axis(0).to_vec()?, [2, 2, 2]);
    /// # Ok(())
    /// # }
    /// ```
    #[track_caller]
    pub fn full<T: Element>(&self, shape: impl IntoShape, value: T) -> Result<Array<T>> {
        self.inner.check_dtype(T::DTYPE)?;
        let shape = shape.into_shape();
        if self.inner.multi.is_some() {
            return self.split(shape, |part, _, shape| part.full(shape, value));
        }
        let n = checked_numel(&shape)?;
        let size = T::DTYPE.size();
        let bytes = n
            .checked_mul(size)
            .ok_or_else(|| Error::InvalidShape(format!("shape {shape:?} is too large")))?;
        let buffer = DeviceBuffer::uninit(&self.inner.cl, bytes, self.inner.queue(), "a filled array")?;
        // (The element's bytes in memory: a 16-bit float's own, not its argument's `f32`.)
        let pattern = as_bytes(std::slice::from_ref(&value));
        if bytes > 0 {
            let b: &DeviceBuffer = &buffer;
            self.inner
                .queue()
                .submit(Command::new(&[], &[b]), |q, wait, want| {
                    cl::fill_buffer(q, b.mem(), pattern, bytes, wait, want)
                })?;
            Counters::add(&self.inner.counters.transfers_enqueued, 1);
        }
        Ok(Array::ready(&self.inner, shape, buffer, Origin::Fill))
    }

    /// An array of a multi-device context made by `make` on each device, for that
    /// device's rows (given with their shape): uploads and fills split by rows.
    #[track_caller]
    fn split<T: Element>(
        &self,
        shape: Vec<usize>,
        make: impl Fn(&Context, Range<usize>, Vec<usize>) -> Result<Array<T>>,
    ) -> Result<Array<T>> {
        checked_numel(&shape)?;
        let Some(multi) = &self.inner.multi else {
            return Err(Error::Internal(
                "splitting an array on a one-device context".into(),
            ));
        };
        let n = row_count(&shape);
        let mut pieces = Vec::new();
        let shares = if shape.is_empty() || n == 0 {
            std::iter::once(0..n).collect()
        } else {
            split_rows(n, &multi.weights)
        };
        for (device, rows) in shares.into_iter().enumerate() {
            if rows.is_empty() && !(n == 0 && device == 0) {
                continue;
            }
            let mut part_shape = shape.clone();
            if let Some(first) = part_shape.first_mut() {
                *first = rows.len();
            }
            let part = Context::from_inner(multi.parts[device].clone());
            let node = make(&part, rows.clone(), part_shape)?.node;
            pieces.push(Piece { device, rows, node });
        }
        Ok(Array::from_node(Node::new(
            self.inner.clone(),
            T::DTYPE,
            shape.into_iter().collect(),
            State::Parts(Arc::new(Parts { pieces })),
        )))
    }

    /// A lazy 0-d array holding `value` as a kernel argument (no buffer, no upload).
    ///
    /// Like every constructor of [`Context`] it returns a `Result`: an `f64` scalar on a
    /// device without doubles is an [`Error::UnsupportedDtype`] here, not at the flush.
    /// Operators take plain Rust scalars too (`&x * 0.5`); a 0-d array is for where an
    /// `Array` is needed, such as the start of a computation of scalars.
    ///
    /// ```
    /// # use lazycl::prelude::*;
    /// # fn main() -> lazycl::Result<()> {
    /// let ctx = Context::new()?;
    /// let half = ctx.scalar(0.5f32)?;
    /// assert_eq!(half.ndim(), 0);
    /// let x = ctx.from_slice(&[1.0f32, 2.0])?;
    /// assert_eq!((&x * &half).to_vec()?, [0.5, 1.0]); // a 0-d array broadcasts
    /// assert_eq!((half * 3.0).item()?, 1.5);
    /// # Ok(())
    /// # }
    /// ```
    #[track_caller]
    pub fn scalar<T: Element>(&self, value: T) -> Result<Array<T>> {
        self.inner.check_dtype(T::DTYPE)?;
        Ok(Array::lazy(
            &self.inner,
            Vec::new(),
            Op::Scalar(value.to_arg_bits()),
        ))
    }
}

/// Arrays shaped like another (numpy's `zeros_like`, `ones_like`, `full_like`): fills of
/// this array's shape and element type on its context, made at once (the array itself is
/// neither computed nor read).
impl<T: Element> Array<T> {
    /// Zeros of this array's shape (numpy's `zeros_like`).
    ///
    /// ```
    /// # use lazycl::prelude::*;
    /// # fn main() -> lazycl::Result<()> {
    /// let ctx = Context::new()?;
    /// let x = ctx.from_shape_slice([2, 2], &[1.5f32, 2.5, 3.5, 4.5])?;
    /// let z = x.zeros_like()?;
    /// assert_eq!((z.shape(), z.to_vec()?), (&[2, 2][..], vec![0.0; 4]));
    /// # Ok(())
    /// # }
    /// ```
    #[track_caller]
    pub fn zeros_like(&self) -> Result<Array<T>> {
        self.context().zeros(self.shape())
    }

    /// `value` everywhere in this array's shape (numpy's `full_like`).
    ///
    /// ```
    /// # use lazycl::prelude::*;
    /// # fn main() -> lazycl::Result<()> {
    /// let ctx = Context::new()?;
    /// let x = ctx.from_slice(&[1u32, 2, 3])?;
    /// assert_eq!(x.full_like(7)?.to_vec()?, [7, 7, 7]);
    /// # Ok(())
    /// # }
    /// ```
    #[track_caller]
    pub fn full_like(&self, value: T) -> Result<Array<T>> {
        self.context().full(self.shape(), value)
    }
}

impl<T: Arithmetic> Array<T> {
    /// Ones of this array's shape (numpy's `ones_like`).
    ///
    /// ```
    /// # use lazycl::prelude::*;
    /// # fn main() -> lazycl::Result<()> {
    /// let ctx = Context::new()?;
    /// let x = ctx.from_slice(&[-1i64, 5])?;
    /// assert_eq!(x.t().ones_like()?.to_vec()?, [1, 1]);
    /// # Ok(())
    /// # }
    /// ```
    #[track_caller]
    pub fn ones_like(&self) -> Result<Array<T>> {
        self.context().ones(self.shape())
    }
}

/// Reinterprets a slice of plain elements as bytes.
#[track_caller]
fn as_bytes<T: Element>(data: &[T]) -> &[u8] {
    // SAFETY: every Element is a plain value type without padding (bool is one byte, 0 or 1).
    unsafe { std::slice::from_raw_parts(data.as_ptr().cast::<u8>(), std::mem::size_of_val(data)) }
}

/// The positions `0..n` as a lazy array of `T` that has no memory: each element is its
/// own row-major index, computed inside whichever kernel reads it (a counter node, like
/// random numbers). A compaction's readers compare it with the count on the device.
#[track_caller]
pub(crate) fn positions<T: Element>(ctx: &Arc<crate::backend::context::ContextInner>, n: usize) -> Array<T> {
    Array::lazy(
        ctx,
        vec![n],
        Op::FromIndex(crate::graph::IndexFn::Position, smallvec::SmallVec::new()),
    )
}
