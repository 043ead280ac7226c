//! Reduction by key: [`reduce_by_key`] (Thrust's `reduce_by_key`; with sorted keys, JAX's
//! and CuPy's `segment_sum` and its `min`/`max`/`prod` siblings): the sum, product,
//! minimum or maximum of the values of each run of equal consecutive keys, with the run's
//! key and length.
//!
//! The mechanism is a composition: the runs of the keys as `unique` finds them
//! (`api::sets`: a neighbour comparison and a compaction), each element's run number (a
//! scan of the run heads), then a segmented inclusive scan by doubling: in step `d`
//! (1, 2, 4, ...) each element combines with the one `d` before it when both are in one
//! run, an elementwise kernel over the values. After `ceil(log2(longest run))` steps the
//! last element of each run holds the run's reduction, gathered by `take`. The steps
//! combine neighbours pairwise, so float sums round like a tree, deterministically
//! (no atomics), and each step is one pass over the values.

use ndarray::s;

use crate::api::array::Array;
use crate::api::sets::runs;
use crate::dtype::{Index, Numeric};
use crate::error::{Error, Result};

/// How [`reduce_by_key`] combines the values of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KeyReduce {
    /// Their sum (wrapping for integers), as [`Array::sum`].
    Sum,
    /// Their product (wrapping for integers), as [`Array::prod`].
    Prod,
    /// The smallest, NaN ignored (NaN only if all are), as [`Array::amin`].
    Min,
    /// The largest, NaN ignored (NaN only if all are), as [`Array::amax`].
    Max,
}

/// The runs of equal keys and their reductions ([`reduce_by_key`]).
pub struct ReducedByKey<K: Numeric, V: Numeric> {
    /// Each run's key (its first), in the order of the runs.
    pub keys: Array<K>,
    /// Each run's reduction of its values.
    pub values: Array<V>,
    /// How many elements each run holds (the count per key).
    pub counts: Array<Index>,
}

/// The values reduced over each run of consecutive equal keys (Thrust's
/// `reduce_by_key`), combined as `op` says ([`KeyReduce`]: the semantics of the
/// reductions of those names). The counts per key come with every reduction.
///
/// `keys` and `values` are one-dimensional and of one length. Keys are equal as in
/// [`Array::unique`]: `-0.0` equals `+0.0`, and NaN equals NaN (where Thrust's
/// `equal_to` makes each NaN a run of its own). Keys need not be sorted: a key that
/// comes back after another starts a new run, as in Thrust; with sorted keys (after
/// [`sort_by_key`](crate::sort_by_key)) there is one run per distinct key, as
/// `segment_sum` gives.
///
/// Waits on the host twice: for the number of runs (the results' length) and for the
/// longest run's length (the number of doubling steps). Nothing else waits.
///
/// ```
/// # use lazycl::prelude::*;
/// # fn main() -> lazycl::Result<()> {
/// let ctx = Context::new()?;
/// let keys = ctx.from_slice(&[1u32, 1, 4, 4, 4, 2, 1])?;
/// let vals = ctx.from_slice(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0])?;
/// use lazycl::{reduce_by_key, KeyReduce};
/// let r = reduce_by_key(&keys, &vals, KeyReduce::Sum)?;
/// assert_eq!(r.keys.to_vec()?, [1, 4, 2, 1]); // 1 comes back: a run of its own
/// assert_eq!(r.values.to_vec()?, [3.0, 12.0, 6.0, 7.0]);
/// assert_eq!(r.counts.to_vec()?, [2, 3, 1, 1]);
/// let m = reduce_by_key(&keys, &vals, KeyReduce::Max)?;
/// assert_eq!(m.values.to_vec()?, [2.0, 5.0, 6.0, 7.0]);
/// # Ok(())
/// # }
/// ```
#[track_caller]
pub fn reduce_by_key<K: Numeric, V: Numeric>(
    keys: &Array<K>,
    values: &Array<V>,
    op: KeyReduce,
) -> Result<ReducedByKey<K, V>> {
    let name = format!("reduce_by_key ({op:?})");
    keys.node.ctx.tag.check(
        &values.node.ctx.tag,
        || name.clone(),
        || format!("the values (shape {:?})", values.shape()),
    )?;
    if let Some(e) = keys.recording_error().or_else(|| values.recording_error()) {
        return Err(e);
    }
    let [n] = keys.shape()[..] else {
        return Err(Error::InvalidShape(format!(
            "{name}: the keys must be one-dimensional, not of shape {:?}",
            keys.shape()
        )));
    };
    if values.shape() != [n] {
        return Err(Error::ShapeMismatch {
            op: format!("{name} (keys and values)"),
            left: keys.shape().to_vec(),
            right: values.shape().to_vec(),
            why: "differ: each key needs its value".into(),
        });
    }
    let runs = runs(keys, &name)?;
    if n == 0 {
        return Ok(ReducedByKey {
            keys: keys.clone(),
            values: values.clone(),
            counts: runs.counts,
        });
    }
    // Run numbers from 1, so that the 0 padded in front of a shifted copy is in no run.
    let run = runs.heads.cast::<Index>().cumsum(0);
    run.eval()?;
    let longest = runs.counts.amax().item()? as usize;
    let mut acc = values.to_contiguous();
    acc.eval()?;
    let mut d = 1;
    while d < longest {
        let before = acc.slice(s![..n - d]).pad(&[(d, 0)], V::default());
        let run_before = run.slice(s![..n - d]).pad(&[(d, 0)], 0);
        let joined = match op {
            KeyReduce::Sum => &before + &acc,
            KeyReduce::Prod => &before * &acc,
            KeyReduce::Min => before.min(&acc),
            KeyReduce::Max => before.max(&acc),
        };
        acc = run_before.eq(&run).select(&joined, &acc);
        acc.eval()?;
        d *= 2;
    }
    let last = &runs.starts.slice(s![1..]).pad(&[(0, 1)], n as Index) - 1;
    Ok(ReducedByKey {
        keys: keys.take(0, &runs.starts),
        values: acc.take(0, &last),
        counts: runs.counts,
    })
}
