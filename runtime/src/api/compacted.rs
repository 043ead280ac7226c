//! What a [`Compacted`] offers the pipelines that follow a filter: sorting (`sort`,
//! `argsort`), reductions (`sum`, `prod`, `mean`, `amin`, `amax`, `argmin`, `argmax`),
//! elementwise maps (`map`), the first `k` (`head`), gathers through its positions
//! (`take_from`) and scatters to them (`scatter_add`, `bincount`).
//!
//! None of them waits on the host. Each reads the picked elements through
//! [`Compacted::filled`]: the positions past the count — compared with the count in
//! device memory, inside the kernel that reads them — replaced by the value the operation
//! ignores (0 for a sum, the last key for a sort, an index outside for a scatter). The
//! result is again a `Compacted` with the same count, or a lazy 0-d array.

use crate::api::array::Array;
use crate::api::compact::Compacted;
use crate::api::ops::Operand;
use crate::api::views::{resolve_axis, AsAxis};
use crate::dtype::{Arithmetic, Element, Float, Index, Integer, Numeric};
use crate::error::{Error, Result};
use crate::graph::Op;

/// The element that sorts after every other in the ascending order of `sort`: NaN for
/// floats (every NaN sorts last, all of them equal), the largest value for integers. The
/// sort is stable, so picked elements equal to it stay before the filler.
#[track_caller]
fn sorts_last<T: Numeric>() -> T {
    match T::DTYPE.is_float() {
        true => T::__from_f64(f64::NAN),
        false => T::__from_f64(f64::INFINITY),
    }
}

/// What `amin` and `argmin` ignore: NaN for floats (their reductions skip NaN, as
/// numpy's `nanmin` does), the largest value for integers.
#[track_caller]
fn ignored_by_min<T: Numeric>() -> T {
    sorts_last()
}

/// What `amax` and `argmax` ignore: NaN for floats, the smallest value for integers.
#[track_caller]
fn ignored_by_max<T: Numeric>() -> T {
    match T::DTYPE.is_float() {
        true => T::__from_f64(f64::NAN),
        false => T::__from_f64(f64::NEG_INFINITY),
    }
}

impl<T: Element> Compacted<T> {
    /// `f` applied to the picked elements: `f` receives [`values`](Compacted::values) (the
    /// capacity's length) and must return an array of that shape computed position by
    /// position (elementwise work, `expr!`, casts); the result keeps this count. Lazy, no
    /// wait. A function that moves elements (a flip, a sort, a scan) would mix in the
    /// unspecified positions past the count: use this type's own operations for those.
    ///
    /// ```
    /// # use lazycl::prelude::*;
    /// # fn main() -> lazycl::Result<()> {
    /// let ctx = Context::new()?;
    /// let x = ctx.from_slice(&[3.0f32, -1.0, 4.0])?;
    /// let squares = x.compress(&x.gt(0.0))?.map(|v| v * v)?;
    /// assert_eq!(squares.to_vec()?, vec![9.0, 16.0]);
    /// # Ok(())
    /// # }
    /// ```
    #[track_caller]
    pub fn map<U: Element>(&self, f: impl FnOnce(&Array<T>) -> Array<U>) -> Result<Compacted<U>> {
        let out = f(self.values());
        if out.shape() != [self.capacity()] {
            return Err(Error::ShapeMismatch {
                op: "Compacted::map (the picked elements and the function's result)".into(),
                left: vec![self.capacity()],
                right: out.shape().to_vec(),
                why: "differ: the function must keep each position where it is".into(),
            });
        }
        Ok(Compacted::from_parts(out, self.count().clone()))
    }

    /// The first `k` picked elements (all of them where fewer were picked): a view of the
    /// first `k` positions whose count is the smaller of `k` and this count, computed on
    /// the device (no wait). After [`sort`](Compacted::sort), the `k` smallest.
    #[track_caller]
    pub fn head(&self, k: usize) -> Compacted<T> {
        let k = k.min(self.capacity());
        Compacted::from_parts(self.values().slice(ndarray::s![..k]), self.count().min(k as u64))
    }
}

impl<T: Numeric> Compacted<T> {
    /// The picked elements sorted (ascending, stable, NaN last, as [`Array::sort`]),
    /// with this count: the whole capacity is sorted with the positions past the count
    /// holding the element that sorts last (NaN, or the type's largest value), which the
    /// stable sort keeps after the picked elements equal to it. Enqueued, never waited on.
    ///
    /// ```
    /// # use lazycl::prelude::*;
    /// # fn main() -> lazycl::Result<()> {
    /// let ctx = Context::new()?;
    /// let x = ctx.from_slice(&[5i32, -3, 9, 1, -7])?;
    /// assert_eq!(x.compress(&x.gt(0))?.sort()?.to_vec()?, vec![1, 5, 9]);
    /// # Ok(())
    /// # }
    /// ```
    #[track_caller]
    pub fn sort(&self) -> Result<Compacted<T>> {
        let sorted = self.filled(sorts_last()).sort()?;
        Ok(Compacted::from_parts(sorted, self.count().clone()))
    }

    /// The positions, among the picked elements, that sort them (numpy's `np.argsort(a,
    /// kind="stable")` of the filtered array), as [`Index`], with this count:
    /// `c.argsort()?.take_from(c.values())?` is `c.sort()?`. Never waits.
    #[track_caller]
    pub fn argsort(&self) -> Result<Compacted<Index>> {
        let order = self.filled(sorts_last()).argsort()?;
        Ok(Compacted::from_parts(order, self.count().clone()))
    }

    /// Sum of the picked elements (0 if none): a lazy 0-d array that reads the count from
    /// device memory, fused into one reduction kernel (no wait).
    #[track_caller]
    pub fn sum(&self) -> Array<T::Sum> {
        self.filled(T::default()).sum()
    }

    /// Product of the picked elements (1 if none): a lazy 0-d array, no wait.
    #[track_caller]
    pub fn prod(&self) -> Array<T::Sum> {
        self.filled(T::__from_f64(1.0)).prod()
    }

    /// What a smallest or largest reads: the picked elements with `ignored` past the count,
    /// or, of a capacity of 0, the one element `ignored` (so that the result of nothing is
    /// that value, as for a count of 0, not an error).
    #[track_caller]
    fn extreme_of(&self, ignored: T) -> Array<T> {
        match self.capacity() {
            0 => Array::lazy(
                &self.values().node.ctx,
                Vec::new(),
                Op::Scalar(ignored.to_arg_bits()),
            )
            .broadcast_to(&[1]),
            _ => self.filled(ignored),
        }
    }

    /// Smallest picked element, NaN ignored as by [`Array::amin`]: a lazy 0-d array, no
    /// wait. Of nothing (no wait can refuse it): NaN for floats, the type's largest value
    /// for integers.
    #[track_caller]
    pub fn amin(&self) -> Array<T> {
        self.extreme_of(ignored_by_min()).amin()
    }

    /// Largest picked element, NaN ignored as by [`Array::amax`]: a lazy 0-d array, no
    /// wait. Of nothing: NaN for floats, the type's smallest value for integers.
    #[track_caller]
    pub fn amax(&self) -> Array<T> {
        self.extreme_of(ignored_by_max()).amax()
    }

    /// Position among the picked elements of the first smallest one (NaN ignored), as
    /// [`Array::argmin`]: a lazy 0-d array, no wait; 0 if none was picked.
    #[track_caller]
    pub fn argmin(&self) -> Array<Index> {
        self.extreme_of(ignored_by_min()).argmin()
    }

    /// Position among the picked elements of the first largest one (NaN ignored), as
    /// [`Array::argmax`]: a lazy 0-d array, no wait; 0 if none was picked.
    #[track_caller]
    pub fn argmax(&self) -> Array<Index> {
        self.extreme_of(ignored_by_max()).argmax()
    }
}

impl<T: Float> Compacted<T> {
    /// Arithmetic mean of the picked elements (NaN if none, as numpy's mean of an empty
    /// array): the [`sum`](Compacted::sum) over the count, both on the device: a lazy 0-d
    /// array, no wait.
    ///
    /// ```
    /// # use lazycl::prelude::*;
    /// # fn main() -> lazycl::Result<()> {
    /// let ctx = Context::new()?;
    /// let x = ctx.from_slice(&[1.0f64, -5.0, 2.0, 6.0])?;
    /// assert_eq!(x.compress(&x.gt(0.0))?.mean().item()?, 3.0);
    /// # Ok(())
    /// # }
    /// ```
    #[track_caller]
    pub fn mean(&self) -> Array<T> {
        &self.sum() / &self.count().cast::<T>()
    }
}

impl<I: Integer> Compacted<I> {
    /// The elements of the one-dimensional `data` at these positions (numpy's
    /// `np.take(data, idx)`), with this count: `x.take_from(..)` after
    /// [`Array::nonzero`] gathers the picked elements, after
    /// [`argsort`](Compacted::argsort) sorts them. Positions past the end of `data` are
    /// clamped into it, as [`Array::take`] does. Lazy, no wait.
    #[track_caller]
    pub fn take_from<T: Element>(&self, data: &Array<T>) -> Result<Compacted<T>> {
        if data.ndim() != 1 {
            return Err(Error::InvalidShape(format!(
                "take_from: the data must be one-dimensional, not of shape {:?}",
                data.shape()
            )));
        }
        Ok(Compacted::from_parts(
            data.take(0, self.values()),
            self.count().clone(),
        ))
    }

    /// Adds `src` into `dst` at these positions along `axis`, as
    /// [`scatter_add`](crate::scatter_add) with the picked elements as its indices:
    /// `src` has (or broadcasts to) `dst`'s shape with `axis` as long as the
    /// [`capacity`](Compacted::capacity) (a [`values`](Compacted::values) of the same
    /// mask, or a lazy expression of them). The positions past the count become an index
    /// outside the axis (the type's largest value), whose elements are dropped. Enqueued,
    /// never waited on.
    ///
    /// ```
    /// # use lazycl::prelude::*;
    /// # fn main() -> lazycl::Result<()> {
    /// let ctx = Context::new()?;
    /// let bins = ctx.from_slice(&[0u32, 2, 1, 2, 0])?;
    /// let weights = ctx.from_slice(&[1.0f32, 2.0, -3.0, 4.0, 5.0])?;
    /// let keep = weights.gt(0.0);
    /// let mut totals = ctx.zeros::<f32>([3])?;
    /// bins.compress(&keep)?.scatter_add(&mut totals, 0, weights.compress(&keep)?.values())?;
    /// assert_eq!(totals.to_vec()?, vec![6.0, 0.0, 6.0]);
    /// # Ok(())
    /// # }
    /// ```
    #[track_caller]
    pub fn scatter_add<T: Arithmetic>(
        &self,
        dst: &mut Array<T>,
        axis: impl AsAxis,
        src: impl Operand<T>,
    ) -> Result<()> {
        let axis = resolve_axis("scatter_add", axis.axis_value(), dst.shape(), false)?;
        let indices = self.outside_past_count("scatter_add", dst.shape()[axis])?;
        crate::api::indexing::scatter_add(dst, axis, &indices, src)
    }

    /// How many times each value `0..len` occurs among the picked elements, as
    /// [`Array::bincount`] of them (values outside `0..len` not counted). Enqueued, never
    /// waited on.
    ///
    /// ```
    /// # use lazycl::prelude::*;
    /// # fn main() -> lazycl::Result<()> {
    /// let ctx = Context::new()?;
    /// let labels = ctx.from_slice(&[2u32, 0, 2, 3, 1])?;
    /// let picked = labels.compress(&labels.ge(2))?;
    /// assert_eq!(picked.bincount(4)?.to_vec()?, [0, 0, 2, 1]);
    /// # Ok(())
    /// # }
    /// ```
    #[track_caller]
    pub fn bincount(&self, len: usize) -> Result<Array<Index>> {
        self.outside_past_count("bincount", len)?.bincount(len)
    }

    /// The picked elements with the positions past the count holding the type's largest
    /// value: an index outside an axis of `len` (else an error naming operation `op`).
    #[track_caller]
    fn outside_past_count(&self, op: &str, len: usize) -> Result<Array<I>> {
        let outside = sorts_last::<I>();
        if outside.__to_f64() < len as f64 {
            return Err(Error::InvalidShape(format!(
                "{op}: an axis of {len} elements holds every {:?} index, so none marks the positions past \
                 the count of a Compacted<{:?}>; cast the positions first: c.map(|p| p.cast::<u64>())?",
                I::DTYPE,
                I::DTYPE
            )));
        }
        Ok(self.filled(outside))
    }
}
