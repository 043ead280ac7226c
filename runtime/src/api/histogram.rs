//! Histograms of equal bins over a range (numpy's `histogram(x, bins, range=(lo, hi))`):
//! each element's bin computed elementwise and counted by `bincount`'s atomic scatter,
//! in one kernel that reads the data once.

use std::ops::RangeInclusive;

use crate::api::array::Array;
use crate::api::sequences::spaced;
use crate::dtype::{DType, Float, Index};
use crate::error::{Error, Result};

/// What [`Array::histogram`] returns (numpy's `(hist, bin_edges)`).
#[derive(Clone, Debug)]
pub struct Histogram<T: Float> {
    /// How many elements fall in each bin, `bins` counts.
    pub counts: Array<Index>,
    /// The `bins + 1` edges of the bins, from the range's start to its end (numpy's
    /// `bin_edges`: `linspace(lo, hi, bins + 1)`, lazy).
    pub edges: Array<T>,
}

impl<T: Float> Array<T> {
    /// The counts of this array's elements (of any shape, flattened) in `bins` equal bins
    /// over `range` (numpy's `histogram(x, bins, range=(lo, hi))`), and the bins' edges.
    ///
    /// Bin `b` holds the elements `x` with `edges[b] <= x < edges[b + 1]`, the last bin
    /// `x == hi` too; elements outside the range, and NaN, are not counted. As in numpy,
    /// an element's bin is `(x - lo) * bins / (hi - lo)` truncated, then moved by one
    /// where the edges (computed as [`linspace`](crate::Context::linspace) does) say
    /// otherwise, and a range with `lo == hi` is widened to `lo - 0.5 ..= hi + 0.5`. The
    /// counts are [`Index`]es, so an array of more than `u32::MAX` elements is an error,
    /// as are 0 bins, a range that is not finite, and one whose start passes its end.
    ///
    /// ```
    /// # use lazycl::prelude::*;
    /// # fn main() -> lazycl::Result<()> {
    /// let ctx = Context::new()?;
    /// let x = ctx.from_slice(&[0.5f32, 1.0, 1.5, 4.0, 9.0, f32::NAN, -1.0])?;
    /// let h = x.histogram(4, 0.0..=4.0)?;
    /// assert_eq!(h.counts.to_vec()?, [1, 2, 0, 1]); // 4.0 is in the last bin; 9, NaN, -1 are not
    /// assert_eq!(h.edges.to_vec()?, [0.0, 1.0, 2.0, 3.0, 4.0]);
    /// # Ok(())
    /// # }
    /// ```
    #[track_caller]
    pub fn histogram(&self, bins: usize, range: RangeInclusive<T>) -> Result<Histogram<T>> {
        let (mut lo, mut hi) = (range.start().__to_f64(), range.end().__to_f64());
        let fail = |why: String| Error::InvalidShape(format!("histogram into {bins} bins: {why}"));
        if bins == 0 || bins > Index::MAX as usize {
            return Err(fail(format!("the bins must be 1 to {}", Index::MAX)));
        }
        if !(lo.is_finite() && hi.is_finite()) {
            return Err(fail(format!("the range {lo}..={hi} is not finite")));
        }
        if lo > hi {
            return Err(fail(format!("the range {lo}..={hi} starts after its end")));
        }
        if lo == hi {
            (lo, hi) = (lo - 0.5, hi + 0.5);
        }
        let norm = match T::DTYPE {
            DType::F32 => f64::from(bins as f32 / (hi as f32 - lo as f32)),
            _ => bins as f64 / (hi - lo),
        };
        let (lo, hi) = (T::__from_f64(lo), T::__from_f64(hi));
        let ctx = self.context();
        let edges = ctx.linspace(lo, hi, bins + 1)?;
        let x = match self.ndim() {
            1 => self.clone(),
            _ => self.reshape([self.len()]),
        };
        let edge = |i: &Array<i64>| spaced(i, lo, hi, bins + 1);
        let last = bins as i64 - 1;
        let guess = ((&x - lo) * T::__from_f64(norm)).cast::<i64>().clamp(0, last);
        let next = &guess + 1;
        let below = x.lt(edge(&guess));
        let above = x.ge(edge(&next)) & guess.ne(last);
        let bin = below.select(&guess - 1, above.select(&next, &guess));
        let kept = x.ge(lo) & x.le(hi);
        let counts = kept.select(bin, -1i64).bincount(bins)?;
        Ok(Histogram { counts, edges })
    }
}
