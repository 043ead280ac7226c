//! How the report times: medians over trials, host time per call, device time per run,
//! and a busy kernel calibrated to a length.

use std::time::Instant;

use crate::raw::R;

pub(crate) fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// Host seconds per call of `f` (median over `trials` of `reps` calls each); `sync` runs
/// before and after each trial, outside the timed region.
pub(crate) fn per_call(
    trials: usize,
    reps: usize,
    mut f: impl FnMut() -> R<()>,
    mut sync: impl FnMut() -> R<()>,
) -> R<f64> {
    let mut times = Vec::new();
    for _ in 0..trials {
        sync()?;
        let t = Instant::now();
        for _ in 0..reps {
            f()?;
        }
        times.push(t.elapsed().as_secs_f64() / reps as f64);
        sync()?;
    }
    Ok(median(times))
}

/// Device seconds per call of `f`: the timed region ends with `sync` (median of trials).
pub(crate) fn per_run(
    trials: usize,
    reps: usize,
    mut f: impl FnMut() -> R<()>,
    mut sync: impl FnMut() -> R<()>,
) -> R<f64> {
    f()?;
    sync()?;
    let mut times = Vec::new();
    for _ in 0..trials {
        let t = Instant::now();
        for _ in 0..reps {
            f()?;
        }
        sync()?;
        times.push(t.elapsed().as_secs_f64() / reps as f64);
    }
    Ok(median(times))
}

/// Busy-loop iterations that make `run_and_wait(iters)` take about `target` seconds (at
/// least 60 % of it); returns them with the time the last run took.
pub(crate) fn calibrate_spin(target: f64, mut run_and_wait: impl FnMut(u32) -> R<()>) -> R<(u32, f64)> {
    let (mut iters, mut took) = (1000u32, 0.0);
    for _ in 0..12 {
        let t = Instant::now();
        run_and_wait(iters)?;
        took = t.elapsed().as_secs_f64();
        if took > 0.6 * target {
            break;
        }
        iters = iters.saturating_mul(((target / took.max(1e-6)) as u32).clamp(2, 16));
    }
    Ok((iters, took))
}
