//! The host's own cost (`--host`, also part of the full report): time spent in lazycl's
//! calls on the host, never waiting for the device, against what raw opencl3 spends on
//! the host for the same launches in the same run (the first operation after a pause in
//! `first_op`; the cost per graph node, `--nodes`, in `nodes`).

use std::time::Instant;

use lazycl::{Array, Context, Dims, Dispatch, Kernel, LaunchOptions};
use opencl3::kernel::Kernel as RawKernel;
use opencl3::memory::{Buffer, ClMem};

use super::raw::{self, Raw, R};
use super::workloads::logreg;
use super::{chain8, lz, median, per_call, Report, ADD_ONE};

/// The contexts of `ctx`'s device that the host rows run `eval()`s on, one per dispatch
/// mode (`LAZYCL_DISPATCH` does not change them).
pub struct Modes {
    /// `Dispatch::Auto`, what `Context::new()` gives: after-pause on GPUs, inline on CPUs.
    pub default: Context,
    /// Every `eval()` handed to the dispatch thread.
    pub background: Context,
    /// Every `eval()` flushed on the caller.
    pub inline: Context,
}

impl Modes {
    /// How the default context's `eval()`s flush, for row names.
    pub fn default_name(&self) -> String {
        format!("default dispatch, {:?} here", self.default.dispatch())
    }
}

/// Every host row: a bound kernel's launch, a cached flush, a logistic-regression step,
/// the first lazy operation after a long kernel, and after a pause with a read; `eval()`s on the contexts of [`Modes`].
pub fn rows(rep: &mut Report, ctx: &Context, raw: &Raw, quick: bool, trials: usize) -> R<()> {
    let reps = if quick { 2000 } else { 20000 };
    let modes = Modes {
        default: dispatch_context(Dispatch::Auto)?,
        background: dispatch_context(Dispatch::Background)?,
        inline: dispatch_context(Dispatch::Inline)?,
    };
    if modes.default.device().name != ctx.device().name {
        return Err(format!(
            "the host rows' contexts opened {}, not {}",
            modes.default.device().name,
            ctx.device().name
        ));
    }
    launch(rep, &modes, raw, trials, reps)?;
    logreg_step(rep, &modes, raw, quick, trials, reps / 4)?;
    super::first_op::after_long_kernel(rep, &modes, raw)?;
    super::first_op::eval_then_read(rep, &modes, raw)
}

/// A context like `Context::new()`'s whose `eval()` flushes as `dispatch` says.
pub fn dispatch_context(dispatch: Dispatch) -> R<Context> {
    lz(Context::builder().dispatch(dispatch).build())
}

/// A bound kernel's launch against a raw launch, and a cached lazy flush of the 8-op
/// chain (on the default context) against one raw launch of the hand-written chain; and
/// a loop of the same `eval()`s handed to the dispatch thread.
fn launch(rep: &mut Report, modes: &Modes, raw: &Raw, trials: usize, reps: usize) -> R<()> {
    let ctx = &modes.default;
    let n = 1024usize;
    let mut x = lz(ctx.zeros::<f32>(n))?;
    let k = lz(Kernel::bind(ctx, &ADD_ONE))?;
    // The path `#[kernel]` launchers take: the written array is tracked.
    let xa = lz(x.kernel_arg_mut())?;
    let args = [xa.mem(), xa.len()];
    let opts = LaunchOptions::new(Dims::from(n));
    let sync = || lz(ctx.synchronize());
    let rk = raw.kernel(raw::ADD_ONE, "add_one")?;
    let rb = raw.buffer_f32(&vec![0.0; n])?;
    raw.set_mem(&rk, 0, rb.get())?;
    raw.set(&rk, 1, &(n as u64))?;
    let rsync = || raw.finish();
    // Interleaved trials (ours, raw, raw with event, ours, ...), so that drift of the
    // machine's speed during the run does not favour whichever is measured first.
    let (mut ours, mut no_event, mut with_event) = (vec![], vec![], vec![]);
    for _ in 0..trials {
        ours.push(per_call(
            1,
            reps,
            || lz(k.submit(&opts, &args, &[&xa], false).map(drop)),
            sync,
        )?);
        no_event.push(per_call(1, reps, || raw.enqueue_no_event(&rk, n, None), rsync)?);
        with_event.push(per_call(1, reps, || raw.enqueue_with_event(&rk, n), rsync)?);
    }
    let (ours, no_event, with_event) = (median(ours), median(no_event), median(with_event));
    rep.add(
        "host time per launch, bound kernel",
        ours * 1e6,
        no_event * 1e6,
        "µs",
        "raw, no event",
    );
    rep.add(
        "host time per launch, bound kernel (vs event)",
        ours * 1e6,
        with_event * 1e6,
        "µs",
        "raw, with event",
    );

    // A cached lazy flush of an 8-op chain at n = 16 vs one raw launch (a loop of them:
    // the default context flushes them on the caller).
    let small = lz(ctx.from_slice(&[0.5f32; 16]))?;
    let eval_default = || lz(chain8(&small).eval().map(drop));
    eval_default()?;
    let flush = per_call(trials, reps / 4, eval_default, sync)?;
    // The same `eval()`s all handed over: the loop runs at the pace of the slower of the
    // caller and the dispatch thread (at most `MAX_PENDING_JOBS` ahead).
    let background = &modes.background;
    let small_bg = lz(background.from_slice(&[0.5f32; 16]))?;
    let eval_bg = || lz(chain8(&small_bg).eval().map(drop));
    eval_bg()?;
    let handed = per_call(trials, reps / 4, eval_bg, || lz(background.synchronize()))?;
    let rc = raw.kernel(raw::CHAIN8, "chain8")?;
    let rin = raw.buffer_f32(&[0.5; 16])?;
    let rout = raw.buffer_f32(&[0.0; 16])?;
    raw.set_mem(&rc, 0, rin.get())?;
    raw.set_mem(&rc, 1, rout.get())?;
    raw.set(&rc, 2, &4u32)?;
    let one = per_call(trials, reps / 4, || raw.enqueue_no_event(&rc, 4, None), rsync)?;
    rep.add(
        format!(
            "host time of a cached lazy flush (8-op chain, n=16, {})",
            modes.default_name()
        ),
        flush * 1e6,
        one * 1e6,
        "µs",
        "one raw launch",
    );
    rep.add(
        "host time per eval() handed to the dispatch thread, in a loop (8-op chain, n=16, Background)",
        handed * 1e6,
        one * 1e6,
        "µs",
        "one raw launch",
    );
    // The same chain captured (`Context::capture`): a run binds and launches only.
    let step = ctx.capture(|x: Array<f32>| Ok(chain8(&x)));
    lz(step.run(&small).map(drop))?;
    let run = per_call(trials, reps / 4, || lz(step.run(&small).map(drop)), sync)?;
    let one = per_call(trials, reps / 4, || raw.enqueue_no_event(&rc, 4, None), rsync)?;
    rep.add(
        "host time of a captured step's run (8-op chain, n=16)",
        run * 1e6,
        one * 1e6,
        "µs",
        "one raw launch",
    );
    Ok(())
}

/// The hand-written chain launched raw with its three arguments set each time
/// (`clSetKernelArg` x 3 + `clEnqueueNDRangeKernel` without an event): what a raw
/// program pays per kernel when its arguments change between launches, as a lazy
/// flush's do.
struct RawLaunch3<'a> {
    raw: &'a Raw,
    kernel: RawKernel,
    input: Buffer<f32>,
    output: Buffer<f32>,
}

impl<'a> RawLaunch3<'a> {
    fn new(raw: &'a Raw) -> R<Self> {
        Ok(RawLaunch3 {
            raw,
            kernel: raw.kernel(raw::CHAIN8, "chain8")?,
            input: raw.buffer_f32(&[0.5; 16])?,
            output: raw.buffer_f32(&[0.0; 16])?,
        })
    }

    /// Host seconds per launch over `reps` launches (the queue finished before and after).
    fn time(&self, reps: usize) -> R<f64> {
        let (raw, k) = (self.raw, &self.kernel);
        let launch = || -> R<()> {
            raw.set_mem(k, 0, self.input.get())?;
            raw.set_mem(k, 1, self.output.get())?;
            raw.set(k, 2, &4u32)?;
            raw.enqueue_no_event(k, 4, None)
        };
        per_call(1, reps, launch, || raw.finish())
    }
}

/// Host time of one logistic-regression step (`logreg::Model::step`, as the example
/// runs it: the residual stored on CPU devices, fused on GPUs), recorded and flushed
/// without waiting (on the default context, and all handed over on the background one),
/// against the raw launches of as many kernels (`RawLaunch3`, `reps` launches a trial,
/// its trials interleaved with the step's).
///
/// Timing: blocks of `STEPS` steps back to back, as a training loop runs them, timed as
/// a whole; `synchronize` between blocks, outside the timed part, so that the queue
/// never holds more than a block's kernels (back-pressure cannot wait inside a block)
/// and one block's device work is done before the next starts. The step never waits
/// for the device (the example's claim): a block that counted a host wait is an error,
/// since its time would not be the host's alone. Median over the blocks.
fn logreg_step(rep: &mut Report, modes: &Modes, raw: &Raw, quick: bool, trials: usize, reps: usize) -> R<()> {
    let (ctx, default) = (&modes.background, &modes.default);
    const STEPS: usize = 10;
    // Blocks are cheap: many of them, so that the median holds on a shared machine.
    const BLOCKS: usize = 21;
    let (n, d) = if quick { (8_000, 20) } else { (200_000, 100) };
    let (xh, yh) = logreg::make_classification::<f32>(n, d);
    let fuse = ctx.device().device_type == lazycl::DeviceType::Gpu;
    let mut model = lz(logreg::Model::new(ctx, &xh, &yh, n, d, fuse))?;
    let mut model_default = lz(logreg::Model::new(default, &xh, &yh, n, d, fuse))?;
    // Warm-up: every program of the step built (or loaded).
    for _ in 0..3 {
        lz(model.step().map(drop))?;
        lz(model_default.step().map(drop))?;
    }
    lz(ctx.synchronize())?;
    lz(default.synchronize())?;
    let before = ctx.stats();
    lz(model.step().map(drop))?;
    let kernels = (ctx.stats() - before).kernels_launched;
    lz(ctx.synchronize())?;
    let raw_launch = RawLaunch3::new(raw)?;
    // The same step captured (`logreg::Model::capture`, residual fused): runs bind the
    // new parameters and launch. On the default context, whose steps are flushed on the
    // caller in these blocks (on the background one the kernels, queue and buffers would
    // come warm from the dispatch thread's core, and the row would measure moving them
    // back).
    let captured = model_default.capture();
    let (mut w, mut b): logreg::Params<f32> = (model_default.w.clone(), model_default.b.clone());
    for _ in 0..3 {
        (w, b) = lz(captured.run((&w, &b)))?;
    }
    lz(default.synchronize())?;
    let s0 = default.stats();
    (w, b) = lz(captured.run((&w, &b)))?;
    let captured_kernels = (default.stats() - s0).kernels_launched;
    let (mut times, mut run_times, mut raw_times) = (Vec::new(), Vec::new(), Vec::new());
    let mut default_times = Vec::new();
    for _ in 0..BLOCKS.max(trials) {
        times.push(block(ctx, STEPS, || lz(model.step().map(drop)))?);
        lz(ctx.synchronize())?;
        run_times.push(block(default, STEPS, || {
            (w, b) = lz(captured.run((&w, &b)))?;
            Ok(())
        })?);
        lz(default.synchronize())?;
        default_times.push(block(default, STEPS, || lz(model_default.step().map(drop)))?);
        lz(default.synchronize())?;
        raw_times.push(raw_launch.time(reps)?);
    }
    let raw_launch = median(raw_times);
    rep.add(
        format!(
            "host time per logistic-regression step {n}x{d} f32 ({kernels} kernels, \
             recorded + flushed, Background)"
        ),
        median(times) * 1e6,
        kernels as f64 * raw_launch * 1e6,
        "µs",
        "as many raw launches, 3 args set each",
    );
    rep.add(
        format!(
            "host time per logistic-regression step {n}x{d} f32 ({kernels} kernels, \
             recorded + flushed, {})",
            modes.default_name()
        ),
        median(default_times) * 1e6,
        kernels as f64 * raw_launch * 1e6,
        "µs",
        "as many raw launches, 3 args set each",
    );
    rep.add(
        format!(
            "host time per logistic-regression step {n}x{d} f32 ({captured_kernels} kernels, \
             captured: Step::run)"
        ),
        median(run_times) * 1e6,
        captured_kernels as f64 * raw_launch * 1e6,
        "µs",
        "as many raw launches, 3 args set each",
    );
    Ok(())
}

/// Host seconds per step of `steps` calls of `step` timed as a whole, until every flush
/// of the block was enqueued (those handed to the dispatch thread too); an error if the
/// block waited for the device or built a program (its time would not be the host's).
fn block(ctx: &Context, steps: usize, mut step: impl FnMut() -> R<()>) -> R<f64> {
    let s0 = ctx.stats();
    let t = Instant::now();
    for _ in 0..steps {
        step()?;
    }
    lz(ctx.wait_dispatched())?;
    let took = t.elapsed().as_secs_f64();
    let d = ctx.stats() - s0;
    if d.host_waits != 0 || d.waits_backpressure != 0 || d.programs_built != 0 {
        return Err(format!(
            "logistic-regression host row: {steps} steps waited {} times (back-pressure \
             {}) and built {} programs; the row would not be the host's time",
            d.host_waits, d.waits_backpressure, d.programs_built
        ));
    }
    Ok(took / steps as f64)
}
