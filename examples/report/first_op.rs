//! The first lazy operation after the host thread paused (host rows of `--host`): right
//! after a long kernel, on each dispatch mode's context, against a raw enqueue after a
//! raw long kernel.

use std::time::Instant;

use lazycl::{Array, Context, Dims, Kernel, KernelArg};
use opencl3::memory::ClMem;

use super::host::Modes;
use super::raw::{self, Raw, R};
use super::{calibrate_spin, lz, median, Report, SPIN};

/// A `SPIN` kernel bound on one context: a ~`TARGET`-second kernel on its default queue.
struct Spin {
    kernel: Kernel,
    items: usize,
    arg: lazycl::ArrayArg,
    _buf: Array<f32>,
}

impl Spin {
    fn new(ctx: &Context) -> R<Spin> {
        let items = (ctx.device().compute_units as usize * 256).max(256);
        let buf = lz(ctx.full(items, 1.0f32))?;
        Ok(Spin {
            kernel: lz(Kernel::bind(ctx, &SPIN))?,
            items,
            arg: lz(buf.kernel_arg())?,
            _buf: buf,
        })
    }

    fn launch(&self, iters: u32) -> R<()> {
        let args = [
            self.arg.mem(),
            KernelArg::Scalar(lazycl::Element::to_arg_bits(iters)),
        ];
        lz(self.kernel.launch(Dims::from(self.items), None, &args))
    }
}

/// The first lazy operation after a long kernel: `2.0 * &x` + `eval()` (x of 2^16 f32,
/// its program built before) right after a ~80 ms kernel was enqueued on the same queue,
/// on each context of [`Modes`], and its captured form; against a raw enqueue (arguments
/// set, no event) of a kernel computing the same, right after a raw long kernel on the
/// raw queue. Each trial is one operation, timed alone; every queue is finished between
/// trials, outside the timing.
pub fn after_long_kernel(rep: &mut Report, modes: &Modes, raw: &Raw) -> R<()> {
    const TRIALS: usize = 7;
    const TARGET: f64 = 0.080;
    let n = 1usize << 16;
    let host: Vec<f32> = (0..n).map(|i| (i % 100) as f32 / 100.0 - 0.5).collect();
    let ctx = &modes.default;
    let contexts = [&modes.default, &modes.background, &modes.inline];
    let spins = contexts.iter().map(|c| Spin::new(c)).collect::<R<Vec<_>>>()?;
    let xs = contexts
        .iter()
        .map(|c| lz(c.from_slice(&host)))
        .collect::<R<Vec<_>>>()?;
    let (iters, spin_time) = calibrate_spin(TARGET, |iters| {
        spins[0].launch(iters)?;
        lz(ctx.synchronize())
    })?;
    for (c, x) in contexts.iter().zip(&xs) {
        lz((2.0 * x).eval().map(drop))?;
        lz(c.synchronize())?;
    }
    let spin = &spins[0];
    let rspin = raw.kernel(raw::SPIN, "spin")?;
    let rbuf = raw.buffer_f32(&vec![1.0; spin.items])?;
    raw.set_mem(&rspin, 0, rbuf.get())?;
    let rlong = |iters: u32| -> R<()> {
        raw.set(&rspin, 1, &iters)?;
        raw.enqueue_no_event(&rspin, spin.items, None)
    };
    // The same kernel with the same iterations on the same device: as long as lazycl's.
    let t = Instant::now();
    rlong(iters)?;
    raw.finish()?;
    let rspin_time = t.elapsed().as_secs_f64();
    let rs = raw.kernel(raw::SCALE2, "scale2")?;
    let rin = raw.buffer_f32(&host)?;
    let rout = raw.empty::<f32>(n)?;
    let rscale = || -> R<()> {
        raw.set_mem(&rs, 0, rin.get())?;
        raw.set_mem(&rs, 1, rout.get())?;
        raw.set(&rs, 2, &(n as u32))?;
        raw.enqueue_no_event(&rs, n, None)
    };
    rscale()?;
    raw.finish()?;
    // The same operation captured: `scale.run(&x)`.
    let scale = ctx.capture(|x: Array<f32>| Ok(2.0 * &x));
    lz(scale.run(&xs[0]).map(drop))?;
    lz(ctx.synchronize())?;
    // Interleaved trials (each context's eval, captured, raw, ...), so that drift of the
    // machine's speed does not favour any side.
    let mut evals: Vec<Vec<f64>> = vec![Vec::new(); contexts.len()];
    let (mut captured, mut theirs) = (vec![], vec![]);
    let timed = |c: &Context, spin: &Spin, out: &mut Vec<f64>, op: &dyn Fn() -> R<()>| -> R<()> {
        spin.launch(iters)?;
        let t = Instant::now();
        op()?;
        out.push(t.elapsed().as_secs_f64());
        lz(c.synchronize())
    };
    for _ in 0..TRIALS {
        for (i, c) in contexts.iter().enumerate() {
            let x = &xs[i];
            timed(c, &spins[i], &mut evals[i], &|| lz((2.0 * x).eval().map(drop)))?;
        }
        timed(ctx, spin, &mut captured, &|| lz(scale.run(&xs[0]).map(drop)))?;
        rlong(iters)?;
        let t = Instant::now();
        rscale()?;
        theirs.push(t.elapsed().as_secs_f64());
        raw.finish()?;
    }
    let mut out = vec![0.0f32; n];
    raw.read(&rout, &mut out)?;
    if out[1] != 2.0 * host[1] {
        return Err("the raw scale2 kernel gave a wrong result".into());
    }
    eprintln!(
        "  long kernels ({iters} iterations): lazycl {:.1} ms, raw {:.1} ms",
        spin_time * 1e3,
        rspin_time * 1e3
    );
    let worst = |v: &[f64]| v.iter().fold(0.0f64, |m, &t| m.max(t));
    let raw_median = median(theirs.clone()) * 1e6;
    let default = format!("`2.0 * &x` + eval ({})", modes.default_name());
    for (what, times) in [
        (default.as_str(), &evals[0]),
        ("`2.0 * &x` + eval handed over (Background)", &evals[1]),
        ("`2.0 * &x` + eval flushed by the caller (Inline)", &evals[2]),
        ("captured `2.0 * &x` run", &captured),
    ] {
        rep.add(
            format!("host time of the first {what} after a ~80 ms kernel (median of {TRIALS})"),
            median(times.clone()) * 1e6,
            raw_median,
            "µs",
            "raw enqueue after a raw long kernel",
        );
    }
    rep.add(
        format!("host time of the first {default} after a ~80 ms kernel (worst of {TRIALS})"),
        worst(&evals[0]) * 1e6,
        worst(&theirs) * 1e6,
        "µs",
        "same, raw (a wait would read as the long kernel's duration)",
    );
    Ok(())
}

/// The first `eval()` after a pause, read at once: `2.0 * &x` over 16 f32, `eval()`,
/// then `to_vec()`, timed from the op to the data on the host, right after the thread
/// slept 2 ms (the device idle); on each context of [`Modes`], against a raw enqueue of
/// the same kernel and a blocking read after the same sleep. What a loop that pauses and
/// reads a result each step pays: where the default hands the eval over (GPUs), the
/// read takes the flush back or waits for the dispatch thread's, and must cost no more
/// than flushing inline. Trials interleaved, median.
pub fn eval_then_read(rep: &mut Report, modes: &Modes, raw: &Raw) -> R<()> {
    const TRIALS: usize = 15;
    const PAUSE: std::time::Duration = std::time::Duration::from_millis(2);
    let n = 16usize;
    let host: Vec<f32> = (0..n).map(|i| i as f32 - 3.5).collect();
    let want: Vec<f32> = host.iter().map(|v| 2.0 * v).collect();
    let contexts = [&modes.default, &modes.background, &modes.inline];
    let xs = contexts
        .iter()
        .map(|c| lz(c.from_slice(&host)))
        .collect::<R<Vec<_>>>()?;
    let round_trip = |x: &Array<f32>| -> R<()> {
        let y = 2.0 * x;
        lz(y.eval())?;
        match lz(y.to_vec())? == want {
            true => Ok(()),
            false => Err("`2.0 * &x` read back wrong".into()),
        }
    };
    for x in &xs {
        round_trip(x)?;
    }
    let rs = raw.kernel(raw::SCALE2, "scale2")?;
    let rin = raw.buffer_f32(&host)?;
    let rout = raw.empty::<f32>(n)?;
    let mut out = vec![0.0f32; n];
    let mut raw_trip = || -> R<()> {
        raw.set_mem(&rs, 0, rin.get())?;
        raw.set_mem(&rs, 1, rout.get())?;
        raw.set(&rs, 2, &(n as u32))?;
        raw.enqueue_no_event(&rs, n, None)?;
        raw.read(&rout, &mut out)
    };
    raw_trip()?;
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); contexts.len() + 1];
    let before: Vec<_> = contexts.iter().map(|c| c.stats()).collect();
    for _ in 0..TRIALS {
        for (k, x) in xs.iter().enumerate() {
            std::thread::sleep(PAUSE);
            let t = Instant::now();
            round_trip(x)?;
            times[k].push(t.elapsed().as_secs_f64());
        }
        std::thread::sleep(PAUSE);
        let t = Instant::now();
        raw_trip()?;
        times[contexts.len()].push(t.elapsed().as_secs_f64());
    }
    if out != want {
        return Err("the raw scale2 kernel gave a wrong result".into());
    }
    for (c, s0) in contexts.iter().zip(before) {
        let d = c.stats() - s0;
        eprintln!(
            "  eval + read after a pause, {:?}: {} of {TRIALS} evals handed over, {} taken back, \
             {} waits for the dispatch thread",
            c.dispatch(),
            d.evals_dispatched,
            d.evals_taken_back,
            d.dispatch_waits
        );
    }
    let raw_median = median(times[contexts.len()].clone()) * 1e6;
    let default = modes.default_name();
    for (what, t) in [
        (default.as_str(), &times[0]),
        ("handed over (Background)", &times[1]),
        ("flushed by the caller (Inline)", &times[2]),
    ] {
        rep.add(
            format!(
                "wall time of `2.0 * &x` + eval + read (n=16) after a 2 ms pause, {what} \
                 (median of {TRIALS})"
            ),
            median(t.clone()) * 1e6,
            raw_median,
            "µs",
            "raw enqueue + blocking read after a 2 ms pause",
        );
    }
    Ok(())
}
