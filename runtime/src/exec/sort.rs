//! Launching a sort ([`SortPlan`]): one kernel for rows that fit a tile, else the digit
//! histogram and a pass per byte of the key, between two scratch buffers, the last pass
//! writing the results. Nothing waits: every command is ordered after what it reads.

use std::sync::Arc;

use crate::backend::buffer::DeviceBuffer;
use crate::backend::context::ContextInner;
use crate::backend::kernel::{CompiledKernel, KernelArg};
use crate::backend::queue::QueueInner;
use crate::backend::submit::Command;
use crate::codegen::abi;
use crate::codegen::abi::sort::{sort_kernel_name, sort_params, SortParam};
use crate::codegen::sort::sort_source;
use crate::dtype::ScalarBits;
use crate::error::Result;
use crate::plan::key;
use crate::plan::sort::{flag, Payload, SortKernel, SortLayout, SortPlan, RADIX_DIGITS};
use crate::stats::Counters;

use super::build::cached_kernel;
use super::zero;

/// The buffers a sort wrote: the sorted keys (if the plan stores them) and the payload
/// moved with them (if it has one).
pub(crate) struct Sorted {
    pub(crate) keys: Option<Arc<DeviceBuffer>>,
    pub(crate) values: Option<Arc<DeviceBuffer>>,
}

/// The buffers one launch reads and writes, by parameter.
#[derive(Clone, Copy)]
struct PassIo<'a> {
    keys_in: &'a DeviceBuffer,
    keys_out: &'a DeviceBuffer,
    values_in: Option<&'a DeviceBuffer>,
    values_out: Option<&'a DeviceBuffer>,
    hist: Option<&'a DeviceBuffer>,
    status: Option<&'a DeviceBuffer>,
    tiles: usize,
    pass: u32,
    flags: u32,
}

/// Sorts `plan.rows` rows of `keys` (and moves `values` with them, for a payload of
/// values) on `queue`.
pub(crate) fn sort_rows(
    ctx: &Arc<ContextInner>,
    queue: &Arc<QueueInner>,
    plan: &SortPlan,
    keys: &Arc<DeviceBuffer>,
    values: Option<&Arc<DeviceBuffer>>,
) -> Result<Sorted> {
    let n = plan.rows * plan.len;
    let key_bytes = n * plan.dtype.size();
    let value_bytes = n * plan.payload.bytes() as usize;
    let new =
        |bytes: usize| DeviceBuffer::uninit(&ctx.cl, bytes.max(1), queue, "a sort's results and scratch");
    match plan.layout {
        SortLayout::Local { group, .. } => {
            let keys_out = new(key_bytes)?;
            let values_out = if plan.payload == Payload::None {
                None
            } else {
                Some(new(value_bytes)?)
            };
            let io = PassIo {
                keys_in: keys,
                keys_out: &keys_out,
                // (An index payload binds its output as the unread input.)
                values_in: values.map(|v| &**v).or(values_out.as_deref()),
                values_out: values_out.as_deref(),
                hist: None,
                status: None,
                tiles: 1,
                pass: 0,
                flags: plan.flags(true, true),
            };
            let kernel = sort_kernel(ctx, SortKernel::Local, plan)?;
            launch(
                ctx,
                queue,
                &kernel,
                SortKernel::Local,
                plan,
                io,
                plan.rows * group as usize,
            )?;
            Ok(Sorted {
                keys: plan.keys_out.then_some(keys_out),
                values: values_out,
            })
        }
        SortLayout::Radix { .. } => radix(ctx, queue, plan, keys, values, key_bytes, value_bytes),
    }
}

/// A sort of rows of several tiles: the digit histograms of every pass, then a pass per
/// digit between two buffers each for the keys and the payload.
fn radix(
    ctx: &Arc<ContextInner>,
    queue: &Arc<QueueInner>,
    plan: &SortPlan,
    keys: &Arc<DeviceBuffer>,
    values: Option<&Arc<DeviceBuffer>>,
    key_bytes: usize,
    value_bytes: usize,
) -> Result<Sorted> {
    let new =
        |bytes: usize| DeviceBuffer::uninit(&ctx.cl, bytes.max(1), queue, "a sort's results and scratch");
    let passes = plan.passes();
    let digits = RADIX_DIGITS as usize;
    let hist = new(plan.rows * passes as usize * digits * 4)?;
    histograms(ctx, queue, plan, keys, &hist)?;
    let tiles = plan.tiles_per_row();
    let status_bytes = (1 + plan.rows * tiles * digits) * 4;
    let b = RadixBuffers {
        hist,
        status: new(status_bytes)?,
        keys: [new(key_bytes)?, new(key_bytes)?],
        values: match plan.payload {
            Payload::None => None,
            _ => Some([new(value_bytes)?, new(value_bytes)?]),
        },
    };
    let pass_kernel = sort_kernel(ctx, SortKernel::Pass, plan)?;
    for pass in 0..passes {
        zero(ctx, queue, &b.status, status_bytes)?;
        let io = b.pass_io(plan, pass, keys, values.map(|v| &**v));
        launch(
            ctx,
            queue,
            &pass_kernel,
            SortKernel::Pass,
            plan,
            io,
            plan.rows * tiles * digits,
        )?;
    }
    let last = (passes as usize - 1) % 2;
    let [k0, k1] = b.keys;
    let keys = if last == 0 { k0 } else { k1 };
    Ok(Sorted {
        keys: plan.keys_out.then_some(keys),
        values: b.values.map(|[v0, v1]| if last == 0 { v0 } else { v1 }),
    })
}

/// Counts the digits of every pass of each row of `keys` into `hist` (zeroed first).
fn histograms(
    ctx: &Arc<ContextInner>,
    queue: &Arc<QueueInner>,
    plan: &SortPlan,
    keys: &DeviceBuffer,
    hist: &DeviceBuffer,
) -> Result<()> {
    let digits = RADIX_DIGITS as usize;
    zero(ctx, queue, hist, plan.rows * plan.passes() as usize * digits * 4)?;
    let hist_kernel = sort_kernel(ctx, SortKernel::Hist, plan)?;
    let hist_tiles = plan.hist_tiles_per_row();
    let io = PassIo {
        keys_in: keys,
        keys_out: keys,
        values_in: None,
        values_out: None,
        hist: Some(hist),
        status: None,
        tiles: hist_tiles,
        pass: 0,
        flags: plan.flags(true, false),
    };
    launch(
        ctx,
        queue,
        &hist_kernel,
        SortKernel::Hist,
        plan,
        io,
        plan.rows * hist_tiles * digits,
    )
}

/// The scratch of a radix sort: the digit histograms, the tiles' status, and two
/// buffers each for the keys and the payload (a pass reads one and writes the other).
struct RadixBuffers {
    hist: Arc<DeviceBuffer>,
    status: Arc<DeviceBuffer>,
    keys: [Arc<DeviceBuffer>; 2],
    values: Option<[Arc<DeviceBuffer>; 2]>,
}

impl RadixBuffers {
    /// What pass `pass` reads and writes: the first reads the sort's `keys` and `values`.
    fn pass_io<'a>(
        &'a self,
        plan: &SortPlan,
        pass: u32,
        keys: &'a DeviceBuffer,
        values: Option<&'a DeviceBuffer>,
    ) -> PassIo<'a> {
        let (from, to) = ((pass as usize + 1) % 2, pass as usize % 2);
        let first = pass == 0;
        let io = PassIo {
            keys_in: if first { keys } else { &self.keys[from] },
            keys_out: &self.keys[to],
            values_in: match (&self.values, first) {
                (_, true) => values,
                (Some(v), false) => Some(&*v[from]),
                (None, false) => None,
            },
            values_out: self.values.as_ref().map(|v| &*v[to]),
            hist: Some(&self.hist),
            status: Some(&self.status),
            tiles: plan.tiles_per_row(),
            pass,
            flags: plan.flags(first, pass + 1 == plan.passes()),
        };
        // An index payload has nothing to read on the first pass: any buffer binds.
        match (io.values_in, io.values_out) {
            (None, Some(out)) => PassIo {
                values_in: Some(out),
                ..io
            },
            _ => io,
        }
    }
}

fn sort_kernel(ctx: &ContextInner, kernel: SortKernel, plan: &SortPlan) -> Result<Arc<CompiledKernel>> {
    cached_kernel(ctx, &key::sort(kernel, plan), sort_kernel_name(kernel), || {
        Ok(sort_source(kernel, plan))
    })
}

/// Launches `kernel` over `work` work-items in groups of the plan's size.
fn launch(
    ctx: &Arc<ContextInner>,
    queue: &Arc<QueueInner>,
    compiled: &CompiledKernel,
    kernel: SortKernel,
    plan: &SortPlan,
    io: PassIo<'_>,
    work: usize,
) -> Result<()> {
    let group = match plan.layout {
        SortLayout::Local { group, .. } => group as usize,
        SortLayout::Radix { .. } => RADIX_DIGITS as usize,
    };
    let uint = |v: u32| {
        KernelArg::Scalar(ScalarBits {
            bits: v.into(),
            size: 4,
        })
    };
    let mut args = Vec::new();
    let missing =
        || crate::error::Error::Internal(format!("a sort's {kernel:?} kernel launched without a buffer"));
    abi::bind(sort_params(kernel, plan.payload), &mut args, |p| {
        Ok(match p {
            SortParam::KeysIn => KernelArg::Mem(io.keys_in.mem()),
            SortParam::KeysOut => KernelArg::Mem(io.keys_out.mem()),
            SortParam::ValuesIn => KernelArg::Mem(io.values_in.ok_or_else(missing)?.mem()),
            SortParam::ValuesOut => KernelArg::Mem(io.values_out.ok_or_else(missing)?.mem()),
            SortParam::Hist => KernelArg::Mem(io.hist.ok_or_else(missing)?.mem()),
            SortParam::Status => KernelArg::Mem(io.status.ok_or_else(missing)?.mem()),
            SortParam::Len => KernelArg::ulong(plan.len as u64),
            SortParam::Tiles => KernelArg::ulong(io.tiles as u64),
            SortParam::Pass => uint(io.pass),
            SortParam::Flags => uint(io.flags),
        })
    })?;
    let mut reads: smallvec::SmallVec<[&DeviceBuffer; 4]> = smallvec::smallvec![io.keys_in];
    let mut writes: smallvec::SmallVec<[&DeviceBuffer; 4]> = smallvec::SmallVec::new();
    // (A first pass binds an index payload's output as its unread input.)
    let index_made = io.flags & flag::FIRST != 0 && plan.payload == Payload::Index;
    if !index_made {
        reads.extend(io.values_in);
    }
    writes.extend(io.values_out);
    if kernel == SortKernel::Hist {
        writes.extend(io.hist);
    } else {
        writes.push(io.keys_out);
        reads.extend(io.hist);
        writes.extend(io.status);
    }
    compiled.launch(
        ctx,
        queue,
        Command::new(&reads, &writes),
        &[work],
        Some(&[group]),
        &args,
    )?;
    Counters::add(&ctx.counters.sort_kernels_launched, 1);
    Ok(())
}
