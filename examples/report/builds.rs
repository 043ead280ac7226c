//! The report's row for a cold start: a flush that needs `n` new programs
//! builds them together, one thread per core, against the same flush in another context
//! that builds them one after another (`Tuning::serial_builds`), in the same call.
//!
//! Each flush builds programs no other flush of the call asked for (other operations),
//! so no driver cache serves one from another's builds, and lazycl's disk cache is off.
//! Run with the driver's own cache cold (`CUDA_CACHE_DISABLE=1` on NVIDIA, a fresh
//! `POCL_CACHE_DIR` on PoCL). Two rounds, the order swapped in the second.

use std::time::Instant;

use lazycl::{eval, Array, CacheDir, Context, Tuning};

use crate::raw::R;
use crate::{lz, Report};

/// A unary operation on arrays.
type UnaryFn = fn(&Array<f32>) -> Array<f32>;

/// The unary operations the programs chain.
const OPS: [UnaryFn; 8] = [
    Array::sin,
    Array::cos,
    Array::tanh,
    Array::atan,
    Array::sinh,
    Array::exp,
    Array::sqrt,
    Array::cbrt,
];

/// Program `i` of set `set`: an array of `1000 + i` elements (a kernel of its own) put
/// through five operations that spell `set * n + i` in base 8 (a program of its own).
fn program(ctx: &Context, set: usize, n: usize, i: usize) -> R<Array<f32>> {
    let x = lz(ctx.full([1000 + i], 0.25f32))?;
    let mut code = set * n + i;
    let mut y = x.abs();
    for _ in 0..5 {
        y = OPS[code % 8](&y).abs();
        code /= 8;
    }
    Ok(y)
}

/// Milliseconds of wall time for one flush of `n` new programs of set `set` on `ctx`
/// (building, launching and waiting), and the build phase's share of it.
fn flush(ctx: &Context, set: usize, n: usize) -> R<(f64, f64)> {
    let arrays: Vec<Array<f32>> = (0..n).map(|i| program(ctx, set, n, i)).collect::<R<_>>()?;
    let before = ctx.stats();
    let t = Instant::now();
    lz(eval(&arrays))?;
    lz(ctx.synchronize())?;
    let ms = t.elapsed().as_secs_f64() * 1e3;
    let ran = ctx.stats() - before;
    if ran.programs_built != n as u64 {
        return Err(format!(
            "set {set}: {} programs built, {n} expected",
            ran.programs_built
        ));
    }
    Ok((ms, ran.build_wall_us as f64 / 1e3))
}

pub fn rows(rep: &mut Report, quick: bool) -> R<()> {
    let n = if quick { 6 } else { 16 };
    let open = |serial_builds: bool| {
        lz(Context::builder()
            .program_cache(CacheDir::Off)
            .quiet(true)
            .tuning(Tuning {
                serial_builds,
                ..Tuning::default()
            })
            .build())
    };
    let (serial, together) = (open(true)?, open(false)?);
    let (mut serial_ms, mut together_ms) = (0.0, 0.0);
    for round in 0..2 {
        let (a, b) = (2 * round, 2 * round + 1);
        let (s, t) = if round == 0 {
            (flush(&serial, a, n)?, flush(&together, b, n)?)
        } else {
            let t = flush(&together, b, n)?;
            (flush(&serial, a, n)?, t)
        };
        eprintln!(
            "  builds round {round}: one after another {:.0} ms (building {:.0}), together {:.0} ms (building {:.0})",
            s.0, s.1, t.0, t.1
        );
        serial_ms += s.0 / 2.0;
        together_ms += t.0 / 2.0;
    }
    rep.add(
        format!("first flush of {n} new programs (build and run)"),
        together_ms,
        serial_ms,
        "ms",
        "built one after another (same call)",
    );
    Ok(())
}
