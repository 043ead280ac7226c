//! The report's rows for array algorithms: scans in GB/s counting one read
//! and one write of the array, and gathers (`take`), against torch and JAX measured in
//! the same call by
//! `benches/reference/arrays_reference.py --json` (its output file named by
//! `LAZYCL_ARRAYS_REFERENCE`); with `--quick` (PoCL), small sizes against a sequential
//! loop on the host.

use lazycl::{Array, Axis, Context, Element};

use crate::raw::R;
use crate::reference::Reference;
use crate::workloads::kmeans::{make_blobs, Assign, KMeans, Update};
use crate::{lz, median, per_run, Report};

/// One scan row: its name (the reference script's), shape and axis.
struct Scan {
    name: String,
    shape: Vec<usize>,
    axis: usize,
}

fn scans(quick: bool) -> Vec<(Scan, bool)> {
    let scan = |name: &str, shape: &[usize], axis: usize| Scan {
        name: name.to_string(),
        shape: shape.to_vec(),
        axis,
    };
    if quick {
        vec![
            (scan("cumsum f32 2^22", &[1 << 22], 0), false),
            (scan("cumsum i32 2^22", &[1 << 22], 0), true),
            (scan("cumsum f32 2048x2048 axis 1", &[2048, 2048], 1), false),
            (scan("cumsum f32 2048x2048 axis 0", &[2048, 2048], 0), false),
            (scan("cumsum f32 16384x256 axis 1", &[16384, 256], 1), false),
        ]
    } else {
        vec![
            (scan("cumsum f32 2^28", &[1 << 28], 0), false),
            (scan("cumsum i32 2^28", &[1 << 28], 0), true),
            (scan("cumsum f32 16384x16384 axis 1", &[16384, 16384], 1), false),
            (scan("cumsum f32 16384x16384 axis 0", &[16384, 16384], 0), false),
            (scan("cumsum f32 1048576x256 axis 1", &[1 << 20, 256], 1), false),
        ]
    }
}

/// Adds the scan rows.
pub fn rows(rep: &mut Report, ctx: &Context, quick: bool, trials: usize) -> R<()> {
    let refs = Reference::load("LAZYCL_ARRAYS_REFERENCE")?;
    for (s, int) in scans(quick) {
        let n: usize = s.shape.iter().product();
        if int {
            let x: Vec<i32> = (0..n).map(|i| (i % 201) as i32 - 100).collect();
            scan_rows(rep, ctx, &refs, &s, &x, quick, trials)?;
        } else {
            let x: Vec<f32> = (0..n).map(|i| (i % 201) as f32 / 100.0 - 1.0).collect();
            scan_rows(rep, ctx, &refs, &s, &x, quick, trials)?;
        }
    }
    take_rows(rep, ctx, &refs, quick, trials)?;
    scatter_rows(rep, ctx, &refs, quick, trials)?;
    kmeans_update_rows(rep, ctx, quick, trials)?;
    crate::sorting::rows(rep, ctx, &refs, quick, trials)?;
    // A producer in the scan's loads: the same bytes moved as the plain scan.
    let s = &scans(quick)[0].0;
    let n: usize = s.shape.iter().product();
    let x = lz(ctx.from_slice(&vec![0.5f32; n]))?;
    let sync = || lz(ctx.synchronize());
    let plain = per_run(trials, 5, || lz(x.cumsum(Axis(0)).eval().map(drop)), sync)?;
    let fused = per_run(
        trials,
        5,
        || lz((&x * 2.0 - 1.0).cumsum(Axis(0)).eval().map(drop)),
        sync,
    )?;
    rep.add(
        format!("{} of (2x - 1), one kernel", s.name),
        gbps(n, 4, fused),
        gbps(n, 4, plain),
        "GB/s",
        "lazycl's plain cumsum",
    );
    // A consumer in the scan's store: the same bytes moved again.
    let consumed = per_run(
        trials,
        5,
        || lz((x.cumsum(Axis(0)) * 2.0 - 1.0).eval().map(drop)),
        sync,
    )?;
    rep.add(
        format!("{}, then 2s - 1 in its store, one kernel", s.name),
        gbps(n, 4, consumed),
        gbps(n, 4, plain),
        "GB/s",
        "lazycl's plain cumsum",
    );
    Ok(())
}

/// Gathers of rows by random indices (u32 here; the references use their own index
/// types and count their bytes): GB/s of the picked elements read and written plus the
/// indices read.
fn take_rows(rep: &mut Report, ctx: &Context, refs: &Reference, quick: bool, trials: usize) -> R<()> {
    let takes: &[(&str, usize, usize, usize)] = if quick {
        &[("take rows f32 65536x64 by 65536 indices", 1 << 16, 64, 1 << 16)]
    } else {
        &[
            (
                "take rows f32 1048576x64 by 1048576 indices",
                1 << 20,
                64,
                1 << 20,
            ),
            ("take f32 2^26 by 2^26 indices", 1 << 26, 1, 1 << 26),
        ]
    };
    for &(name, n, d, m) in takes {
        let x: Vec<f32> = (0..n * d).map(|i| (i % 997) as f32).collect();
        let idx: Vec<u32> = (0..m as u64)
            .map(|i| (i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 40) as u32 % n as u32)
            .collect();
        let shape = if d == 1 { vec![n] } else { vec![n, d] };
        let a: Array<f32> = lz(ctx.from_shape_slice(shape, &x))?;
        let i: Array<u32> = lz(ctx.from_slice(&idx))?;
        let sync = || lz(ctx.synchronize());
        let t = per_run(trials, 5, || lz(a.take(Axis(0), &i).eval().map(drop)), sync)?;
        let ours = (2 * m * d * 4 + m * 4) as f64 / t / 1e9;
        if quick {
            let host = median(
                (0..trials)
                    .map(|_| {
                        let t = std::time::Instant::now();
                        let mut out = Vec::with_capacity(m * d);
                        for &k in &idx {
                            out.extend_from_slice(&x[k as usize * d..(k as usize + 1) * d]);
                        }
                        std::hint::black_box(&out);
                        t.elapsed().as_secs_f64()
                    })
                    .collect(),
            );
            let host = (2 * m * d * 4 + m * 4) as f64 / host / 1e9;
            rep.add(name, ours, host, "GB/s", "a loop on the host");
            continue;
        }
        rep.add(
            name,
            ours,
            refs.get(&format!("torch {name}"), "gbps"),
            "GB/s",
            "torch.index_select (same call)",
        );
        rep.add(
            format!("{name} (against JAX)"),
            ours,
            refs.get(&format!("jax {name}"), "gbps"),
            "GB/s",
            "JAX jit take (same call)",
        );
    }
    Ok(())
}

/// Scatters (rows added into few or many rows) and a histogram, in ms against torch's
/// `index_add_`/`bincount` and JAX's `.at[].add`/`bincount`; with `--quick`, against a
/// loop on the host.
fn scatter_rows(rep: &mut Report, ctx: &Context, refs: &Reference, quick: bool, trials: usize) -> R<()> {
    let hash = |i: u64, k: usize| ((i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 40) as usize % k) as u32;
    let n = if quick { 1 << 16 } else { 1 << 20 };
    let d = 16;
    let sync = || lz(ctx.synchronize());
    for k in [16, n] {
        let name = format!("scatter_add f32 {n}x{d} into {k} rows");
        let src_host: Vec<f32> = (0..n * d).map(|i| (i % 7) as f32).collect();
        let idx_host: Vec<u32> = (0..n as u64).map(|i| hash(i, k)).collect();
        let src: Array<f32> = lz(ctx.from_shape_slice([n, d], &src_host))?;
        let idx: Array<u32> = lz(ctx.from_slice(&idx_host))?;
        let mut dst: Array<f32> = lz(ctx.zeros([k, d]))?;
        let t = per_run(
            trials,
            5,
            || lz(lazycl::scatter_add(&mut dst, Axis(0), &idx, &src)),
            sync,
        )?;
        if quick {
            let host = median(
                (0..trials)
                    .map(|_| {
                        let t = std::time::Instant::now();
                        let mut out = vec![0.0f32; k * d];
                        for (r, &i) in idx_host.iter().enumerate() {
                            for c in 0..d {
                                out[i as usize * d + c] += src_host[r * d + c];
                            }
                        }
                        std::hint::black_box(&out);
                        t.elapsed().as_secs_f64()
                    })
                    .collect(),
            );
            rep.add(name, t * 1e3, host * 1e3, "ms", "a loop on the host");
            continue;
        }
        rep.add(
            name.clone(),
            t * 1e3,
            refs.get(&format!("torch {name}"), "ms"),
            "ms",
            "torch index_add_ (same call)",
        );
        rep.add(
            format!("{name} (against JAX)"),
            t * 1e3,
            refs.get(&format!("jax {name}"), "ms"),
            "ms",
            "JAX jit .at[].add (same call)",
        );
    }
    let (m, bins): (usize, usize) = if quick { (1 << 20, 256) } else { (1 << 24, 256) };
    let name = format!("bincount 2^{} values into {bins} bins", m.trailing_zeros());
    let values: Vec<u32> = (0..m as u64).map(|i| hash(i, bins)).collect();
    let x: Array<u32> = lz(ctx.from_slice(&values))?;
    let t = per_run(trials, 5, || lz(x.bincount(bins).map(drop)), sync)?;
    if quick {
        let host = median(
            (0..trials)
                .map(|_| {
                    let t = std::time::Instant::now();
                    let mut counts = vec![0u64; bins];
                    for &v in &values {
                        counts[v as usize] += 1;
                    }
                    std::hint::black_box(&counts);
                    t.elapsed().as_secs_f64()
                })
                .collect(),
        );
        rep.add(name, t * 1e3, host * 1e3, "ms", "a loop on the host");
        return Ok(());
    }
    rep.add(
        name.clone(),
        t * 1e3,
        refs.get(&format!("torch {name}"), "ms"),
        "ms",
        "torch.bincount (same call)",
    );
    rep.add(
        format!("{name} (against JAX)"),
        t * 1e3,
        refs.get(&format!("jax {name}"), "ms"),
        "ms",
        "JAX jit bincount (same call)",
    );
    Ok(())
}

/// The k-means step with its centroids updated by `scatter_add` + `bincount`, against the
/// same step by one-hot reductions (the examples' default), in ms.
fn kmeans_update_rows(rep: &mut Report, ctx: &Context, quick: bool, trials: usize) -> R<()> {
    let shapes: &[(usize, usize, usize)] = if quick {
        &[(20_000, 16, 16)]
    } else {
        &[(1_000_000, 16, 16), (100_000, 64, 32)]
    };
    let sync = || lz(ctx.synchronize());
    for &(n, d, k) in shapes {
        let x = make_blobs(n, d, k);
        let assign = Assign::for_points(d);
        let time = |update: Update| -> R<f64> {
            let mut km = lz(KMeans::new(ctx, &x, n, d, k, assign))?;
            km.update = update;
            per_run(trials, 20, || lz(km.step()), sync)
        };
        let onehot = time(Update::OneHot)?;
        let scatter = time(Update::Scatter)?;
        rep.add(
            format!("k-means step {n}x{d}, k={k}, centroids by scatter_add + bincount"),
            scatter * 1e3,
            onehot * 1e3,
            "ms",
            "the same step by one-hot reductions",
        );
    }
    Ok(())
}

fn gbps(n: usize, size: usize, seconds: f64) -> f64 {
    2.0 * (n * size) as f64 / seconds / 1e9
}

fn scan_rows<T: Element + lazycl::Numeric + Copy + std::ops::Add<Output = T> + Default>(
    rep: &mut Report,
    ctx: &Context,
    refs: &Reference,
    s: &Scan,
    host: &[T],
    quick: bool,
    trials: usize,
) -> R<()> {
    let n = host.len();
    let size = std::mem::size_of::<T>();
    let x: Array<T> = lz(ctx.from_shape_slice(s.shape.clone(), host))?;
    let sync = || lz(ctx.synchronize());
    let t = per_run(trials, 5, || lz(x.cumsum(Axis(s.axis)).eval().map(drop)), sync)?;
    let ours = gbps(n, size, t);
    if quick {
        rep.add(
            s.name.clone(),
            ours,
            gbps(n, size, host_scan(host, &s.shape, s.axis, trials)),
            "GB/s",
            "a sequential loop on the host",
        );
        return Ok(());
    }
    rep.add(
        s.name.clone(),
        ours,
        refs.get(&format!("torch {}", s.name), "gbps"),
        "GB/s",
        "torch.cumsum (same call)",
    );
    rep.add(
        format!("{} (against JAX)", s.name),
        ours,
        refs.get(&format!("jax {}", s.name), "gbps"),
        "GB/s",
        "JAX jit cumsum (same call)",
    );
    Ok(())
}

/// Seconds of a sequential scan on the host (median of `trials`).
fn host_scan<T: Copy + std::ops::Add<Output = T> + Default>(
    host: &[T],
    shape: &[usize],
    axis: usize,
    trials: usize,
) -> f64 {
    let inner: usize = shape[axis + 1..].iter().product();
    let len = shape[axis];
    let mut out = vec![T::default(); host.len()];
    let times = (0..trials)
        .map(|_| {
            let t = std::time::Instant::now();
            // Row by row of the axis, in memory order: each element adds the one a row
            // before it.
            for (o, chunk) in host.chunks(len * inner).enumerate() {
                let dst = &mut out[o * len * inner..(o + 1) * len * inner];
                dst[..inner].copy_from_slice(&chunk[..inner]);
                for l in 1..len {
                    for c in 0..inner {
                        dst[l * inner + c] = dst[(l - 1) * inner + c] + chunk[l * inner + c];
                    }
                }
            }
            std::hint::black_box(&out);
            t.elapsed().as_secs_f64()
        })
        .collect();
    median(times)
}
