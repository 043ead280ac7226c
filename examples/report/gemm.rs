//! The report's rows for matrix products: SGEMM and DGEMM, SGEMM with a
//! bias + ReLU epilogue, each in TFLOP/s against cuBLAS measured in the same call by
//! `benches/reference/gemm_reference.py --json` (its output file named by
//! `LAZYCL_GEMM_REFERENCE`; without it the baseline is absent), and small products
//! against ndarray's `dot` on the host (the CPU comparison).

use lazycl::{Array, Context};

use crate::raw::R;
use crate::reference::Reference;
use crate::workloads::kmeans::{make_blobs, Assign, KMeans};
use crate::{lz, median, per_run, Report};

/// Deterministic data in [-1, 1).
fn data(n: usize, seed: u64) -> Vec<f32> {
    (0..n as u64)
        .map(|i| {
            let h = (i ^ seed).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 40;
            (h as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        })
        .collect()
}

/// Adds the GEMM rows.
pub fn rows(rep: &mut Report, ctx: &Context, quick: bool, trials: usize) -> R<()> {
    let refs = Reference::load("LAZYCL_GEMM_REFERENCE")?;
    let sync = || lz(ctx.synchronize());
    let cublas = |name: &str| refs.get(name, "tflops");
    let sizes: &[usize] = if quick { &[512, 1024] } else { &[4096, 8192] };
    for &n in sizes {
        let a = lz(ctx.from_shape_slice([n, n], &data(n * n, 1)))?;
        let b = lz(ctx.from_shape_slice([n, n], &data(n * n, 2)))?;
        let bias = lz(ctx.from_slice(&data(n, 3)))?;
        let flops = 2.0 * (n as f64).powi(3);
        let reps = if n >= 8192 { 3 } else { 10 };
        let plain = per_run(trials, reps, || lz(a.matmul(&b).eval().map(|_| ())), sync)?;
        rep.add(
            format!("SGEMM {n}^3"),
            flops / plain / 1e12,
            cublas(&format!("torch sgemm {n}^3")),
            "TFLOP/s",
            "cuBLAS (torch, TF32 off)",
        );
        let fused = per_run(
            trials,
            reps,
            || lz((&a.matmul(&b) + &bias).max(0.0).eval().map(|_| ())),
            sync,
        )?;
        rep.add(
            format!("SGEMM {n}^3 + bias + ReLU (one kernel)"),
            flops / fused / 1e12,
            cublas(&format!("torch sgemm {n}^3 + bias + relu")),
            "TFLOP/s",
            "cuBLAS (torch, TF32 off)",
        );
        rep.add(
            format!("SGEMM {n}^3 + bias + ReLU vs without"),
            flops / fused / 1e12,
            flops / plain / 1e12,
            "TFLOP/s",
            "lazycl without the epilogue",
        );
        if quick {
            host_row(rep, ctx, &a, &b, n, trials)?;
        }
    }
    let n = if quick { 512 } else { 4096 };
    let to64 = |v: Vec<f32>| v.into_iter().map(f64::from).collect::<Vec<f64>>();
    let a = lz(ctx.from_shape_slice([n, n], &to64(data(n * n, 4))))?;
    let b = lz(ctx.from_shape_slice([n, n], &to64(data(n * n, 5))))?;
    let t = per_run(trials, 5, || lz(a.matmul(&b).eval().map(|_| ())), sync)?;
    rep.add(
        format!("DGEMM {n}^3"),
        2.0 * (n as f64).powi(3) / t / 1e12,
        cublas(&format!("torch dgemm {n}^3")),
        "TFLOP/s",
        "cuBLAS (torch)",
    );
    // k-means steps: the assignment by one product or by broadcast distances, against
    // JAX's jit of the product form.
    let shapes: &[(usize, usize, usize)] = if quick {
        &[(10_000, 64, 32), (100_000, 16, 8)]
    } else {
        &[(100_000, 64, 32), (1_000_000, 16, 8)]
    };
    for &(n, d, k) in shapes {
        let xh = make_blobs(n, d, k);
        let jax = refs.get(&format!("jax jit kmeans step {n}x{d} k={k}"), "ms");
        for assign in [Assign::Gemm, Assign::Broadcast] {
            let mut km = lz(KMeans::new(ctx, &xh, n, d, k, assign))?;
            let t = per_run(trials, 20, || lz(km.step()), sync)?;
            rep.add(
                format!("k-means step {n}x{d}, k={k}, assignment {assign:?}"),
                t * 1e3,
                jax,
                "ms",
                "JAX jit (product form)",
            );
        }
    }
    Ok(())
}

/// The same product by ndarray's `dot` on the host (matrixmultiply), in GFLOP/s.
fn host_row(
    rep: &mut Report,
    ctx: &Context,
    a: &Array<f32>,
    b: &Array<f32>,
    n: usize,
    trials: usize,
) -> R<()> {
    let ha = lz(a.to_ndarray_dim::<ndarray::Ix2>())?;
    let hb = lz(b.to_ndarray_dim::<ndarray::Ix2>())?;
    let flops = 2.0 * (n as f64).powi(3);
    let host = median(
        (0..trials)
            .map(|_| {
                let t = std::time::Instant::now();
                std::hint::black_box(ha.dot(&hb));
                t.elapsed().as_secs_f64()
            })
            .collect(),
    );
    let ours = per_run(
        trials,
        1,
        || lz(a.matmul(b).eval().map(|_| ())),
        || lz(ctx.synchronize()),
    )?;
    rep.add(
        format!("SGEMM {n}^3 vs the host"),
        flops / ours / 1e9,
        flops / host / 1e9,
        "GFLOP/s",
        "ndarray dot",
    );
    Ok(())
}
