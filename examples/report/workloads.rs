//! One iteration of each workload example (logistic regression, k-means, the Gaussian
//! log-likelihood), lazycl against hand-written raw-opencl3 kernels computing the same
//! iteration. The two sides are checked against each other before they are timed.

use lazycl::{Context, DType, DeviceType};
use opencl3::memory::ClMem;

use super::raw::{self, Raw, R};
use super::{lz, per_run, Report};

#[path = "../common/gaussian.rs"]
mod gaussian;
#[path = "../common/kmeans.rs"]
pub mod kmeans;
#[path = "../common/logreg.rs"]
pub mod logreg;
#[path = "../common/synthetic.rs"]
mod synthetic;

pub const RAW_KERNELS: &str = "raw opencl3, hand-written kernels";

/// Iterations run by both sides before their results are compared.
const CHECK_ITERS: usize = 3;

fn type_name(dtype: DType) -> &'static str {
    match dtype {
        DType::F64 => "f64",
        _ => "f32",
    }
}

/// `max |a - b| / max |b|`.
fn rel_diff(a: &[f64], b: &[f64]) -> f64 {
    let scale = b.iter().fold(1e-30f64, |m, v| m.max(v.abs()));
    a.iter().zip(b).fold(0.0f64, |m, (x, y)| m.max((x - y).abs())) / scale
}

/// `x` rounded up to a multiple of `m`.
fn round_up(x: usize, m: usize) -> usize {
    x.div_ceil(m) * m
}

/// Logistic regression: one gradient step on `n x d` features and a separate bias,
/// `logreg::Model::step` (residual stored) against three raw kernels (which keep the bias
/// as a last, unpenalized weight: `d + 1` weights).
pub fn logistic_regression<T: logreg::Real>(
    rep: &mut Report,
    ctx: &Context,
    raw: &Raw,
    n: usize,
    d: usize,
    trials: usize,
    reps: usize,
) -> R<()> {
    let what = format!("logistic regression {n}x{d} {}", type_name(T::DTYPE));
    let (xh, yh) = logreg::make_classification::<T>(n, d);
    let da = d + 1; // the raw side's weights: w, then the bias
                    // As the example's default: on GPUs the residual is not stored (the gradient's two
                    // reductions run as one kernel); elsewhere it is (faster there).
    let fuse = ctx.device().device_type == lazycl::DeviceType::Gpu;
    let mut model = lz(logreg::Model::new(ctx, &xh, &yh, n, d, fuse))?;

    // Raw: on a GPU, LANES work-items per row with about 16 elements each (measured on an
    // H200 at 200000x100: 8 lanes 31 us, 32 lanes 63 us, 64 lanes 88 us); on a CPU device
    // one work-item per row, since PoCL runs each of a work-group's barriers as a separate
    // loop over its work-items (the tree made the kernel 7x slower there). The gradient's
    // rows split into segments so that about 2048 work-items per compute unit run.
    let lanes = match ctx.device().device_type {
        DeviceType::Cpu => 1,
        _ => d.div_ceil(16).next_power_of_two().clamp(8, 256),
    };
    let cu = ctx.device().compute_units.max(1) as usize;
    let dpad = round_up(da, 64);
    let seg_rows = n.div_ceil((cu * 2048 / dpad).max(1)).max(16);
    let segs = n.div_ceil(seg_rows);
    let src = format!(
        "{}#define LANES {lanes}\n{}",
        raw::real_defines(T::DTYPE),
        raw::LOGREG
    );
    let ks = raw.kernels(&src, &["logreg_residual", "logreg_grad", "logreg_update"])?;
    let (kr, kg, ku) = (&ks[0], &ks[1], &ks[2]);
    let zero = T::from_f64(0.0);
    let mut regh = vec![T::from_f64(logreg::LAMBDA); da];
    regh[d] = zero;
    let xb = raw.buffer(&xh)?;
    let yb = raw.buffer(&yh)?;
    let regb = raw.buffer(&regh)?;
    let wb = raw.buffer(&vec![zero; da])?;
    let rb = raw.empty::<T>(n)?;
    let pb = raw.empty::<T>(segs * da)?;
    let (n32, d32) = (n as u32, d as u32);
    raw.set_mem(kr, 0, xb.get())?;
    raw.set_mem(kr, 1, wb.get())?;
    raw.set_mem(kr, 2, yb.get())?;
    raw.set_mem(kr, 3, rb.get())?;
    raw.set(kr, 4, &n32)?;
    raw.set(kr, 5, &d32)?;
    raw.set_mem(kg, 0, xb.get())?;
    raw.set_mem(kg, 1, rb.get())?;
    raw.set_mem(kg, 2, pb.get())?;
    raw.set(kg, 3, &n32)?;
    raw.set(kg, 4, &d32)?;
    raw.set(kg, 5, &(dpad as u32))?;
    raw.set(kg, 6, &(seg_rows as u32))?;
    raw.set(kg, 7, &(segs as u32))?;
    raw.set_mem(ku, 0, wb.get())?;
    raw.set_mem(ku, 1, pb.get())?;
    raw.set_mem(ku, 2, regb.get())?;
    raw.set(ku, 3, &(segs as u32))?;
    raw.set(ku, 4, &T::from_f64(1.0 / n as f64))?;
    raw.set(ku, 5, &T::from_f64(logreg::LEARNING_RATE))?;
    let raw_step = || -> R<()> {
        raw.enqueue_no_event(kr, n.div_ceil(256 / lanes) * 256, Some(256))?;
        raw.enqueue_no_event(kg, segs * dpad, Some(64))?;
        raw.enqueue_no_event(ku, da * 64, Some(64))
    };

    // Check (and warm-up: every program is built here): both from zero weights.
    for _ in 0..CHECK_ITERS {
        lz(model.step().map(drop))?;
        raw_step()?;
    }
    // lazycl's [w..., b] against the raw side's d + 1 weights (the bias last).
    let mut w_lazycl: Vec<f64> = lz(model.w.to_vec())?.into_iter().map(T::to_f64).collect();
    w_lazycl.extend(lz(model.b.to_vec())?.into_iter().map(T::to_f64));
    let mut w_raw = vec![zero; da];
    raw.read(&wb, &mut w_raw)?;
    let w_raw: Vec<f64> = w_raw.into_iter().map(T::to_f64).collect();
    let diff = rel_diff(&w_raw, &w_lazycl);
    let (loss, accuracy) = lz(model.metrics())?;
    eprintln!(
        "  check {what}: weights after {CHECK_ITERS} steps agree to {diff:.1e} (tolerance {:.0e}); \
         loss {loss:.5}, accuracy {:.1}%",
        T::TOL,
        accuracy * 100.0
    );
    if diff.is_nan() || diff > T::TOL || !loss.is_finite() {
        return Err(format!(
            "{what}: the raw baseline's weights differ from lazycl's after {CHECK_ITERS} steps \
             (max |w_raw - w| / max |w| = {diff:.2e} > {:.0e}, loss {loss})",
            T::TOL
        ));
    }

    // Timed from zero weights, as in the example (the raw side goes on from its weights:
    // the same work per step).
    lz(model.reset())?;
    let ours = per_run(
        trials,
        reps,
        || lz(model.step().map(drop)),
        || lz(ctx.synchronize()),
    )?;
    let theirs = per_run(trials, reps, raw_step, || raw.finish())?;
    rep.add(
        format!("{what}, one gradient step"),
        ours * 1e3,
        theirs * 1e3,
        "ms",
        RAW_KERNELS,
    );
    Ok(())
}

/// k-means: one Lloyd iteration on `n x d` f32 points, `k` clusters, `kmeans::KMeans::step`
/// (assignment by the faster lazy form for the shape, `Assign::for_points`) against three
/// raw kernels.
pub fn kmeans(
    rep: &mut Report,
    ctx: &Context,
    raw: &Raw,
    (n, d, k): (usize, usize, usize),
    trials: usize,
    reps: usize,
) -> R<()> {
    let what = format!("k-means {n}x{d} f32, k={k}");
    let xh = kmeans::make_blobs(n, d, k);
    let assign = kmeans::Assign::for_points(d);
    let mut km = lz(kmeans::KMeans::new(ctx, &xh, n, d, k, assign))?;

    // Raw: about four work-groups per compute unit for the sums, each over a segment of
    // at least LANES points.
    let lanes = 256;
    let cu = ctx.device().compute_units.max(1) as usize;
    let segs = (cu * 4).div_ceil(k).min(n.div_ceil(lanes)).max(1);
    let seg_len = n.div_ceil(segs);
    let src = format!("#define D {d}\n#define LANES {lanes}\n{}", raw::KMEANS);
    let ks = raw.kernels(&src, &["km_assign", "km_partial", "km_update"])?;
    let (ka, kp, ku) = (&ks[0], &ks[1], &ks[2]);
    let xb = raw.buffer(&xh)?;
    let cb = raw.buffer(&xh[..k * d])?;
    let lb = raw.empty::<u32>(n)?;
    let pb = raw.empty::<f32>(segs * k * (d + 1))?;
    let (n32, k32) = (n as u32, k as u32);
    raw.set_mem(ka, 0, xb.get())?;
    raw.set_mem(ka, 1, cb.get())?;
    raw.set_mem(ka, 2, lb.get())?;
    raw.set(ka, 3, &n32)?;
    raw.set(ka, 4, &k32)?;
    raw.set_mem(kp, 0, xb.get())?;
    raw.set_mem(kp, 1, lb.get())?;
    raw.set_mem(kp, 2, pb.get())?;
    raw.set(kp, 3, &n32)?;
    raw.set(kp, 4, &k32)?;
    raw.set(kp, 5, &(seg_len as u32))?;
    raw.set_mem(ku, 0, cb.get())?;
    raw.set_mem(ku, 1, pb.get())?;
    raw.set(ku, 2, &k32)?;
    raw.set(ku, 3, &(segs as u32))?;
    let raw_step = || -> R<()> {
        raw.enqueue_no_event(ka, round_up(n, 64), Some(64))?;
        raw.enqueue_no_event(kp, segs * k * lanes, Some(lanes))?;
        raw.enqueue_no_event(ku, round_up(k * d, 64), Some(64))
    };

    // Check (and warm-up): both from the same initial centroids.
    for _ in 0..CHECK_ITERS {
        lz(km.step())?;
        raw_step()?;
    }
    let c_lazycl: Vec<f64> = lz(km.c.to_vec())?.into_iter().map(f64::from).collect();
    let mut c_raw = vec![0.0f32; k * d];
    raw.read(&cb, &mut c_raw)?;
    let c_raw: Vec<f64> = c_raw.into_iter().map(f64::from).collect();
    let diff = rel_diff(&c_raw, &c_lazycl);
    // As in the example: f32 sums in another order, and no point changes cluster.
    let tol = 1e-4;
    eprintln!(
        "  check {what}: centroids after {CHECK_ITERS} iterations agree to {diff:.1e} (tolerance {tol:.0e})"
    );
    if diff.is_nan() || diff > tol {
        return Err(format!(
            "{what}: the raw baseline's centroids differ from lazycl's after {CHECK_ITERS} \
             iterations (max |c_raw - c| / max |c| = {diff:.2e} > {tol:.0e})"
        ));
    }

    let ours = per_run(trials, reps, || lz(km.step()), || lz(ctx.synchronize()))?;
    let theirs = per_run(trials, reps, raw_step, || raw.finish())?;
    rep.add(
        format!("{what}, one Lloyd iteration"),
        ours * 1e3,
        theirs * 1e3,
        "ms",
        RAW_KERNELS,
    );
    Ok(())
}

/// The Gaussian log-likelihood and its gradient over `n` values, read to the host, then a
/// Newton step on the host (one iteration of `examples/gaussian_logp.rs`):
/// `gaussian::Model::evaluate` against two raw kernels and a blocking read.
pub fn gaussian_logp<T: gaussian::Real>(
    rep: &mut Report,
    ctx: &Context,
    raw: &Raw,
    n: usize,
    trials: usize,
    reps: usize,
) -> R<()> {
    let what = format!("gaussian logp + gradient, n={n} {}", type_name(T::DTYPE));
    let data: Vec<T> = gaussian::make_data(n);
    let model = lz(gaussian::Model::new(ctx, &data))?;
    let nf = n as f64;

    // Raw: enough work-groups to fill the device, at least 16 values per work-item.
    let lanes = 256;
    let cu = ctx.device().compute_units.max(1) as usize;
    let groups = n.div_ceil(lanes * 16).clamp(1, cu * 8);
    let src = format!(
        "{}#define LANES {lanes}\n{}",
        raw::real_defines(T::DTYPE),
        raw::GAUSSIAN
    );
    let ks = raw.kernels(&src, &["gauss_partial", "gauss_finish"])?;
    let (kp, kf) = (&ks[0], &ks[1]);
    let xb = raw.buffer(&data)?;
    let pb = raw.empty::<T>(2 * groups)?;
    let ob = raw.empty::<T>(3)?;
    raw.set_mem(kp, 0, xb.get())?;
    raw.set_mem(kp, 1, pb.get())?;
    raw.set(kp, 2, &(n as u32))?;
    raw.set_mem(kf, 0, pb.get())?;
    raw.set_mem(kf, 1, ob.get())?;
    raw.set(kf, 2, &(groups as u32))?;
    let raw_evaluate = |mu: f64, sigma: f64| -> R<[f64; 3]> {
        let t = T::from_f64;
        raw.set(kp, 3, &t(mu))?;
        raw.set(kf, 3, &t(-nf * (sigma.ln() + 0.5 * gaussian::LN_2PI)))?;
        raw.set(kf, 4, &t(1.0 / (sigma * sigma)))?;
        raw.set(kf, 5, &t(1.0 / (sigma * sigma * sigma)))?;
        raw.set(kf, 6, &t(nf / sigma))?;
        raw.enqueue_no_event(kp, groups * lanes, Some(lanes))?;
        raw.enqueue_no_event(kf, lanes, Some(lanes))?;
        let mut out = [t(0.0); 3];
        raw.read(&ob, &mut out)?;
        Ok([out[0].to_f64(), out[1].to_f64(), out[2].to_f64()])
    };

    // Check (and warm-up): both evaluated along lazycl's Newton path from (0, 1).
    let (mut mu, mut ln_sigma) = (0.0f64, 0.0f64);
    let mut worst = 0.0f64;
    for _ in 0..CHECK_ITERS {
        let sigma = ln_sigma.exp();
        let ours = lz(model.evaluate(mu, sigma))?;
        let theirs = raw_evaluate(mu, sigma)?;
        worst = worst.max(gaussian::rel_err(&theirs, &ours, nf, sigma));
        gaussian::newton_step(&mut mu, &mut ln_sigma, &ours, nf);
    }
    eprintln!(
        "  check {what}: evaluations along {CHECK_ITERS} Newton steps agree to {worst:.1e} \
         (tolerance {:.0e})",
        T::TOL
    );
    if worst.is_nan() || worst > T::TOL {
        return Err(format!(
            "{what}: the raw baseline's [logp, d/dmu, d/dsigma] differ from lazycl's \
             (relative {worst:.2e} > {:.0e})",
            T::TOL
        ));
    }

    // Timed: evaluation + Newton step, each side from (0, 1).
    let (mut mu, mut ln_sigma) = (0.0f64, 0.0f64);
    let ours = per_run(
        trials,
        reps,
        || {
            let v = lz(model.evaluate(mu, ln_sigma.exp()))?;
            gaussian::newton_step(&mut mu, &mut ln_sigma, &v, nf);
            Ok(())
        },
        || Ok(()),
    )?;
    let (mut mu, mut ln_sigma) = (0.0f64, 0.0f64);
    let theirs = per_run(
        trials,
        reps,
        || {
            let v = raw_evaluate(mu, ln_sigma.exp())?;
            gaussian::newton_step(&mut mu, &mut ln_sigma, &v, nf);
            Ok(())
        },
        || Ok(()),
    )?;
    rep.add(
        format!("{what}, one evaluation (incl. read) + Newton step"),
        ours * 1e3,
        theirs * 1e3,
        "ms",
        RAW_KERNELS,
    );
    Ok(())
}
