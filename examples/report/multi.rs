//! The report's rows for several devices (`--multi`): the fused 8-op chain,
//! `sum(x * x)` and a 3-point stencil on a multi-device context of every device of the
//! first device's platform, against the same work on that first device alone (a plain
//! context), in the same run. With one device the ratio is the multi-device context's
//! own cost (it should be 1.0); with two it is the speed-up; with one device opened
//! twice (`--multi-devices 1:0,1:0`) it is what splitting costs where nothing is gained.
// `s![1..-1]` counts from the end of the axis (ndarray's slices), not an empty range.
#![allow(clippy::reversed_empty_ranges)]

use lazycl::{s, Array, Context, DeviceSelector};

use crate::raw::R;
use crate::{chain8, lz, per_run, Report};

pub fn rows(rep: &mut Report, plain: &Context, devices: Option<&str>, quick: bool, trials: usize) -> R<()> {
    let platform = plain.device().platform_index;
    let selector = match devices {
        Some(text) => lz(DeviceSelector::parse(text))?,
        None => DeviceSelector::Platform(platform),
    };
    let label = format!("on {selector}");
    let multi = lz(Context::multi(selector))?;
    let devices = multi.device_count();
    let n: usize = if quick { 1 << 20 } else { 1 << 29 };
    let host: Vec<f32> = (0..n).map(|i| ((i % 1000) as f32) * 1e-3 - 0.5).collect();
    let reps = if quick { 5 } else { 10 };
    let stencil = |x: &Array<f32>| &x.slice(s![2..]) - 2.0 * &x.slice(s![1..-1]) + &x.slice(s![..-2]);
    let label = format!("{devices} device(s) {label}");
    let mut gbs: Vec<[f64; 3]> = Vec::new();
    for ctx in [plain, &multi] {
        let sync = || lz(ctx.synchronize());
        let x = lz(ctx.from_slice(&host))?;
        let chain = per_run(trials, reps, || lz(chain8(&x).eval().map(drop)), sync)?;
        let sum = per_run(trials, reps, || lz((&x * &x).sum().eval().map(drop)), sync)?;
        let st = per_run(trials, reps, || lz(stencil(&x).eval().map(drop)), sync)?;
        gbs.push([
            8.0 * n as f64 / chain / 1e9,
            4.0 * n as f64 / sum / 1e9,
            8.0 * n as f64 / st / 1e9,
        ]);
        if std::ptr::eq(ctx, &multi) {
            let stats = ctx.stats();
            eprintln!(
                "  multi-device counters: {} copies ({} bytes), {} combines, {} host waits",
                stats.device_copies, stats.device_copy_bytes, stats.device_combines, stats.host_waits
            );
        }
    }
    let names = ["fused 8-op chain f32", "sum(x * x) f32", "3-point stencil f32"];
    for (k, name) in names.iter().enumerate() {
        rep.add(
            format!("{name}, n=2^{}, {label}", n.trailing_zeros()),
            gbs[1][k],
            gbs[0][k],
            "GB/s",
            "one device, plain context",
        );
    }
    Ok(())
}
