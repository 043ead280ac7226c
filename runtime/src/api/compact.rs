//! Boolean compaction: `compress` (numpy's boolean indexing `a[mask]`) and `nonzero`
//! (numpy's `flatnonzero`). The result's length is only known once the mask is counted,
//! on the device: a [`Compacted`] holds the picked elements in an array as long as the
//! input (its *capacity*) and their count as a device scalar. What users chain after a
//! filter (`api/compacted.rs`: sort, reductions, maps, scatters) reads the count from
//! device memory, so only asking for the length (or reading the elements) waits.

use crate::api::array::Array;
use crate::api::construct::positions;
use crate::backend::buffer::DeviceBuffer;
use crate::dtype::{Element, Index};
use crate::error::{Error, Result};
use crate::exec::compact::compact;
use crate::graph::Origin;
use crate::plan::compact::{compact_plan, Picked};

/// The elements a mask picked, in row-major order, computed on the device
/// ([`Array::compress`], [`Array::nonzero`]): a one-dimensional array whose length lives
/// on the device.
///
/// It holds the picked elements first in an array as long as the input
/// ([`values`](Compacted::values), [`capacity`](Compacted::capacity) long; what follows
/// them is unspecified) and their number as a `u64` device scalar
/// ([`count`](Compacted::count)). Its operations — [`sort`](Compacted::sort),
/// [`argsort`](Compacted::argsort), [`sum`](Compacted::sum), [`mean`](Compacted::mean),
/// [`amin`](Compacted::amin), [`map`](Compacted::map), [`head`](Compacted::head),
/// [`scatter_add`](Compacted::scatter_add), [`bincount`](Compacted::bincount), ... —
/// compare each position with the count inside their kernels and never wait on the host.
/// Only [`len`](Compacted::len), [`is_empty`](Compacted::is_empty),
/// [`into_array`](Compacted::into_array) and [`to_vec`](Compacted::to_vec) wait (for the
/// count).
///
/// ```
/// # use lazycl::prelude::*;
/// # fn main() -> lazycl::Result<()> {
/// let ctx = Context::new()?;
/// let x = ctx.from_slice(&[3.0f32, -1.0, 4.0, -1.5, 5.0, 0.5])?;
/// let before = ctx.stats();
/// let picked = x.compress(&x.gt(0.0))?; // 3, 4, 5, 0.5
/// let smallest_two = picked.sort()?.head(2); // 0.5, 3
/// let total = smallest_two.sum(); // a lazy 0-d array
/// total.eval()?;
/// assert_eq!((ctx.stats() - before).host_waits, 0);
/// assert_eq!(total.item()?, 3.5);
/// assert_eq!(smallest_two.to_vec()?, vec![0.5, 3.0]);
/// # Ok(())
/// # }
/// ```
pub struct Compacted<T: Element> {
    /// The picked elements first; as long as the input.
    values: Array<T>,
    /// How many were picked (shape `[]`), at most the capacity.
    count: Array<u64>,
}

impl<T: Element> Compacted<T> {
    /// `values` (one-dimensional, the picked elements first) with `count` of them.
    #[track_caller]
    pub(crate) fn from_parts(values: Array<T>, count: Array<u64>) -> Compacted<T> {
        Compacted { values, count }
    }

    /// How many elements were picked, as a device scalar (no wait).
    #[track_caller]
    pub fn count(&self) -> &Array<u64> {
        &self.count
    }

    /// The most elements there can be: the input's length.
    #[track_caller]
    pub fn capacity(&self) -> usize {
        self.values.len()
    }

    /// The array of [`capacity`](Compacted::capacity) elements whose first
    /// [`count`](Compacted::count) are the picked ones; the others are unspecified (no
    /// wait). Arrays of the same capacity go with it: `vals.compress(&m)?.values()` as
    /// the values of `keys.compress(&m)?.scatter_add(..)`.
    #[track_caller]
    pub fn values(&self) -> &Array<T> {
        &self.values
    }

    /// Whether each position of [`values`](Compacted::values) holds a picked element
    /// (position < count): a lazy `bool` array of the capacity's length that reads the
    /// count from device memory (no wait).
    #[track_caller]
    pub fn valid(&self) -> Array<bool> {
        positions::<u64>(&self.values.node.ctx, self.capacity()).lt(&self.count)
    }

    /// [`values`](Compacted::values) with every position past the count replaced by
    /// `fill` (numpy's `masked_array.filled`): a lazy array of the capacity's length, no
    /// wait.
    ///
    /// ```
    /// # use lazycl::prelude::*;
    /// # fn main() -> lazycl::Result<()> {
    /// let ctx = Context::new()?;
    /// let x = ctx.from_slice(&[1i32, -2, 3, -4])?;
    /// assert_eq!(x.compress(&x.gt(0))?.filled(0).to_vec()?, vec![1, 3, 0, 0]);
    /// # Ok(())
    /// # }
    /// ```
    #[track_caller]
    pub fn filled(&self, fill: T) -> Array<T> {
        self.valid().select(&self.values, fill)
    }

    /// How many elements were picked: waits for the count.
    pub fn len(&self) -> Result<usize> {
        let n = self.count.item()?;
        usize::try_from(n).map_err(|_| Error::Internal(format!("a count of {n} picked elements")))
    }

    /// Whether nothing was picked: waits for the count.
    pub fn is_empty(&self) -> Result<bool> {
        Ok(self.len()? == 0)
    }

    /// The picked elements as a one-dimensional array of known length (a view of the
    /// first [`len`](Compacted::len)): waits for the count, not for the elements.
    #[track_caller]
    pub fn into_array(self) -> Result<Array<T>> {
        let n = self.len()?;
        Ok(self.values.slice(ndarray::s![..n]))
    }

    /// The picked elements on the host: waits for the count, then for the elements.
    #[track_caller]
    pub fn to_vec(&self) -> Result<Vec<T>> {
        let n = self.len()?;
        if n == 0 {
            return Ok(Vec::new());
        }
        self.values.slice(ndarray::s![..n]).to_vec()
    }
}

impl<T: Element> Array<T> {
    /// The elements where `mask` is true, in row-major order (numpy's `a[mask]`; `mask`
    /// broadcasts to this array's shape). Enqueued at once, one pass over the mask and
    /// the picked elements; the count stays on the device.
    ///
    /// ```
    /// # use lazycl::prelude::*;
    /// # fn main() -> lazycl::Result<()> {
    /// let ctx = Context::new()?;
    /// let x = ctx.from_slice(&[3.0f32, -1.0, 4.0, -1.5, 5.0])?;
    /// let positive = x.compress(&x.gt(0.0))?;
    /// assert_eq!(positive.to_vec()?, vec![3.0, 4.0, 5.0]);
    /// let doubled = 2.0 * &positive.into_array()?;
    /// assert_eq!(doubled.to_vec()?, vec![6.0, 8.0, 10.0]);
    /// # Ok(())
    /// # }
    /// ```
    #[track_caller]
    pub fn compress(&self, mask: &Array<bool>) -> Result<Compacted<T>> {
        self.node.ctx.tag.check(
            &mask.node.ctx.tag,
            || "compress".into(),
            || format!("the mask (shape {:?})", mask.shape()),
        )?;
        let wide = mask.broadcast_to(self.shape());
        if wide.recording_error().is_some() && mask.recording_error().is_none() {
            return Err(Error::ShapeMismatch {
                op: "compress (an array and its mask)".into(),
                left: self.shape().to_vec(),
                right: mask.shape().to_vec(),
                why: Error::BROADCAST.into(),
            });
        }
        let picked = Picked::Elements {
            bytes: T::DTYPE.size() as u32,
        };
        compacted(&wide, Some(self), picked)
    }
}

impl Array<bool> {
    /// The row-major positions of the `true` elements, as [`Index`] (`u32`; numpy's
    /// `np.flatnonzero`; `np.nonzero` of a one-dimensional mask). A mask of more than
    /// `u32::MAX` elements is refused (its positions would not fit). Enqueued at once;
    /// the count stays on the device.
    ///
    /// ```
    /// # use lazycl::prelude::*;
    /// # fn main() -> lazycl::Result<()> {
    /// let ctx = Context::new()?;
    /// let m = ctx.from_shape_slice([2, 3], &[false, true, false, true, true, false])?;
    /// assert_eq!(m.nonzero()?.to_vec()?, vec![1, 3, 4]);
    /// # Ok(())
    /// # }
    /// ```
    #[track_caller]
    pub fn nonzero(&self) -> Result<Compacted<Index>> {
        if self.len() > u32::MAX as usize {
            return Err(Error::TooLarge {
                op: "nonzero".into(),
                shape: self.shape().to_vec(),
                reason: format!(
                    "{} elements; its positions are `u32` (lazycl::Index), so at most {} are",
                    self.len(),
                    u32::MAX
                ),
            });
        }
        compacted::<Index>(self, None, Picked::Positions)
    }
}

/// Compacts `values` (or the positions) by `mask`, both of `mask`'s shape.
#[track_caller]
fn compacted<T: Element>(
    mask: &Array<bool>,
    values: Option<&Array<T>>,
    picked: Picked,
) -> Result<Compacted<T>> {
    let ctx = mask.node.ctx.clone();
    let n = mask.len();
    let plan = compact_plan(picked, n, &ctx.profile).ok_or_else(|| {
        Error::InvalidShape(format!(
            "compress: the device's {} bytes of local memory hold no compaction tile",
            ctx.profile.local_mem_bytes
        ))
    })?;
    let mask_buffer = mask.materialized_buffer("a compaction (compress, nonzero)")?;
    let value_buffer = match values {
        Some(v) => Some(v.materialized_buffer("a compaction (compress, nonzero)")?),
        None => None,
    };
    let out = DeviceBuffer::uninit(
        &ctx.cl,
        (n * T::DTYPE.size()).max(1),
        ctx.queue(),
        "a compaction's output",
    )?;
    let count = DeviceBuffer::uninit(&ctx.cl, 8, ctx.queue(), "a compaction's count")?;
    compact(
        &ctx,
        ctx.queue(),
        &plan,
        &mask_buffer,
        value_buffer.as_deref(),
        &out,
        &count,
    )?;
    Ok(Compacted {
        values: match values {
            Some(v) => Array::ready_from(&ctx, vec![n], out, Origin::Algorithm("a compaction"), &v.node),
            None => Array::ready(&ctx, vec![n], out, Origin::Algorithm("a compaction")),
        },
        count: Array::ready(
            &ctx,
            Vec::<usize>::new(),
            count,
            Origin::Algorithm("a compaction"),
        ),
    })
}
