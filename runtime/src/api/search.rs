//! `searchsorted`: where values would go in a sorted array, as a lazy node. It is a
//! `take` whose load is a binary search: each element of the result searches the sorted
//! data (from memory of its own) for its value, in the kernel that reads the result, so
//! the values may be lazy and the positions feed their consumer without being stored.

use crate::api::array::Array;
use crate::api::ops::{CtxRef, Operand};
use crate::dtype::{Index, Numeric};
use crate::error::Error;
use crate::graph::shape::broadcast;
use crate::graph::{Op, SearchSide, TakeSpec};

impl<T: Numeric> Array<T> {
    /// The positions at which `values` would be inserted into this sorted array to keep
    /// it sorted (numpy's `np.searchsorted(a, v, side)`): for [`SearchSide::Left`] the
    /// first position `i` with `v <= self[i]`, for [`SearchSide::Right`] the first with
    /// `v < self[i]` (the array's length where there is none). Floats are ordered as
    /// numpy sorts them, NaN after every number: a NaN value goes after the numbers
    /// (before the NaNs with `Left`). The array must be sorted that way (ascending): the
    /// positions in an unsorted one are some binary search's, as in numpy.
    ///
    /// A 1-d array is searched for every element of `values` (any shape; the result has
    /// its shape). An array of more axes holds one sorted row along its last axis per
    /// position of the others, searched for the values at the same position: `values`
    /// has its rank, and the leading axes broadcast against each other (the result has
    /// `values`' length along the last axis). Lazy: one binary search per position, in
    /// the kernel that reads the result; the sorted array is read from memory of its own
    /// (computed first where it is lazy), the values are computed in that kernel.
    ///
    /// A 0-d array, values of another rank or leading lengths that do not broadcast,
    /// arrays of two contexts, or a row longer than `Index` counts, are errors, reported
    /// when the result is materialized.
    ///
    /// ```
    /// # use lazycl::prelude::*;
    /// # fn main() -> lazycl::Result<()> {
    /// let ctx = Context::new()?;
    /// let edges = ctx.from_slice(&[0.0f32, 1.0, 2.0, 2.0, 5.0])?;
    /// let v = ctx.from_slice(&[-1.0f32, 2.0, 3.5, 9.0, f32::NAN])?;
    /// assert_eq!(edges.searchsorted(&v, SearchSide::Left).to_vec()?, [0, 2, 4, 5, 5]);
    /// assert_eq!(edges.searchsorted(&v, SearchSide::Right).to_vec()?, [0, 4, 4, 5, 5]);
    /// // One sorted row per leading position.
    /// let rows = ctx.from_shape_slice([2, 3], &[1, 2, 3, 10, 20, 30])?;
    /// let w = ctx.from_shape_slice([2, 2], &[2, 4, 5, 20])?;
    /// assert_eq!(rows.searchsorted(&w, SearchSide::Left).to_vec()?, [1, 3, 0, 1]);
    /// # Ok(())
    /// # }
    /// ```
    #[track_caller]
    pub fn searchsorted(&self, values: &Array<T>, side: SearchSide) -> Array<Index> {
        let ctx = &self.node.ctx;
        let at = std::panic::Location::caller();
        let fail = |e: Error| Array::failed(ctx, values.shape().to_vec(), e.recorded_at(at));
        if let Some(e) = self.recording_error().or_else(|| values.recording_error()) {
            return fail(e);
        }
        if let Err(e) = ctx.tag.check(
            &values.node.ctx.tag,
            || "searchsorted".into(),
            || format!("the values (shape {:?})", values.shape()),
        ) {
            return fail(e);
        }
        let sorted = self.shape();
        let rank = sorted.len();
        let Some(&len) = sorted.last() else {
            return fail(Error::InvalidShape(
                "searchsorted: the sorted array is 0-d; it needs an axis to search along".into(),
            ));
        };
        if len > Index::MAX as usize {
            return fail(Error::TooLarge {
                op: "searchsorted".into(),
                shape: sorted.to_vec(),
                reason: format!(
                    "{len} elements along the searched axis: positions are `Index` (u32), at most {}",
                    Index::MAX
                ),
            });
        }
        let mismatch = || Error::ShapeMismatch {
            op: "searchsorted along the last axis".into(),
            left: sorted.to_vec(),
            right: values.shape().to_vec(),
            why: "do not fit: the values need the sorted array's rank, and leading lengths that broadcast \
                  against its own"
                .into(),
        };
        let (shape, along) = if rank == 1 {
            (values.shape().to_vec(), false)
        } else {
            let v = values.shape();
            if v.len() != rank {
                return fail(mismatch());
            }
            let mut lifted = sorted.to_vec();
            lifted[rank - 1] = v[rank - 1];
            match broadcast(&lifted, v) {
                Some(s) => (s.to_vec(), true),
                None => return fail(mismatch()),
            }
        };
        let spec = TakeSpec {
            axis: rank - 1,
            along,
            search: Some(side),
        };
        if len == 0 {
            // Every position is 0 in an empty row.
            return Operand::<Index>::into_array(0, CtxRef(ctx)).broadcast_to(&shape);
        }
        Array::lazy(
            ctx,
            shape,
            Op::Take {
                spec,
                data: self.node.clone(),
                indices: values.node.clone(),
            },
        )
    }
}
