//! A k-nearest-neighbour step's selection: the 16 nearest of 65,536 points for each of
//! 4,096 queries, from their squared distances (`f32`, computed on the device once,
//! outside the timings), by `bottomk(16)` — a selection — against the same call on a
//! context whose `Tuning::topk_by_sort` sorts every row whole (the path `topk` took
//! before the selection). Prints both median times, their ratio, and checks that both
//! give the same positions.
//!
//! `cargo bench --bench knn` (release). `LAZYCL_BENCH_KNN=queries,points,k,dims`
//! changes the sizes (default `4096,65536,16,32`), `LAZYCL_BENCH_RUNS` the timed runs
//! of each path (default 10).

use std::time::{Duration, Instant};

use lazycl::prelude::*;
use lazycl::{TopK, Tuning};

/// The problem's sizes.
struct Sizes {
    queries: usize,
    points: usize,
    k: usize,
    dims: usize,
}

fn sizes() -> Sizes {
    let v: Vec<usize> = std::env::var("LAZYCL_BENCH_KNN")
        .ok()
        .map(|s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .unwrap_or_default();
    match v[..] {
        [queries, points, k, dims] => Sizes {
            queries,
            points,
            k,
            dims,
        },
        _ => Sizes {
            queries: 4096,
            points: 65_536,
            k: 16,
            dims: 32,
        },
    }
}

/// Squared distances between random queries and points: `|q|² + |p|² − 2 q·p`,
/// evaluated.
fn distances(ctx: &Context, s: &Sizes) -> Array<f32> {
    let mut rng = ctx.rng(7);
    let q = rng.standard_normal::<f32>([s.queries, s.dims]).expect("queries");
    let p = rng.standard_normal::<f32>([s.points, s.dims]).expect("points");
    let qq = (&q * &q).sum_axis(1).insert_axis(1);
    let pp = (&p * &p).sum_axis(1).insert_axis(0);
    let d = &(&qq + &pp) - &(q.matmul(&p.t()) * 2.0);
    d.eval().expect("distances");
    ctx.synchronize().expect("sync");
    d
}

/// The median time of `runs` calls of `bottomk(k)` on `d`, each waited for, after one
/// untimed call (which builds the programs); and that call's result.
fn time(ctx: &Context, d: &Array<f32>, k: usize, runs: usize) -> (Duration, TopK<f32>) {
    let first = d.bottomk(k).expect("bottomk");
    ctx.synchronize().expect("sync");
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            let r = d.bottomk(k).expect("bottomk");
            ctx.synchronize().expect("sync");
            let e = t.elapsed();
            drop(r);
            e
        })
        .collect();
    times.sort();
    (times[times.len() / 2], first)
}

fn main() {
    // (`cargo bench` passes `--bench`; nothing else is read from the command line.)
    let s = sizes();
    let runs: usize = std::env::var("LAZYCL_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10)
        .max(1);
    let select_ctx = Context::new().expect("an OpenCL device");
    let sort_ctx = Context::builder()
        .tuning(Tuning {
            topk_by_sort: true,
            ..Tuning::default()
        })
        .build()
        .expect("an OpenCL device");
    println!(
        "kNN selection: bottomk({}) of [{}, {}] f32 distances on {}, median of {runs} runs",
        s.k,
        s.queries,
        s.points,
        select_ctx.device().name
    );
    // The same distances on both contexts: computed on one, copied to the other.
    let d = distances(&select_ctx, &s);
    let host = d.to_vec().expect("read the distances");
    let (sorted, by_sort) = {
        let d = sort_ctx
            .from_shape_slice([s.queries, s.points], &host)
            .expect("upload the distances");
        drop(host);
        sort_ctx.synchronize().expect("sync");
        let before = sort_ctx.stats();
        let (t, r) = time(&sort_ctx, &d, s.k, runs);
        let st = sort_ctx.stats() - before;
        println!(
            "  whole sort (Tuning::topk_by_sort): {:>10.3} ms  ({} sort kernels, {} selection kernels per call)",
            t.as_secs_f64() * 1e3,
            st.sort_kernels_launched / (runs as u64 + 1),
            st.select_kernels_launched / (runs as u64 + 1)
        );
        (t, r.indices.to_vec().expect("read"))
    };
    drop(sort_ctx);
    let before = select_ctx.stats();
    let (selected, r) = time(&select_ctx, &d, s.k, runs);
    let st = select_ctx.stats() - before;
    println!(
        "  selection (bottomk):               {:>10.3} ms  ({} sort kernels, {} selection kernels per call)",
        selected.as_secs_f64() * 1e3,
        st.sort_kernels_launched / (runs as u64 + 1),
        st.select_kernels_launched / (runs as u64 + 1)
    );
    let by_select = r.indices.to_vec().expect("read");
    let same = by_select == by_sort;
    println!(
        "  ratio (whole sort / selection):    {:>10.2}x  (same positions: {same})",
        sorted.as_secs_f64() / selected.as_secs_f64()
    );
    assert!(same, "the selection and the whole sort disagree");
}
