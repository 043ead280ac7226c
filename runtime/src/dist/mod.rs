//! lazycl over MPI ranks (feature `mpi`): each rank runs its own lazy [`Context`] (a
//! device chosen by its rank on the node), and a [`DistArray`] is an array split by rows
//! across the ranks, each rank's rows an ordinary lazy [`Array`](crate::Array). Work on
//! rows stays local; a reduction over the rows (`sum`, `mean`, `amax`, `sum_axis0`,
//! `t_matmul`) reduces each rank's rows on its device and combines the small partial
//! results with `MPI_Allreduce` on host buffers; `halo` exchanges neighbouring rows with
//! point-to-point messages; `to_ndarray` gathers on rank 0. Device memory never goes to
//! MPI directly (GPU-aware MPI is not assumed).
//!
//! ```no_run
//! # fn main() -> lazycl::Result<()> {
//! use lazycl::dist::World;
//! let world = World::init()?; // under `mpirun -np 2 ...`
//! let rows = 1000 / world.size() + usize::from(world.rank() < 1000 % world.size());
//! let x = world.ctx().full([rows, 4], 1.0f32)?;
//! let x = world.rows(x)?; // rows of all ranks, in rank order
//! assert_eq!(x.sum()?, 4000.0); // every rank gets the total
//! # Ok(())
//! # }
//! ```

mod array;

use mpi::collective::{CommunicatorCollectives, SystemOperation};
use mpi::topology::{Communicator, SimpleCommunicator};

pub use array::{DistArray, DistElement, Halo};

use crate::backend::context::Context;
use crate::backend::device::{devices, DeviceInfo, DeviceSelector};
use crate::error::{Error, Result};

/// This process's place among the MPI ranks, and its own lazy [`Context`].
///
/// Made once per process ([`World::init`]); MPI is finalized when it is dropped.
pub struct World {
    // Dropped last: MPI is finalized after the communicators and the context are gone.
    ctx: Context,
    comm: SimpleCommunicator,
    local_rank: usize,
    local_size: usize,
    _universe: mpi::environment::Universe,
}

impl World {
    /// Initializes MPI and opens this rank's device: `LAZYCL_DEVICE`'s choice (every GPU
    /// when it is unset, else the default device), the `k`-th of them for the rank with
    /// `k`-th place on its node (wrapping). Collective: a rank that cannot open its
    /// device makes every rank return an error naming it, never a hang.
    pub fn init() -> Result<World> {
        Self::init_with(|local_rank, _| {
            let chosen = rank_device(local_rank)?;
            Context::builder()
                .device(DeviceSelector::Index {
                    platform: chosen.platform_index,
                    device: chosen.device_index,
                })
                .build()
        })
    }

    /// Like [`init`](World::init), with the context opened by `open(local_rank,
    /// local_size)` (its place and the number of ranks on its node).
    pub fn init_with(open: impl FnOnce(usize, usize) -> Result<Context>) -> Result<World> {
        let universe = mpi::initialize().ok_or_else(|| Error::Distributed {
            op: "World::init".into(),
            reason: "MPI was already initialized in this process (one World per process)".into(),
        })?;
        let comm = universe.world();
        let node = comm.split_shared(comm.rank());
        let (local_rank, local_size) = (node.rank() as usize, node.size() as usize);
        let opened = open(local_rank, local_size);
        // Every rank learns which ranks failed before any of them returns.
        let ok = i32::from(opened.is_ok());
        let mut all = vec![0i32; comm.size() as usize];
        comm.all_gather_into(&ok, &mut all[..]);
        let failed: Vec<usize> = (0..all.len()).filter(|&r| all[r] == 0).collect();
        match opened {
            Ok(ctx) if failed.is_empty() => Ok(World {
                ctx,
                comm,
                local_rank,
                local_size,
                _universe: universe,
            }),
            Ok(_) => Err(Error::Distributed {
                op: "World::init".into(),
                reason: format!("rank(s) {failed:?} of {} could not open a device", all.len()),
            }),
            Err(e) => Err(Error::Distributed {
                op: "World::init".into(),
                reason: format!(
                    "rank(s) {failed:?} of {} could not open a device; rank {}: {e}",
                    all.len(),
                    comm.rank()
                ),
            }),
        }
    }

    /// This process's rank, from 0.
    pub fn rank(&self) -> usize {
        self.comm.rank() as usize
    }

    /// How many ranks there are.
    pub fn size(&self) -> usize {
        self.comm.size() as usize
    }

    /// This rank's place among the ranks on its node, and how many those are.
    pub fn local_rank(&self) -> (usize, usize) {
        (self.local_rank, self.local_size)
    }

    /// This rank's context.
    pub fn ctx(&self) -> &Context {
        &self.ctx
    }

    /// Waits until every rank has called it.
    pub fn barrier(&self) {
        self.comm.barrier();
    }

    /// The element-wise sum over the ranks of `local` (the same length on every rank),
    /// on every rank: `MPI_Allreduce`.
    pub fn allreduce_sum<T: DistElement>(&self, local: &[T]) -> Vec<T> {
        self.allreduce(local, SystemOperation::sum())
    }

    pub(crate) fn allreduce<T: DistElement>(&self, local: &[T], op: SystemOperation) -> Vec<T> {
        let mut out = local.to_vec();
        self.comm.all_reduce_into(local, &mut out[..], op);
        out
    }

    /// `local` if every rank's is `Ok`, else an error on every rank (collective): a rank
    /// whose own step failed must not leave the others waiting in the next collective.
    /// A failed rank returns its own error; the others one naming the failed ranks.
    pub(crate) fn agree<R>(&self, op: &str, local: Result<R>) -> Result<R> {
        let failed: Vec<usize> = self
            .all_gather_len(usize::from(local.is_err()))
            .iter()
            .enumerate()
            .filter(|(_, f)| **f == 1)
            .map(|(r, _)| r)
            .collect();
        match local {
            Ok(value) if failed.is_empty() => Ok(value),
            Ok(_) => Err(Error::Distributed {
                op: op.into(),
                reason: format!("rank(s) {failed:?} of {} failed", self.size()),
            }),
            Err(e) => Err(e),
        }
    }

    /// The lengths every rank passed, in rank order (collective).
    pub(crate) fn all_gather_len(&self, len: usize) -> Vec<usize> {
        let mut all = vec![0u64; self.size()];
        self.comm.all_gather_into(&(len as u64), &mut all[..]);
        all.into_iter().map(|n| n as usize).collect()
    }

    pub(crate) fn comm(&self) -> &SimpleCommunicator {
        &self.comm
    }
}

/// The device of the rank with place `local_rank` on its node.
fn rank_device(local_rank: usize) -> Result<DeviceInfo> {
    let list = devices()?;
    let (selector, request) = match crate::env::text("LAZYCL_DEVICE")? {
        Some(text) => (DeviceSelector::parse(&text)?, format!("LAZYCL_DEVICE={text}")),
        None if list
            .iter()
            .any(|d| d.device_type == crate::backend::device::DeviceType::Gpu) =>
        {
            (DeviceSelector::AllGpus, "every GPU".to_string())
        }
        None => (DeviceSelector::Default, "the default device".to_string()),
    };
    let chosen = selector.choose_all(&list, &request)?;
    Ok(chosen[local_rank % chosen.len()].clone())
}
