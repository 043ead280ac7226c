//! Binding a launch's arguments: every parameter of the kernel's list (`codegen::abi`,
//! the only list) gets its argument from the launch's buffers and sizes.

use std::sync::Arc;

use cl3::types::cl_mem;

use crate::backend::buffer::DeviceBuffer;
use crate::backend::context::ContextInner;
use crate::backend::kernel::{CompiledKernel, KernelArg};
use crate::backend::queue::QueueInner;
use crate::backend::submit::Command;
use crate::codegen::abi::{self, Param};
use crate::dtype::ScalarBits;
use crate::error::{Error, Result};
use crate::plan::{KernelKind, KernelPlan, ReducePlan, Value};

use super::memory::{RowTotalBuffers, ScanBuffers};

/// One launch of a fused kernel: where it runs, the kernel and its plan, the argument
/// list it fills (a thread's, reused), and what it reads and writes. Every kind's
/// launcher takes one, with its kind's plan beside.
pub(crate) struct Launch<'a> {
    pub(crate) ctx: &'a Arc<ContextInner>,
    pub(crate) queue: &'a Arc<QueueInner>,
    pub(crate) kernel: &'a CompiledKernel,
    pub(crate) plan: &'a KernelPlan,
    pub(crate) args: &'a mut Vec<KernelArg>,
    pub(crate) io: Io<'a>,
}

impl Launch<'_> {
    /// Binds the kernel's arguments from `bindings` (with this launch's reads and
    /// writes, whatever `bindings.io` says).
    pub(crate) fn bind(&mut self, bindings: Bindings<'_>) -> Result<()> {
        Bindings {
            io: self.io,
            ..bindings
        }
        .bind(self.plan, self.args)
    }

    /// Enqueues the kernel over `global` work-items in groups of `local`, as `command`.
    pub(crate) fn enqueue(
        &mut self,
        command: Command<'_>,
        global: &[usize],
        local: Option<&[usize]>,
    ) -> Result<()> {
        self.kernel
            .launch(self.ctx, self.queue, command, global, local, self.args)?;
        Ok(())
    }
}

/// What a kernel of a flush reads and writes: its input slots' buffers, its outputs, and
/// its scalar slots' bytes (the flush's, never the plan's: a replayed plan binds new ones).
#[derive(Clone, Copy, Default)]
pub(crate) struct Io<'a> {
    pub(crate) inputs: &'a [&'a DeviceBuffer],
    pub(crate) outputs: &'a [Arc<DeviceBuffer>],
    pub(crate) scalars: &'a [ScalarBits],
    /// The kernel's parameter list ([`abi::params`] of its plan), made once per flush
    /// structure ([`Replay`](super::replay::Replay)); `None`: made at this launch.
    pub(crate) params: Option<&'a [Param]>,
}

impl Io<'_> {
    /// The outputs as the buffers a command writes.
    pub(crate) fn writes(&self) -> smallvec::SmallVec<[&DeviceBuffer; 4]> {
        self.outputs.iter().map(|b| &**b).collect()
    }
}

/// The buffers and sizes of one launch, from which its arguments are bound in the order
/// of the kernel's parameter list ([`abi::params`], the only such list).
#[derive(Default)]
pub(crate) struct Bindings<'a> {
    pub(crate) io: Io<'a>,
    pub(crate) row_out: Option<&'a DeviceBuffer>,
    /// A reduction's partials and their indices (its results with one segment).
    pub(crate) partials: Option<Partials<'a>>,
    /// The queue's counters of finished work-groups.
    pub(crate) counters: Option<cl_mem>,
    pub(crate) total: Option<&'a RowTotalBuffers>,
    /// The split reduction an elementwise kernel finishes.
    pub(crate) finished: Option<&'a LeftPartials>,
    /// A split GEMM's partial products.
    pub(crate) gemm_partials: Option<&'a DeviceBuffer>,
    /// The results of a GEMM kernel's row reduction.
    pub(crate) gemm_rows: Option<&'a DeviceBuffer>,
    /// A tiled scan's status, totals and prefixes.
    pub(crate) scan: Option<&'a ScanBuffers>,
}

impl Bindings<'_> {
    /// The argument for parameter `p` of the kernel of `plan`; `None` if this launch has
    /// none (a bug). (An `Option`, not a `Result`: a launch binds dozens of arguments, and
    /// an error is larger than the argument it would carry.)
    // Long: one arm per kernel parameter kind; splitting it would scatter the list that
    // the ABI (`codegen::abi`) mirrors.
    fn arg(&self, plan: &KernelPlan, p: Param) -> Option<KernelArg> {
        let mem = |b: Option<&DeviceBuffer>| b.map(|b| KernelArg::Mem(b.mem()));
        let r = plan.as_reduction();
        let reduce = |f: fn(&ReducePlan) -> usize| r.map(|r| KernelArg::ulong(f(r) as u64));
        let (scan, gemm) = match &plan.kind {
            KernelKind::Scan(s) => (Some(s), None),
            KernelKind::Gemm(g) => (None, Some(g)),
            _ => (None, None),
        };
        match p {
            Param::Input(slot) => mem(self.io.inputs.get(slot).copied()),
            Param::Scalar(slot) => self.io.scalars.get(slot).map(|&bits| KernelArg::Scalar(bits)),
            Param::Output(k) => mem(self.io.outputs.get(k).map(|b| &**b)),
            Param::Numel => Some(KernelArg::ulong(plan.numel as u64)),
            Param::Dim(k) => plan.dims.get(k).map(|&d| KernelArg::ulong(d as u64)),
            Param::RowResult => mem(self.row_out),
            Param::Partials => mem(self.partials.map(|p| p.values)),
            Param::PartialIndices => mem(self.partials.map(|p| p.indices)),
            Param::NOut => reduce(|r| r.n_out),
            Param::NRed => reduce(|r| r.n_red),
            Param::Segments => reduce(|r| r.segments),
            Param::OneSegment => r.map(|r| {
                KernelArg::Scalar(ScalarBits {
                    bits: u128::from(r.segments == 1),
                    size: 4,
                })
            }),
            Param::Results | Param::ResultIndices => mem(self.io.outputs.first().map(|b| &**b)),
            Param::FinishCounters | Param::TotalCounters => self.counters.map(KernelArg::Mem),
            Param::TotalParts => mem(self.total.map(|t| &*t.parts)),
            Param::TotalResult => mem(self.total.map(|t| &*t.result)),
            Param::FinishedPartials => mem(self.finished.map(|f| &*f.partials)),
            Param::FinishedSegments => self.finished.map(|f| KernelArg::ulong(f.segments as u64)),
            Param::FinishedLength => self.finished.map(|f| KernelArg::ulong(f.n_red as u64)),
            Param::LoadOffset(_)
            | Param::LoadStride(..)
            | Param::LoadLow(..)
            | Param::LoadHigh(..)
            | Param::InsideLow(..)
            | Param::InsideHigh(..)
            | Param::StoreOffset(_)
            | Param::StoreStride(..)
            | Param::IndexOffset(_)
            | Param::IndexStride(..) => view_arg(plan, p).map(|v| offset_arg(v, plan.narrow_offsets)),
            Param::GatherLen(slot) | Param::GatherStride(slot) => plan
                .values
                .iter()
                .find_map(|v| match v.value {
                    Value::Gather {
                        slot: s, len, stride, ..
                    } if s == slot => Some(match p {
                        Param::GatherLen(_) => len,
                        _ => stride,
                    }),
                    _ => None,
                })
                .map(|x| {
                    KernelArg::Scalar(ScalarBits {
                        bits: x as u64 as u128,
                        size: 8,
                    })
                }),
            Param::ScatterLen(k) | Param::ScatterStride(k) => {
                plan.outputs.get(k).and_then(|o| o.scatter).map(|s| {
                    let x = match p {
                        Param::ScatterLen(_) => s.len,
                        _ => s.stride,
                    };
                    KernelArg::Scalar(ScalarBits {
                        bits: x as u64 as u128,
                        size: 8,
                    })
                })
            }
            Param::ScanLen | Param::ScanInner | Param::ScanColumns | Param::ScanTiles => scan.map(|s| {
                KernelArg::ulong(match p {
                    Param::ScanLen => s.len,
                    Param::ScanInner => s.inner,
                    Param::ScanColumns => s.outer * s.inner,
                    _ => s.tiles_per_row(),
                } as u64)
            }),
            Param::ScanStatus => mem(self.scan.map(|s| &*s.status)),
            Param::ScanTotals => mem(self.scan.map(|s| &*s.totals)),
            Param::ScanPrefixes => mem(self.scan.map(|s| &*s.prefixes)),
            Param::GemmPartials => mem(self.gemm_partials),
            Param::GemmRowResults => mem(self.gemm_rows),
            Param::GemmBatch => gemm.map(|g| KernelArg::ulong(g.matrices() as u64)),
            Param::GemmSegments => gemm.map(|g| {
                KernelArg::Scalar(ScalarBits {
                    bits: u128::from(g.split as u32),
                    size: 4,
                })
            }),
            Param::GemmM | Param::GemmN | Param::GemmK => gemm.map(|g| {
                let size = match p {
                    Param::GemmM => g.m,
                    Param::GemmN => g.n,
                    _ => g.k,
                };
                KernelArg::Scalar(ScalarBits {
                    bits: u128::from(size as u32),
                    size: 4,
                })
            }),
        }
    }

    /// Sets `args` to the arguments of a launch of the kernel of `plan`.
    pub(crate) fn bind(&self, plan: &KernelPlan, args: &mut Vec<KernelArg>) -> Result<()> {
        let arg = |p: Param| {
            self.arg(plan, p)
                .ok_or_else(|| Error::Internal(format!("no argument for kernel parameter {p:?}")))
        };
        match self.io.params {
            Some(params) => abi::bind(params.iter().copied(), args, arg),
            None => abi::bind(abi::params(plan), args, arg),
        }
    }
}

/// The value of a view's argument (an offset, stride or bound) in `plan`.
fn view_arg(plan: &KernelPlan, p: Param) -> Option<i64> {
    let load = |slot: usize| plan.inputs.get(slot).and_then(|i| i.strided.as_ref());
    let store = |k: usize| plan.outputs.get(k).and_then(|o| o.store.as_ref());
    let random = |slot: usize| plan.index_reads.get(slot).and_then(|r| r.index.as_ref());
    let bound = |bounds: &[crate::plan::access::Bound], b: usize, high: bool| {
        bounds.get(b).map(|x| if high { x.hi } else { x.lo })
    };
    match p {
        Param::LoadOffset(slot) => load(slot).map(|a| a.base),
        Param::LoadStride(slot, k) => load(slot).and_then(|a| a.stride.get(k).copied()),
        Param::LoadLow(slot, b) => load(slot).and_then(|a| bound(&a.bounds, b, false)),
        Param::LoadHigh(slot, b) => load(slot).and_then(|a| bound(&a.bounds, b, true)),
        Param::InsideLow(slot, b) => plan.insides.get(slot).and_then(|i| bound(&i.bounds, b, false)),
        Param::InsideHigh(slot, b) => plan.insides.get(slot).and_then(|i| bound(&i.bounds, b, true)),
        Param::StoreOffset(k) => store(k).map(|a| a.base),
        Param::StoreStride(k, d) => store(k).and_then(|a| a.stride.get(d).copied()),
        Param::IndexOffset(slot) => random(slot).map(|a| a.base),
        Param::IndexStride(slot, k) => random(slot).and_then(|a| a.stride.get(k).copied()),
        _ => None,
    }
}

/// A view's offset argument: an `int` where the plan's offsets are narrow, else a `long`.
fn offset_arg(v: i64, narrow: bool) -> KernelArg {
    match narrow {
        true => KernelArg::Scalar(ScalarBits {
            bits: u128::from(v as i32 as u32),
            size: 4,
        }),
        false => KernelArg::Scalar(ScalarBits {
            bits: v as u64 as u128,
            size: 8,
        }),
    }
}

/// A reduction kernel's partials and their indices (one buffer for both where the
/// reduction is not an arg one; its results with one segment).
#[derive(Clone, Copy)]
pub(crate) struct Partials<'a> {
    pub(crate) values: &'a DeviceBuffer,
    pub(crate) indices: &'a DeviceBuffer,
}

/// The partials a split reduction left for the elementwise kernel that reads its result
/// to finish ([`FinishIn`](crate::plan::FinishIn)), kept from its launch to that one.
pub(crate) struct LeftPartials {
    /// Graph index of the reduction.
    pub(crate) node: usize,
    pub(crate) partials: Arc<DeviceBuffer>,
    /// Its segments per output, and the elements reduced into each output.
    pub(crate) segments: usize,
    pub(crate) n_red: usize,
}
