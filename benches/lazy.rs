//! The lazy runtime's host overhead and throughput: a cached flush of an 8-op chain at
//! n = 16 (host time, against one raw launch in the report example), and the same chain
//! at a large n fused, op by op, and as a reduction `sum(x*x)`. `cargo bench --bench lazy`.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use lazycl::prelude::*;

fn chain8(x: &Array<f32>) -> Array<f32> {
    ((((((x * 1.5 + 2.0) * x - 0.25).abs() + 1.0).sqrt() * 3.0) / 7.0) - x).tanh()
}

fn lazy(c: &mut Criterion) {
    let ctx = Context::new().expect("an OpenCL device");
    let name = ctx.device().name.clone();
    let small = ctx.from_slice(&[0.5f32; 16]).expect("upload");
    let mut g = c.benchmark_group(format!("lazy on {name}"));
    let mut count = 0u32;
    g.bench_function("cached flush, 8-op chain, n=16 (host time)", |b| {
        b.iter(|| {
            chain8(&small).eval().expect("eval");
            count += 1;
            if count.is_multiple_of(1000) {
                ctx.synchronize().expect("sync");
            }
        })
    });
    let n: usize = std::env::var("LAZYCL_BENCH_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1 << 22);
    let x = ctx
        .from_vec((0..n).map(|i| (i % 1000) as f32 / 1000.0).collect())
        .expect("upload");
    g.throughput(Throughput::Bytes(8 * n as u64));
    g.bench_function(format!("fused 8-op chain, n={n}"), |b| {
        b.iter(|| {
            chain8(&x).eval().expect("eval");
            ctx.synchronize().expect("sync");
        })
    });
    g.bench_function(format!("8-op chain op by op, n={n}"), |b| {
        b.iter(|| {
            let mut y = &x * 1.5;
            y.eval().expect("eval");
            for _ in 0..7 {
                y = (&y + 0.5).abs();
                y.eval().expect("eval");
            }
            ctx.synchronize().expect("sync");
        })
    });
    g.throughput(Throughput::Bytes(4 * n as u64));
    g.bench_function(format!("sum(x*x), n={n}"), |b| {
        b.iter(|| {
            (&x * &x).sum().eval().expect("eval");
            ctx.synchronize().expect("sync");
        })
    });
    g.finish();
}

criterion_group!(benches, lazy);
criterion_main!(benches);
