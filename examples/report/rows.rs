//! The report's rows for row functions: softmax and layer norm over the rows
//! of a matrix, in TB/s counting one read and one write of it, against torch measured in
//! the same call by `benches/reference/arrays_reference.py --json --only rows` (its
//! output named by `LAZYCL_ARRAYS_REFERENCE`); with `--quick` (PoCL), small sizes
//! against a loop on the host.

use lazycl::{Array, Context};

use crate::raw::R;
use crate::reference::Reference;
use crate::{lz, per_run, Report};

/// TB/s moving `n` elements of 4 bytes in and out in `seconds`.
fn tbps(n: usize, seconds: f64) -> f64 {
    2.0 * (n * 4) as f64 / seconds / 1e12
}

fn layer_norm(x: &Array<f32>, g: &Array<f32>, b: &Array<f32>) -> Array<f32> {
    let mean = x.mean_axes(&[1], true);
    let d = x - &mean;
    let var = (&d * &d).mean_axes(&[1], true);
    &d / (var + 1e-5f32).sqrt() * g + b
}

/// Host seconds of a softmax (or layer norm) of the rows of `v` (`d` each), one thread.
fn host_seconds(v: &[f32], d: usize, norm: bool) -> f64 {
    let t = std::time::Instant::now();
    let mut out = vec![0f32; v.len()];
    for (row, o) in v.chunks(d).zip(out.chunks_mut(d)) {
        if norm {
            let m = row.iter().sum::<f32>() / d as f32;
            let var = row.iter().map(|x| (x - m) * (x - m)).sum::<f32>() / d as f32;
            let s = 1.0 / (var + 1e-5).sqrt();
            for (y, x) in o.iter_mut().zip(row) {
                *y = (x - m) * s * 1.5 + 0.25;
            }
        } else {
            let m = row.iter().cloned().fold(f32::MIN, f32::max);
            let mut s = 0.0;
            for (y, x) in o.iter_mut().zip(row) {
                *y = (x - m).exp();
                s += *y;
            }
            for y in o.iter_mut() {
                *y /= s;
            }
        }
    }
    std::hint::black_box(&out);
    t.elapsed().as_secs_f64()
}

/// Adds the softmax and layer-norm rows.
pub fn rows(rep: &mut Report, ctx: &Context, quick: bool, trials: usize) -> R<()> {
    let refs = Reference::load("LAZYCL_ARRAYS_REFERENCE")?;
    let shapes: &[(usize, usize)] = if quick {
        &[(4096, 1024), (64, 32768)]
    } else {
        &[(65536, 1024), (4096, 32768)]
    };
    let sync = || lz(ctx.synchronize());
    for (k, &(n, d)) in shapes.iter().enumerate() {
        let v: Vec<f32> = (0..n * d)
            .map(|i| ((i * 7919) % 2001) as f32 / 100.0 - 10.0)
            .collect();
        let x = lz(ctx.from_shape_slice([n, d], &v))?;
        let t = per_run(trials, 10, || lz(x.softmax(1).eval().map(drop)), sync)?;
        let name = format!("softmax f32 {n}x{d}");
        let before = ctx.stats().kernels_launched;
        lz(x.softmax(1).eval().map(drop))?;
        let kernels = ctx.stats().kernels_launched - before;
        let label = format!("{name} ({kernels} kernel{})", if kernels == 1 { "" } else { "s" });
        if quick {
            let host = host_seconds(&v, d, false);
            rep.add(
                label,
                tbps(n * d, t) * 1e3,
                tbps(n * d, host) * 1e3,
                "GB/s",
                "a loop on the host",
            );
        } else {
            rep.add(
                label,
                tbps(n * d, t),
                refs.get(&format!("torch {name}"), "tbps"),
                "TB/s",
                "torch.softmax (same call)",
            );
        }
        if k > 0 {
            continue;
        }
        let g = lz(ctx.full([d], 1.5f32))?;
        let b = lz(ctx.full([d], 0.25f32))?;
        let t = per_run(trials, 10, || lz(layer_norm(&x, &g, &b).eval().map(drop)), sync)?;
        let name = format!("layer norm f32 {n}x{d}");
        let before = ctx.stats().kernels_launched;
        lz(layer_norm(&x, &g, &b).eval().map(drop))?;
        let kernels = ctx.stats().kernels_launched - before;
        let label = format!(
            "{name}, written with ops ({kernels} kernel{})",
            if kernels == 1 { "" } else { "s" }
        );
        if quick {
            let host = host_seconds(&v, d, true);
            rep.add(
                label,
                tbps(n * d, t) * 1e3,
                tbps(n * d, host) * 1e3,
                "GB/s",
                "a loop on the host",
            );
        } else {
            rep.add(
                label,
                tbps(n * d, t),
                refs.get(&format!("torch {name}"), "tbps"),
                "TB/s",
                "torch.nn.functional.layer_norm (same call)",
            );
        }
    }
    Ok(())
}
