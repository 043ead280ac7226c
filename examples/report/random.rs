//! The report's rows for counter-based random numbers: `random_uniform`,
//! `random_normal` and `random_int` written to memory, and dropout fused with its input,
//! in GB/s counting the bytes that must move (the output written; for dropout also the
//! input read), against a raw write-only kernel (`WRITE4`) and the raw copy.

use lazycl::{Array, Context, Element};
use opencl3::memory::ClMem;

use crate::raw::{Raw, R};
use crate::reference::Reference;
use crate::{lz, per_run, Report};

/// GB/s of `bytes` moved in `seconds`.
fn gbps(bytes: usize, seconds: f64) -> f64 {
    bytes as f64 / seconds / 1e9
}

/// FNV-1a of the bytes of `v`'s elements.
fn fnv<T: Element>(v: &[T]) -> u64 {
    // SAFETY: elements are plain values without padding.
    let bytes = unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), std::mem::size_of_val(v)) };
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

/// Prints (to stderr) hashes of draws that must be bit-identical on every device, and a
/// few normals, to compare between devices: `check <what> <value>`.
pub fn check(ctx: &Context) -> R<()> {
    let mut rng = ctx.rng(5);
    rng.set_offset(3);
    let u = lz(rng.random::<f32>([97, 103]))?;
    eprintln!("check uniform-f32 {:016x}", fnv(&lz(u.to_vec())?));
    eprintln!("check uniform-f32-t {:016x}", fnv(&lz(u.t().to_vec())?));
    let d = lz(ctx.random_uniform::<f64>([10_007], 6))?;
    eprintln!("check uniform-f64 {:016x}", fnv(&lz(d.to_vec())?));
    let i = lz(ctx.random_int([10_007], -7i32, 1_000_003, 7))?;
    eprintln!("check int-i32 {:016x}", fnv(&lz(i.to_vec())?));
    let l = lz(ctx.random_int([10_007], 0u64, u64::MAX, 8))?;
    eprintln!("check int-u64 {:016x}", fnv(&lz(l.to_vec())?));
    let z = lz(lz(ctx.random_normal::<f32>([10_007], 9))?.to_vec())?;
    let zd = lz(lz(ctx.random_normal::<f64>([10_007], 9))?.to_vec())?;
    eprintln!("check normal-f32 {:?}", &z[..6]);
    eprintln!("check normal-f64 {:?}", &zd[..6]);
    let sum: f64 = z.iter().map(|&v| f64::from(v)).sum();
    eprintln!(
        "check normal-f32-sum {sum:.6} normal-f64-sum {:.12}",
        zd.iter().sum::<f64>()
    );
    Ok(())
}

pub fn rows(rep: &mut Report, ctx: &Context, raw: &Raw, quick: bool, trials: usize) -> R<()> {
    check(ctx)?;
    let n: usize = if quick { 1 << 22 } else { 1 << 28 };
    let reps = if quick { 5 } else { 20 };
    let cu = ctx.device().compute_units as usize;
    let g4 = (n / 4).min(cu * 2048).div_ceil(256) * 256;
    // The baseline: writing n floats, four per work-item and step.
    let b = raw.empty::<f32>(n)?;
    let w4 = raw.kernel(WRITE4, "write4")?;
    raw.set_mem(&w4, 0, b.get())?;
    raw.set(&w4, 1, &((n / 4) as u32))?;
    let tw = per_run(
        trials,
        reps,
        || raw.enqueue_no_event(&w4, g4, Some(256)),
        || raw.finish(),
    )?;
    let write = gbps(4 * n, tw);
    let sync = || lz(ctx.synchronize());
    let log = n.trailing_zeros();
    // Each draw: a new seed every call (kernel arguments: nothing is built or planned).
    let mut seed = 0u64;
    let mut row = |rep: &mut Report, name: String, size: usize, f: &mut dyn FnMut(u64) -> R<()>| -> R<f64> {
        let t = per_run(
            trials,
            reps,
            || {
                seed += 1;
                f(seed)
            },
            sync,
        )?;
        rep.add(name, gbps(size * n, t), write, "GB/s", "raw write of f32");
        Ok(t)
    };
    fn eval<T: Element>(a: lazycl::Result<Array<T>>) -> R<()> {
        lz(lz(a)?.eval().map(|_| ()))
    }
    let name = format!("random_uniform f32 2^{log}");
    let t = row(rep, name.clone(), 4, &mut |s| {
        eval(ctx.random_uniform::<f32>([n], s))
    })?;
    if !quick {
        let refs = Reference::load("LAZYCL_ARRAYS_REFERENCE")?;
        rep.add(
            format!("{name} (TB/s)"),
            gbps(4 * n, t) / 1e3,
            refs.get(&format!("torch {name}"), "tbps"),
            "TB/s",
            "torch.rand (same call)",
        );
    }
    row(rep, format!("random_normal f32 2^{log}"), 4, &mut |s| {
        eval(ctx.random_normal::<f32>([n], s))
    })?;
    row(rep, format!("random_int u32 [0, 1000) 2^{log}"), 4, &mut |s| {
        eval(ctx.random_int([n], 0u32, 1000, s))
    })?;
    row(rep, format!("random_uniform f64 2^{}", log - 1), 4, &mut |s| {
        eval(ctx.random_uniform::<f64>([n / 2], s))
    })?;
    // Dropout: read x, write the result; no random array.
    let x = lz(ctx.full([n], 1.5f32))?;
    let p = 0.1f32;
    row(rep, format!("dropout f32 2^{log} (read + write)"), 8, &mut |s| {
        let u = lz(ctx.random_uniform::<f32>([n], s))?;
        lz(u.lt(1.0 - p).select(&x / (1.0 - p), 0.0f32).eval().map(|_| ()))
    })?;
    Ok(())
}

/// Writes `n4` float4s (grid-stride): the device's write bandwidth.
pub const WRITE4: &str = "__kernel void write4(__global float4* b, const uint n4) {
    for (uint i = get_global_id(0); i < n4; i += get_global_size(0)) b[i] = (float4)((float)i);
}";
