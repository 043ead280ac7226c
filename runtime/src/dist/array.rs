//! [`DistArray`]: an array split by rows (axis 0) across MPI ranks, each rank's rows an
//! ordinary lazy array of its own context.

use mpi::collective::{CommunicatorCollectives, Root, SystemOperation};
use mpi::datatype::PartitionMut;
use mpi::point_to_point::{Destination, Source};
use mpi::topology::Communicator;
use ndarray::{ArrayD, IxDyn};

use crate::api::array::Array;
use crate::dist::World;
use crate::dtype::{Element, Numeric};
use crate::error::{Error, Result};
use crate::graph::shape::IntoShape;

/// An element type MPI can carry.
pub trait DistElement: Element + mpi::datatype::Equivalence {}
impl<T: Element + mpi::datatype::Equivalence> DistElement for T {}

/// An array split by rows across the ranks of a [`World`]: rank `r` holds rows
/// `offset()..offset() + local().shape()[0]`, ranks in order. Made collectively by
/// [`World::rows`]; every method that combines ranks is collective (every rank calls it,
/// in the same order).
pub struct DistArray<'w, T: DistElement> {
    world: &'w World,
    local: Array<T>,
    /// Rows per rank, in rank order.
    counts: Vec<usize>,
}

/// A rank's rows with its neighbours' next to them ([`DistArray::halo`]).
pub struct Halo<T: DistElement> {
    /// The previous rank's last `before` rows, this rank's rows, the next rank's first
    /// `after` rows.
    pub rows: Array<T>,
    /// How many rows come from the previous rank (0 on the first rank).
    pub before: usize,
    /// How many rows come from the next rank (0 on the last rank).
    pub after: usize,
}

/// A rank's rows that its neighbours' halos take ([`DistArray::halo`]).
struct Edges<T> {
    /// Its last rows, for the next rank.
    last: Vec<T>,
    /// Its first rows, for the previous rank.
    first: Vec<T>,
}

/// The rows a rank's halo takes from its neighbours, as elements ([`DistArray::halo`]).
struct Received<T> {
    /// The previous rank's last rows.
    from_prev: Vec<T>,
    /// The next rank's first rows.
    from_next: Vec<T>,
}

impl World {
    /// Joins each rank's `local` rows (an array of this rank's context; the other axes
    /// the same on every rank) into one array split across the ranks (collective).
    pub fn rows<T: DistElement>(&self, local: Array<T>) -> Result<DistArray<'_, T>> {
        let op = "World::rows";
        let checked = if local.ndim() == 0 {
            Err(self.error(op, "a 0-d array has no rows to split"))
        } else {
            Ok(())
        };
        self.agree(op, checked)?;
        let counts = self.all_gather_len(local.shape()[0]);
        // The rows' shape, compared across ranks: the rank first, then each axis.
        let ranks = self.all_gather_len(local.ndim());
        let mut same = ranks.iter().all(|&r| r == ranks[0]);
        for d in 1..local.ndim() {
            if same {
                let dims = self.all_gather_len(local.shape()[d]);
                same = dims.iter().all(|&n| n == dims[0]);
            }
        }
        if !same {
            return Err(self.error(
                "World::rows",
                &format!(
                    "the ranks' rows differ in shape (this rank's: {:?})",
                    &local.shape()[1..]
                ),
            ));
        }
        Ok(DistArray {
            world: self,
            local,
            counts,
        })
    }

    fn error(&self, op: &str, reason: &str) -> Error {
        Error::Distributed {
            op: op.into(),
            reason: format!("rank {} of {}: {reason}", self.rank(), self.size()),
        }
    }

    /// `host` (the same on every rank) uploaded to this rank's context.
    fn replicate<T: DistElement>(&self, shape: impl IntoShape, host: &[T]) -> Result<Array<T>> {
        self.ctx().from_shape_slice(shape, host)
    }
}

impl<'w, T: DistElement> DistArray<'w, T> {
    /// This rank's rows.
    pub fn local(&self) -> &Array<T> {
        &self.local
    }

    /// The index of this rank's first row in the whole array.
    pub fn offset(&self) -> usize {
        self.counts[..self.world.rank()].iter().sum()
    }

    /// The whole array's shape.
    pub fn shape(&self) -> Vec<usize> {
        let mut s = self.local.shape().to_vec();
        s[0] = self.counts.iter().sum();
        s
    }

    /// `f` of this rank's rows, as the same rows of a new array (`f` must keep the row
    /// count: an elementwise expression, a reduction along other axes, a row function).
    pub fn map<U: DistElement>(&self, f: impl FnOnce(&Array<T>) -> Array<U>) -> Result<DistArray<'w, U>> {
        let out = f(&self.local);
        if out.ndim() == 0 || out.shape()[0] != self.local.shape()[0] {
            return Err(self.world.error(
                "DistArray::map",
                &format!(
                    "the rows {:?} became {:?}: a map keeps the row count",
                    self.local.shape(),
                    out.shape()
                ),
            ));
        }
        Ok(DistArray {
            world: self.world,
            local: out,
            counts: self.counts.clone(),
        })
    }

    /// `f` of this rank's rows of `self` and of `other` (split alike).
    pub fn zip<U: DistElement, V: DistElement>(
        &self,
        other: &DistArray<'w, U>,
        f: impl FnOnce(&Array<T>, &Array<U>) -> Array<V>,
    ) -> Result<DistArray<'w, V>> {
        if self.counts != other.counts {
            return Err(self
                .world
                .error("DistArray::zip", "the two arrays are split differently"));
        }
        self.map(|a| f(a, &other.local))
    }

    /// The sum of every element, on every rank (collective), in [`Arithmetic::Sum`](crate::Arithmetic::Sum)'s type.
    pub fn sum(&self) -> Result<T::Sum>
    where
        T: Numeric,
        T::Sum: DistElement,
    {
        let local = self.world.agree("DistArray::sum", self.local.sum().item())?;
        Ok(self.world.allreduce(&[local], SystemOperation::sum())[0])
    }

    /// The mean of every element, on every rank (collective): the sum over the count.
    pub fn mean(&self) -> Result<T>
    where
        T: crate::dtype::Float,
    {
        let count = self.shape().iter().product::<usize>();
        Ok(T::__from_f64(self.sum()?.__to_f64() / count as f64))
    }

    /// The mean along the rows (axis 0), on every rank as an array of its context
    /// (collective).
    pub fn mean_axis0(&self) -> Result<Array<T>>
    where
        T: crate::dtype::Float,
    {
        let rows: usize = self.counts.iter().sum();
        Ok(self.sum_axis0()? / T::__from_f64(rows as f64))
    }

    /// The largest element (collective; an error for an empty array).
    pub fn amax(&self) -> Result<T>
    where
        T: Numeric,
    {
        self.extreme(
            "DistArray::amax",
            |a, b| if is_nan(a) || b > a { b } else { a },
            |a| a.amax(),
        )
    }

    /// The smallest element (collective; an error for an empty array).
    pub fn amin(&self) -> Result<T>
    where
        T: Numeric,
    {
        self.extreme(
            "DistArray::amin",
            |a, b| if is_nan(a) || b < a { b } else { a },
            |a| a.amin(),
        )
    }

    fn extreme(&self, op: &str, keep: fn(T, T) -> T, f: impl Fn(&Array<T>) -> Array<T>) -> Result<T>
    where
        T: Numeric,
    {
        if self.shape().iter().product::<usize>() == 0 {
            return Err(self.world.error(op, "the array is empty"));
        }
        // Every rank's value and whether it has one (a rank without rows has none).
        let mine = if self.local.is_empty() {
            self.world.agree(op, Ok(None))?
        } else {
            self.world.agree(op, f(&self.local).item().map(Some))?
        };
        let has = self.world.all_gather_len(usize::from(mine.is_some()));
        let mut values = vec![T::default(); self.world.size()];
        self.world
            .comm()
            .all_gather_into(&mine.unwrap_or_default(), &mut values[..]);
        let mut found = values.iter().zip(&has).filter(|(_, h)| **h == 1).map(|(v, _)| *v);
        let first = found
            .next()
            .ok_or_else(|| self.world.error(op, "no rank holds an element"))?;
        Ok(found.fold(first, keep))
    }

    /// The sum along the rows (axis 0), on every rank as an array of its context: each
    /// rank sums its rows on its device, and the sums are added with `MPI_Allreduce`
    /// (collective).
    pub fn sum_axis0(&self) -> Result<Array<T::Sum>>
    where
        T: Numeric,
        T::Sum: DistElement,
    {
        let partial = self
            .world
            .agree("DistArray::sum_axis0", self.local.sum_axis(0).to_vec())?;
        let total = self.world.allreduce_sum(&partial);
        self.world.replicate(self.local.shape()[1..].to_vec(), &total)
    }

    /// `selfᵀ · other` where both are split alike by rows (`Xᵀ r` of a regression: `[n,
    /// d]` and `[n]` or `[n, k]`): each rank multiplies its rows, and the small products
    /// are added with `MPI_Allreduce`, on every rank (collective).
    pub fn t_matmul(&self, other: &DistArray<'w, T>) -> Result<Array<T>>
    where
        T: Numeric,
    {
        if self.counts != other.counts {
            return Err(self
                .world
                .error("DistArray::t_matmul", "the two arrays are split differently"));
        }
        let partial = self.local.t().matmul(&other.local);
        let shape = partial.shape().to_vec();
        let partial = self.world.agree("DistArray::t_matmul", partial.to_vec())?;
        let total = self.world.allreduce_sum(&partial);
        self.world.replicate(shape, &total)
    }

    /// This rank's rows with the previous rank's last `before` rows and the next rank's
    /// first `after` rows (fewer at the ends of the array), exchanged by point-to-point
    /// messages through host memory (collective). Every rank must hold at least
    /// `max(before, after)` rows.
    pub fn halo(&self, before: usize, after: usize) -> Result<Halo<T>> {
        let size = self.world.size();
        if let Some(r) = (0..size).find(|&r| self.counts[r] < before.max(after)) {
            return Err(self.world.error(
                "DistArray::halo",
                &format!(
                    "rank {r} holds {} rows, fewer than the halo of {}",
                    self.counts[r],
                    before.max(after)
                ),
            ));
        }
        let edges = self.world.agree("DistArray::halo", self.edges(before, after))?;
        let Received { from_prev, from_next } = self.exchange(&edges, before, after);
        let rest = &self.local.shape()[1..];
        let row_len: usize = rest.iter().product();
        let shaped = |v: &[T]| -> Result<Array<T>> {
            let mut shape = vec![v.len() / row_len.max(1)];
            shape.extend_from_slice(rest);
            self.world.ctx().from_shape_slice(shape, v)
        };
        let (b, a) = (from_prev.len() / row_len.max(1), from_next.len() / row_len.max(1));
        let mut parts = Vec::new();
        if b > 0 {
            parts.push(shaped(&from_prev)?);
        }
        parts.push(self.local.clone());
        if a > 0 {
            parts.push(shaped(&from_next)?);
        }
        let refs: Vec<&Array<T>> = parts.iter().collect();
        let rows = if refs.len() == 1 {
            self.local.clone()
        } else {
            crate::api::regions::concatenate(0, &refs)?
        };
        Ok(Halo {
            rows,
            before: b,
            after: a,
        })
    }

    /// This rank's rows its neighbours' halos take: its last `before` rows for the next
    /// rank, its first `after` rows for the previous one (none where there is no such
    /// rank).
    fn edges(&self, before: usize, after: usize) -> Result<Edges<T>> {
        let (rank, size) = (self.world.rank(), self.world.size());
        let n = self.local.shape()[0];
        let rest = self.local.shape().len() - 1;
        let last = if before > 0 && rank + 1 < size {
            self.local.slice(rows(n - before, n, rest)).to_vec()?
        } else {
            Vec::new()
        };
        let first = if after > 0 && rank > 0 {
            self.local.slice(rows(0, after, rest)).to_vec()?
        } else {
            Vec::new()
        };
        Ok(Edges { last, first })
    }

    /// Sends `edges` to the neighbours and receives theirs: the previous rank's last
    /// `before` rows and the next rank's first `after` rows.
    fn exchange(&self, edges: &Edges<T>, before: usize, after: usize) -> Received<T> {
        let (rank, size) = (self.world.rank(), self.world.size());
        let comm = self.world.comm();
        let mut from_prev = Vec::new();
        let mut from_next = Vec::new();
        mpi::request::scope(|scope| {
            let mut sends = Vec::new();
            if !edges.last.is_empty() {
                sends.push(
                    comm.process_at_rank(rank as i32 + 1)
                        .immediate_send(scope, &edges.last[..]),
                );
            }
            if !edges.first.is_empty() {
                sends.push(
                    comm.process_at_rank(rank as i32 - 1)
                        .immediate_send(scope, &edges.first[..]),
                );
            }
            if before > 0 && rank > 0 {
                from_prev = comm.process_at_rank(rank as i32 - 1).receive_vec::<T>().0;
            }
            if after > 0 && rank + 1 < size {
                from_next = comm.process_at_rank(rank as i32 + 1).receive_vec::<T>().0;
            }
            for s in sends {
                s.wait();
            }
        });
        Received { from_prev, from_next }
    }

    /// The whole array on rank 0 (`None` on the others), gathered through host memory
    /// (collective).
    pub fn to_ndarray(&self) -> Result<Option<ArrayD<T>>> {
        let mine = self.world.agree("DistArray::to_ndarray", self.local.to_vec())?;
        let row_len: usize = self.local.shape()[1..].iter().product();
        let counts: Vec<i32> = self.counts.iter().map(|c| (c * row_len) as i32).collect();
        let displs: Vec<i32> = counts
            .iter()
            .scan(0, |acc, &c| {
                let d = *acc;
                *acc += c;
                Some(d)
            })
            .collect();
        let root = self.world.comm().process_at_rank(0);
        if self.world.rank() != 0 {
            root.gather_varcount_into(&mine[..]);
            return Ok(None);
        }
        let mut all = vec![T::default(); counts.iter().sum::<i32>() as usize];
        {
            let mut into = PartitionMut::new(&mut all[..], &counts[..], &displs[..]);
            root.gather_varcount_into_root(&mine[..], &mut into);
        }
        ArrayD::from_shape_vec(IxDyn(&self.shape()), all)
            .map(Some)
            .map_err(|e| Error::InvalidShape(e.to_string()))
    }
}

/// Whether `v` is NaN (compares with nothing, itself included); ignored by the extrema,
/// as the devices' `amax` and `amin` ignore it.
fn is_nan<T: PartialOrd>(v: T) -> bool {
    v.partial_cmp(&v).is_none()
}

/// `s![a..b, .., ..]` for an array with `rest` more axes.
fn rows(a: usize, b: usize, rest: usize) -> Vec<ndarray::SliceInfoElem> {
    let mut info = vec![ndarray::SliceInfoElem::Slice {
        start: a as isize,
        end: Some(b as isize),
        step: 1,
    }];
    info.extend((0..rest).map(|_| ndarray::SliceInfoElem::Slice {
        start: 0,
        end: None,
        step: 1,
    }));
    info
}
