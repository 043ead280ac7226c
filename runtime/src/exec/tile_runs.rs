//! Running a GEMM plan with a tile of its own, outside any flush, on zeroed buffers of the
//! plan's sizes: what a search times (`tune::search`) and what the trial of a tile read
//! from the disk cache's table runs (`tune::trial`).

use std::sync::Arc;

use crate::backend::buffer::DeviceBuffer;
use crate::backend::cl;
use crate::backend::context::ContextInner;
use crate::backend::kernel::{CompiledKernel, KernelArg};
use crate::backend::queue::QueueInner;
use crate::dtype::ScalarBits;
use crate::error::{Error, Result};
use crate::plan::access::Affine;
use crate::plan::{GemmPlan, KernelKind, KernelPlan};

use super::bind::{Io, Launch};
use super::build::kernel_for;
use super::memory::GemmBuffers;

/// A GEMM plan's kernel (built through the kernel cache), checked against its tile's
/// work-group, bound to zeroed buffers.
pub(super) struct TileRun<'a> {
    ctx: &'a Arc<ContextInner>,
    queue: &'a Arc<QueueInner>,
    plan: &'a KernelPlan,
    gemm: &'a GemmPlan,
    kernel: Arc<CompiledKernel>,
    buffers: &'a Buffers,
    scalars: &'a [ScalarBits],
    args: Vec<KernelArg>,
}

impl<'a> TileRun<'a> {
    /// Builds `plan`'s kernel (or finds it in the cache). A kernel that cannot take its
    /// tile's work-group (`CL_KERNEL_WORK_GROUP_SIZE`, which counts its registers) is an
    /// error, not a launch the driver would refuse or, on some drivers, not survive.
    pub(super) fn new(
        ctx: &'a Arc<ContextInner>,
        queue: &'a Arc<QueueInner>,
        plan: &'a KernelPlan,
        buffers: &'a Buffers,
        scalars: &'a [ScalarBits],
    ) -> Result<TileRun<'a>> {
        let KernelKind::Gemm(gemm) = &plan.kind else {
            return Err(Error::Internal("a tile run of a kernel that is no GEMM".into()));
        };
        let Some(tile) = gemm.tile else {
            return Err(Error::Internal("a tile run of a kernel with no tile".into()));
        };
        let kernel = kernel_for(ctx, plan)?;
        let most = kernel.max_group(&ctx.cl)?;
        if tile.group() > most {
            return Err(Error::InvalidLaunch {
                kernel: kernel.name.clone(),
                reason: format!(
                    "tile {tile} takes work-groups of {} work-items; the kernel allows {most}",
                    tile.group()
                ),
            });
        }
        Ok(TileRun {
            ctx,
            queue,
            plan,
            gemm,
            kernel,
            buffers,
            scalars,
            args: Vec::new(),
        })
    }

    /// Enqueues one launch (no wait).
    pub(super) fn launch(&mut self) -> Result<()> {
        let reads: Vec<&DeviceBuffer> = self.buffers.inputs.iter().map(|b| &**b).collect();
        let io = Io {
            inputs: &reads,
            outputs: &self.buffers.outputs,
            scalars: self.scalars,
            params: None,
        };
        let launch = Launch {
            ctx: self.ctx,
            queue: self.queue,
            kernel: &self.kernel,
            plan: self.plan,
            args: &mut self.args,
            io,
        };
        super::gemm::launch_gemm(launch, self.gemm, &self.buffers.gemm)
    }
}

/// Zeroed buffers as large as a GEMM plan's inputs and outputs read and write.
pub(super) struct Buffers {
    inputs: Vec<Arc<DeviceBuffer>>,
    outputs: Vec<Arc<DeviceBuffer>>,
    /// Its row results and partial products.
    gemm: GemmBuffers,
}

impl Buffers {
    pub(super) fn for_plan(
        ctx: &Arc<ContextInner>,
        queue: &Arc<QueueInner>,
        plan: &KernelPlan,
    ) -> Result<Buffers> {
        let KernelKind::Gemm(g) = &plan.kind else {
            return Ok(Buffers {
                inputs: Vec::new(),
                outputs: Vec::new(),
                gemm: GemmBuffers::default(),
            });
        };
        let spaces = g.spaces();
        let zeroed = |elements: usize, size: usize| -> Result<Arc<DeviceBuffer>> {
            let bytes = (elements.max(1) * size).next_multiple_of(8);
            let b = DeviceBuffer::uninit(&ctx.cl, bytes, queue, "a tile trial's test data")?;
            cl::fill_buffer(queue.raw(), b.mem(), &[0u8; 4], bytes, &[], false)?;
            Ok(b)
        };
        let inputs = (0..plan.inputs.len())
            .map(|slot| {
                let input = &plan.inputs[slot];
                // The phase of the first value that loads it.
                let phase = plan
                    .values
                    .iter()
                    .position(|v| v.value == crate::plan::Value::Load { slot })
                    .map_or(2, |v| g.phase_of(v));
                let elements = input
                    .strided
                    .as_ref()
                    .map_or(plan.numel, |a| extent(a, &spaces[phase]));
                zeroed(elements, input.dtype.size())
            })
            .collect::<Result<Vec<_>>>()?;
        let outputs = plan
            .outputs
            .iter()
            .map(|o| {
                let elements = o.store.as_ref().map_or(plan.numel, |a| extent(a, &spaces[2]));
                zeroed(elements, o.dtype.size())
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Buffers {
            inputs,
            outputs,
            gemm: super::memory::gemm(ctx, queue, plan, g, &[])?,
        })
    }
}

/// One past the largest element offset `a` reaches over `dims` (0 when it reaches
/// nothing: offsets are non-negative where they are read).
fn extent(a: &Affine, dims: &[usize]) -> usize {
    let most = a
        .stride
        .iter()
        .zip(dims)
        .fold(a.base, |acc, (&s, &d)| acc + (s * (d as i64 - 1).max(0)).max(0));
    usize::try_from(most + 1).unwrap_or(0)
}
