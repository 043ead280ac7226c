//! Boolean compaction: `compress` (numpy's boolean indexing `a[mask]`) and `nonzero`
//! (numpy's `flatnonzero`). The result's length is only known once the mask is counted,
//! on the device: a [`Compacted`] holds the picked elements in an array as long as the
//! input and their count as a device scalar, and only asking for the length (or the
//! elements) waits.

use crate::api::array::Array;
use crate::backend::buffer::DeviceBuffer;
use crate::dtype::Element;
use crate::error::{Error, Result};
use crate::exec::compact::compact;
use crate::graph::Origin;
use crate::plan::compact_plan::{compact_plan, Picked};

/// The elements a mask picked, in row-major order, computed on the device
/// ([`Array::compress`], [`Array::nonzero`]). Their number is on the device too:
/// [`count`](Compacted::count) is a lazy scalar that other arrays may use without a wait;
/// [`len`](Compacted::len), [`into_array`](Compacted::into_array) and
/// [`to_vec`](Compacted::to_vec) read it.
pub struct Compacted<T: Element> {
    /// The picked elements first; as long as the input.
    values: Array<T>,
    /// How many were picked (shape `[]`).
    count: Array<u64>,
}

impl<T: Element> Compacted<T> {
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

    /// How many elements were picked: waits for the count.
    pub fn len(&self) -> Result<usize> {
        let n = self.count.item()?;
        usize::try_from(n).map_err(|_| Error::Internal(format!("a count of {n} picked elements")))
    }

    /// Whether nothing was picked: waits for the count.
    pub fn is_empty(&self) -> Result<bool> {
        Ok(self.len()? == 0)
    }

    /// The picked elements as a one-dimensional array (a view of the first
    /// [`len`](Compacted::len)): waits for the count, not for the elements.
    #[track_caller]
    pub fn into_array(self) -> Result<Array<T>> {
        let n = self.len()?;
        Ok(self.values.slice(ndarray::s![..n]))
    }

    /// The picked elements on the host.
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
    /// The row-major positions of the `true` elements, as `u64` (numpy's
    /// `np.flatnonzero`; `np.nonzero` of a one-dimensional mask).
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
    pub fn nonzero(&self) -> Result<Compacted<u64>> {
        compacted::<u64>(self, None, Picked::Positions)
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
        values: Array::ready(&ctx, vec![n], out, Origin::Algorithm("a compaction")),
        count: Array::ready(
            &ctx,
            Vec::<usize>::new(),
            count,
            Origin::Algorithm("a compaction"),
        ),
    })
}
