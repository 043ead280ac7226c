//! Sorted sets, numpy's names: `unique` (with the array API standard's `unique_counts`,
//! `unique_inverse` and `unique_all` for numpy's `return_counts`, `return_inverse` and
//! `return_index`), `union1d`, `intersect1d` and `setdiff1d`. Each is composed of the
//! device's mechanisms: the radix sort (`api::sort`), a comparison of neighbours that
//! flags where each run of equal elements starts, the compaction of those flags
//! (`nonzero`), gathers (`take`), a scan and a scatter (`cumsum`, `scatter_add`) for the
//! inverse.
//!
//! The number of distinct elements depends on the data: like numpy and CuPy, these
//! functions wait on the host for it (a compaction's count) and return arrays of that
//! length: `unique` and its siblings and `union1d` wait once, `intersect1d` and
//! `setdiff1d` three times (each set's `unique`, then the result). The results' elements
//! are computed on the device and are not waited for.
//!
//! Equality: `-0.0` and `+0.0` are equal, and `unique` keeps one NaN for all NaNs (numpy's
//! `equal_nan=True`, its default since 1.21). Where numpy keeps whichever zero its sort
//! puts first, these keep `-0.0` if there is one (the sort puts it before `+0.0`).
//! `intersect1d` and `setdiff1d` compare with `==`, as numpy's do: a NaN is in no
//! intersection, and stays in a difference.

use ndarray::s;

use crate::api::array::Array;
use crate::api::indexing::scatter_add;
use crate::api::regions::concatenate;
use crate::api::sort::SortedPositions;
use crate::backend::context::Context;
use crate::dtype::{Element, Index, Numeric};
use crate::error::{Error, Result};

/// The distinct elements with their counts ([`Array::unique_counts`]; the array API
/// standard's `unique_counts`, numpy's `unique(a, return_counts=True)`).
pub struct UniqueCounts<T: Numeric> {
    /// The distinct elements, sorted.
    pub values: Array<T>,
    /// How many times each occurs.
    pub counts: Array<Index>,
}

/// The distinct elements and where each input element is among them
/// ([`Array::unique_inverse`]; numpy's `unique(a, return_inverse=True)`).
pub struct UniqueInverse<T: Numeric> {
    /// The distinct elements, sorted.
    pub values: Array<T>,
    /// For each input element, the position of its value in `values`, in the input's
    /// shape: `values.take(0, &inverse)` is the input.
    pub inverse: Array<Index>,
}

/// Everything `unique` knows ([`Array::unique_all`]; the array API standard's
/// `unique_all`, numpy's `unique` with `return_index`, `return_inverse` and
/// `return_counts`).
pub struct UniqueAll<T: Numeric> {
    /// The distinct elements, sorted.
    pub values: Array<T>,
    /// Where each distinct element first occurs in the flattened input.
    pub indices: Array<Index>,
    /// For each input element, the position of its value in `values`, in the input's
    /// shape.
    pub inverse: Array<Index>,
    /// How many times each distinct element occurs.
    pub counts: Array<Index>,
}

/// The runs of equal neighbours of a one-dimensional array.
pub(crate) struct Runs {
    /// Whether each element starts a run (`true` for the first).
    pub(crate) heads: Array<bool>,
    /// Where each run starts (the positions of the heads).
    pub(crate) starts: Array<Index>,
    /// How long each run is.
    pub(crate) counts: Array<Index>,
}

/// Whether `a` and `b` are equal, or both NaN (`a != a` only for NaN).
#[track_caller]
pub(crate) fn equal_nan<T: Numeric>(a: &Array<T>, b: &Array<T>) -> Array<bool> {
    &a.eq(b) | &(&a.ne(a) & &b.ne(b))
}

/// The runs of elements of `a` (one-dimensional) equal to their left neighbour, NaN equal
/// to NaN. Waits for the number of runs; `op` names the user's operation.
#[track_caller]
pub(crate) fn runs<T: Numeric>(a: &Array<T>, op: &str) -> Result<Runs> {
    let n = a.len();
    let ctx = Context {
        inner: a.node.ctx.clone(),
    };
    if n == 0 {
        return Ok(Runs {
            heads: ctx.zeros::<bool>([0])?,
            starts: ctx.zeros::<Index>([0])?,
            counts: ctx.zeros::<Index>([0])?,
        });
    }
    let len = Index::try_from(n).map_err(|_| Error::TooLarge {
        op: op.into(),
        shape: vec![n],
        reason: format!(
            "positions and counts are u32 (lazycl::Index): at most {} elements",
            u32::MAX
        ),
    })?;
    let same = equal_nan(&a.slice(s![1..]), &a.slice(s![..n - 1]));
    let heads = (!&same).pad(&[(1, 0)], true);
    let starts = heads.nonzero()?.into_array()?.cast::<Index>();
    let ends = starts.slice(s![1..]).pad(&[(0, 1)], len);
    let counts = &ends - &starts;
    Ok(Runs {
        heads,
        starts,
        counts,
    })
}

/// `a` as a one-dimensional array of its elements in row-major order.
#[track_caller]
fn flat<T: Element>(a: &Array<T>) -> Array<T> {
    if a.ndim() == 1 {
        a.clone()
    } else {
        a.reshape([a.len()])
    }
}

impl<T: Numeric> Array<T> {
    /// The distinct elements of this array, flattened, sorted (numpy's `np.unique(a)`).
    /// `-0.0` equals `+0.0` (`-0.0` is kept if present) and all NaNs count as one, kept
    /// last. Waits on the host for the number of distinct elements, not for them.
    ///
    /// ```
    /// # use lazycl::prelude::*;
    /// # fn main() -> lazycl::Result<()> {
    /// let ctx = Context::new()?;
    /// let a = ctx.from_shape_slice([2, 3], &[3, 1, 3, 2, 1, 3])?;
    /// assert_eq!(a.unique()?.to_vec()?, [1, 2, 3]);
    /// let f = ctx.from_slice(&[f32::NAN, 0.5, f32::NAN, 0.5])?.unique()?.to_vec()?;
    /// assert_eq!(f[0], 0.5);
    /// assert!(f.len() == 2 && f[1].is_nan()); // one NaN for all
    /// # Ok(())
    /// # }
    /// ```
    #[track_caller]
    pub fn unique(&self) -> Result<Array<T>> {
        let sorted = flat(self).sort()?;
        let runs = runs(&sorted, "unique")?;
        Ok(sorted.take(0, &runs.starts))
    }

    /// The distinct elements and how often each occurs (numpy's `np.unique(a,
    /// return_counts=True)`): the counts add up to the number of elements.
    ///
    /// ```
    /// # use lazycl::prelude::*;
    /// # fn main() -> lazycl::Result<()> {
    /// let ctx = Context::new()?;
    /// let u = ctx.from_slice(&[5i64, -2, 5, 5, 7])?.unique_counts()?;
    /// assert_eq!(u.values.to_vec()?, [-2, 5, 7]);
    /// assert_eq!(u.counts.to_vec()?, [1, 3, 1]);
    /// # Ok(())
    /// # }
    /// ```
    #[track_caller]
    pub fn unique_counts(&self) -> Result<UniqueCounts<T>> {
        let sorted = flat(self).sort()?;
        let runs = runs(&sorted, "unique_counts")?;
        Ok(UniqueCounts {
            values: sorted.take(0, &runs.starts),
            counts: runs.counts,
        })
    }

    /// The distinct elements and, for each element of this array, the position of its
    /// value among them (numpy's `np.unique(a, return_inverse=True)`, the inverse in the
    /// input's shape as numpy 2 returns it).
    ///
    /// ```
    /// # use lazycl::prelude::*;
    /// # fn main() -> lazycl::Result<()> {
    /// let ctx = Context::new()?;
    /// let a = ctx.from_shape_slice([2, 2], &[0.5f64, -1.0, 0.5, 2.0])?;
    /// let u = a.unique_inverse()?;
    /// assert_eq!(u.values.to_vec()?, [-1.0, 0.5, 2.0]);
    /// assert_eq!(u.inverse.shape(), [2, 2]);
    /// assert_eq!(u.inverse.to_vec()?, [1, 0, 1, 2]);
    /// assert_eq!(u.values.take(0, &u.inverse).to_vec()?, a.to_vec()?); // the input again
    /// # Ok(())
    /// # }
    /// ```
    #[track_caller]
    pub fn unique_inverse(&self) -> Result<UniqueInverse<T>> {
        let all = self.unique_with("unique_inverse")?;
        Ok(UniqueInverse {
            values: all.values,
            inverse: all.inverse,
        })
    }

    /// The distinct elements, where each first occurs, the inverse and the counts
    /// ([`UniqueAll`]), from one sort.
    ///
    /// ```
    /// # use lazycl::prelude::*;
    /// # fn main() -> lazycl::Result<()> {
    /// let ctx = Context::new()?;
    /// let u = ctx.from_slice(&[4u32, 9, 4, 1, 9, 9])?.unique_all()?;
    /// assert_eq!(u.values.to_vec()?, [1, 4, 9]);
    /// assert_eq!(u.indices.to_vec()?, [3, 0, 1]);
    /// assert_eq!(u.inverse.to_vec()?, [1, 2, 1, 0, 2, 2]);
    /// assert_eq!(u.counts.to_vec()?, [1, 2, 3]);
    /// # Ok(())
    /// # }
    /// ```
    #[track_caller]
    pub fn unique_all(&self) -> Result<UniqueAll<T>> {
        self.unique_with("unique_all")
    }

    /// `unique_all`, its errors naming `op`. The sort is stable, so a run's first element
    /// is its value's first occurrence; the inverse is each sorted element's run number
    /// (a scan of the heads) scattered back to where the element was.
    #[track_caller]
    fn unique_with(&self, op: &str) -> Result<UniqueAll<T>> {
        let n = self.len();
        let SortedPositions { keys, positions } = flat(self).sort_with_positions(op)?;
        let runs = runs(&keys, op)?;
        let ctx = Context {
            inner: self.node.ctx.clone(),
        };
        let mut inverse = ctx.zeros::<Index>([n])?;
        if n > 0 {
            let run = &runs.heads.cast::<Index>().cumsum(0) - 1;
            // Computed before the scatter reads it.
            run.eval()?;
            scatter_add(&mut inverse, 0, &positions, &run)?;
        }
        Ok(UniqueAll {
            values: keys.take(0, &runs.starts),
            indices: positions.take(0, &runs.starts),
            inverse: inverse.reshape(self.shape()),
            counts: runs.counts,
        })
    }
}

/// Checks that `a` and `b` share a context, for set operation `op`.
#[track_caller]
fn same_context<T: Element>(op: &str, a: &Array<T>, b: &Array<T>) -> Result<()> {
    a.node.ctx.tag.check(
        &b.node.ctx.tag,
        || op.into(),
        || format!("the second set (shape {:?})", b.shape()),
    )
}

/// The sorted distinct elements found in `a` or `b` (numpy's `np.union1d`; both are
/// flattened). Equality as [`Array::unique`]'s.
///
/// ```
/// # use lazycl::prelude::*;
/// # fn main() -> lazycl::Result<()> {
/// let ctx = Context::new()?;
/// let a = ctx.from_slice(&[3, 1, 3])?;
/// let b = ctx.from_slice(&[2, 1, 5, 2])?;
/// assert_eq!(lazycl::union1d(&a, &b)?.to_vec()?, [1, 2, 3, 5]);
/// # Ok(())
/// # }
/// ```
#[track_caller]
pub fn union1d<T: Numeric>(a: &Array<T>, b: &Array<T>) -> Result<Array<T>> {
    same_context("union1d", a, b)?;
    concatenate(0, &[&flat(a), &flat(b)])?.unique()
}

/// The sorted distinct elements found in both `a` and `b` (numpy's `np.intersect1d`;
/// both are flattened). Elements are compared with `==`, as numpy does: a NaN is in no
/// intersection, and `-0.0` meets `+0.0` (kept as `-0.0`).
///
/// ```
/// # use lazycl::prelude::*;
/// # fn main() -> lazycl::Result<()> {
/// let ctx = Context::new()?;
/// let a = ctx.from_slice(&[3.0f32, 1.0, f32::NAN, 4.0])?;
/// let b = ctx.from_slice(&[4.0f32, f32::NAN, 3.0, 3.0])?;
/// assert_eq!(lazycl::intersect1d(&a, &b)?.to_vec()?, [3.0, 4.0]);
/// # Ok(())
/// # }
/// ```
#[track_caller]
pub fn intersect1d<T: Numeric>(a: &Array<T>, b: &Array<T>) -> Result<Array<T>> {
    same_context("intersect1d", a, b)?;
    // Each set holds a value at most once: an equal pair of neighbours is one from each.
    let both = concatenate(0, &[&a.unique()?, &b.unique()?])?.sort()?;
    let m = both.len();
    if m < 2 {
        return Ok(both.slice(s![..0]));
    }
    let first = both.slice(s![..m - 1]);
    let pairs = first.eq(both.slice(s![1..]));
    first.compress(&pairs)?.into_array()
}

/// The sorted distinct elements of `a` not found in `b` (numpy's `np.setdiff1d`; both
/// are flattened). Elements are compared with `==`, as numpy does: a NaN of `a` stays,
/// and `-0.0` and `+0.0` remove each other.
///
/// ```
/// # use lazycl::prelude::*;
/// # fn main() -> lazycl::Result<()> {
/// let ctx = Context::new()?;
/// let a = ctx.from_slice(&[5u64, 1, 7, 1, 3])?;
/// let b = ctx.from_slice(&[3u64, 9, 5])?;
/// assert_eq!(lazycl::setdiff1d(&a, &b)?.to_vec()?, [1, 7]);
/// # Ok(())
/// # }
/// ```
#[track_caller]
pub fn setdiff1d<T: Numeric>(a: &Array<T>, b: &Array<T>) -> Result<Array<T>> {
    same_context("setdiff1d", a, b)?;
    let ua = a.unique()?;
    let ub = b.unique()?;
    let ka = ua.len();
    if ka == 0 || ub.is_empty() {
        return Ok(ua);
    }
    // One stable sort of both sets, remembering which set each element came from. Each
    // set holds a value at most once, so an element equal to a neighbour (the zeros of
    // two signs may be on either side) is in the other set.
    let SortedPositions { keys, positions } =
        concatenate(0, &[&ua, &ub])?.sort_with_positions("setdiff1d")?;
    let m = keys.len();
    let from_a = positions.lt(Index::try_from(ka).unwrap_or(Index::MAX));
    let left = keys.slice(s![..m - 1]);
    let right = keys.slice(s![1..]);
    let pair = left.eq(&right);
    let equal_next = pair.pad(&[(0, 1)], false);
    let equal_prev = pair.pad(&[(1, 0)], false);
    let keep = &from_a & &!&(&equal_next | &equal_prev);
    keys.compress(&keep)?.into_array()
}
