//! `--footprint SIDE`: one operation repeated with the host's caches emptied before each,
//! for a cache simulator to count what the operation touches (`scripts/footprint.sh` runs
//! it under callgrind and prints instructions and cold cache lines per operation).
//!
//! Why: the first operation after a long kernel runs with the host's caches cold
//! (RESULTS.md#rule-first-op-footprint), so its cost follows the code and
//! data it touches. Each repetition here empties the caches (64 MiB written), launches a
//! short kernel (as the long kernel's launch does, it warms the launch path and the
//! driver's), then runs the operation alone in its own function, which the simulator
//! counts (`counted`): `op_lazy` (`2.0 * &x` + `eval()`: handed to the dispatch thread,
//! or flushed by the caller on a context that flushes inline), `op_captured` (the same
//! captured, `run`), or `op_raw` (three arguments set and one enqueue of a hand-written
//! kernel). Only the calling thread's work is counted: a handed-over flush runs on the
//! dispatch thread.

use std::hint::black_box;

use clap::ValueEnum;
use lazycl::{Array, Context, Dims, Dispatch, Kernel, KernelArg, Step};
use opencl3::kernel::Kernel as RawKernel;
use opencl3::memory::ClMem;
use opencl3::types::cl_mem;

use super::raw::{self, Raw, R};
use super::{lz, ADD_ONE};

/// Which operation `--footprint` repeats.
#[derive(Clone, Copy, ValueEnum)]
pub enum Side {
    /// `2.0 * &x` + `eval()`, handed to the dispatch thread (`Dispatch::Background`)
    Background,
    /// `2.0 * &x` + `eval()` after a pause (each repetition's eviction takes more than
    /// a millisecond) on a context that hands those over (`Dispatch::AfterPause`, the
    /// default on GPUs)
    AfterPause,
    /// `2.0 * &x` + `eval()` on a context that flushes on the caller (`Dispatch::Inline`)
    Inline,
    /// the same operation captured (`Context::capture`), run
    Captured,
    /// the raw baseline: arguments set, one enqueue
    Raw,
}

/// Elements of the operation's input.
const N: usize = 1 << 12;
/// Repetitions of the operation.
const REPS: usize = 12;
/// Bytes written between repetitions: more than any host's last-level cache here.
const EVICT_BYTES: usize = 64 << 20;

/// A raw kernel launch and its arguments.
struct RawScale<'a> {
    raw: &'a Raw,
    kernel: RawKernel,
    input: cl_mem,
    output: cl_mem,
}

pub fn run(side: Side) -> R<()> {
    let dispatch = match side {
        Side::Inline => Dispatch::Inline,
        Side::AfterPause => Dispatch::AfterPause,
        _ => Dispatch::Background,
    };
    let ctx = lz(Context::builder().dispatch(dispatch).build())?;
    let raw = Raw::open(ctx.device())?;
    let host: Vec<f32> = (0..N).map(|i| i as f32).collect();
    let x = lz(ctx.from_slice(&host))?;
    let short = lz(Kernel::bind(&ctx, &ADD_ONE))?;
    let small = lz(ctx.full(256, 1.0f32))?;
    let small_arg = lz(small.kernel_arg())?;
    let scale = ctx.capture(|x: Array<f32>| Ok(2.0 * &x));
    let rin = raw.buffer_f32(&host)?;
    let rout = raw.empty::<f32>(N)?;
    let rscale = RawScale {
        raw: &raw,
        kernel: raw.kernel(raw::SCALE2, "scale2")?,
        input: rin.get(),
        output: rout.get(),
    };
    let radd = raw.kernel(raw::ADD_ONE, "add_one")?;
    let rsmall = raw.buffer_f32(&[1.0; 256])?;
    raw.set_mem(&radd, 0, rsmall.get())?;
    raw.set(&radd, 1, &256u64)?;
    // Every program built and every path run once before the counted repetitions.
    op_lazy(&x)?;
    op_captured(&scale, &x)?;
    op_raw(&rscale)?;
    lz(ctx.synchronize())?;
    raw.finish()?;
    let mut evict = vec![0u8; EVICT_BYTES];
    for rep in 0..REPS {
        for i in (0..evict.len()).step_by(64) {
            evict[i] = evict[i].wrapping_add(rep as u8);
        }
        black_box(&evict);
        match side {
            Side::Raw => raw.enqueue_no_event(&radd, 256, None)?,
            Side::Background | Side::AfterPause | Side::Inline | Side::Captured => {
                let args = [
                    small_arg.mem(),
                    KernelArg::Scalar(lazycl::Element::to_arg_bits(256u64)),
                ];
                lz(short.launch(Dims::from(256), None, &args))?;
            }
        }
        counted(side, &x, &scale, &rscale)?;
        lz(ctx.synchronize())?;
        raw.finish()?;
    }
    let handed = ctx.stats().evals_dispatched;
    if matches!(side, Side::AfterPause) && handed < REPS as u64 {
        return Err(format!(
            "after-pause: {handed} of the {REPS} operations after a pause were handed over"
        ));
    }
    // The side's operation computed what it should (the raw side: its last enqueue's output).
    let out = match side {
        Side::Background | Side::AfterPause | Side::Inline => lz((2.0 * &x).to_vec())?,
        Side::Captured => lz(scale.run(&x).and_then(|y| y.to_vec()))?,
        Side::Raw => {
            let mut out = vec![0.0f32; N];
            raw.read(&rout, &mut out)?;
            out
        }
    };
    if out.iter().zip(&host).any(|(o, h)| *o != 2.0 * h) {
        return Err("the footprint's operation gave a wrong result".into());
    }
    println!("footprint: {REPS} repetitions of the operation, each after {EVICT_BYTES} bytes written");
    Ok(())
}

/// The operation the simulator counts (its first runs, before the repetitions, are not).
#[inline(never)]
fn counted(
    side: Side,
    x: &Array<f32>,
    scale: &Step<'_, Array<f32>, Array<f32>>,
    rscale: &RawScale<'_>,
) -> R<()> {
    match side {
        Side::Background | Side::AfterPause | Side::Inline => op_lazy(x),
        Side::Captured => op_captured(scale, x),
        Side::Raw => op_raw(rscale),
    }
}

#[inline(never)]
fn op_lazy(x: &Array<f32>) -> R<()> {
    lz((2.0 * x).eval().map(drop))
}

#[inline(never)]
fn op_captured(scale: &Step<'_, Array<f32>, Array<f32>>, x: &Array<f32>) -> R<()> {
    lz(scale.run(x).map(drop))
}

#[inline(never)]
fn op_raw(s: &RawScale<'_>) -> R<()> {
    s.raw.set_mem(&s.kernel, 0, s.input)?;
    s.raw.set_mem(&s.kernel, 1, s.output)?;
    s.raw.set(&s.kernel, 2, &(N as u32))?;
    s.raw.enqueue_no_event(&s.kernel, N, None)
}
