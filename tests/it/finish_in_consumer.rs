//! A reduction split into segments is finished by the elementwise kernel that reads its
//! result (`w - lr * g` after `g = x.sum_axis(0)`): no combine pass, one launch fewer,
//! the same results as the host for sums, means, maxima and minima in f32, f64 and i32,
//! odd shapes, consumers of several dims and outputs, a result that later kernels read
//! too, a result returned to the user, and random consumer chains (proptest; their case
//! count grows with `LAZYCL_PROPTEST_CASES`).

use std::sync::atomic::{AtomicU32, Ordering};

use crate::common::{cases, check_property, ctx, rng, Random};
use lazycl::{Array, Context};
use proptest::prelude::*;

/// Column reductions of a `rows x cols` matrix, big enough for several segments.
const SHAPES: [(usize, usize); 4] = [(20_000, 100), (40_000, 33), (9_001, 37), (50_000, 64)];

/// Whether the plan of `a` (a consumer of one split reduction) has the consumer finish
/// the reduction. It never has a combine pass: the reduction's last work-group finishes
/// it (when each of its work-items has few partials to read) or the consumer does.
fn finished_by_consumer<T: lazycl::Element>(a: &Array<T>) -> bool {
    let plan = a.explain().unwrap();
    assert!(!plan.contains("plus a combine pass"), "{plan}");
    let by_consumer = plan.contains("combined by the kernel that reads the result");
    assert_eq!(
        by_consumer,
        plan.contains("finishes the split reduction"),
        "{plan}"
    );
    by_consumer
}

/// PoCL gives these shapes a combine pass (so the consumer finishes them); a GPU may
/// finish some in the reduction's kernel instead.
fn on_cpu(ctx: &Context) -> bool {
    ctx.device().device_type != lazycl::DeviceType::Gpu
}

#[test]
fn column_sums_are_finished_by_their_consumer() {
    let ctx = ctx();
    let mut by_consumer = 0;
    for (k, &(rows, cols)) in SHAPES.iter().enumerate() {
        let mut r = rng(70 + k as u64);
        let xs = f64::random_vec(&mut r, rows * cols);
        let ws = f64::random_vec(&mut r, cols);
        let x = ctx.from_shape_slice([rows, cols], &xs).unwrap();
        let w = ctx.from_slice(&ws).unwrap();
        let g = x.sum_axis(0);
        let step = &w - &(&g * 0.001 + &w * 0.5);
        by_consumer += usize::from(finished_by_consumer(&step));
        let before = ctx.stats();
        let got = step.to_vec().unwrap();
        let d = ctx.stats() - before;
        assert_eq!(
            d.kernels_launched, 2,
            "{rows}x{cols}: the reduction and its consumer: {d:?}"
        );
        let hg: Vec<f64> = (0..cols)
            .map(|j| (0..rows).map(|i| xs[i * cols + j]).sum())
            .collect();
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs().max(1.0);
        for j in 0..cols {
            let want = ws[j] - (hg[j] * 0.001 + ws[j] * 0.5);
            assert!(close(got[j], want), "{rows}x{cols}[{j}]: {} vs {want}", got[j]);
        }
        // The reduction's own array holds the result too.
        let gv = g.to_vec().unwrap();
        for j in 0..cols {
            assert!(
                close(gv[j], hg[j]),
                "{rows}x{cols} g[{j}]: {} vs {}",
                gv[j],
                hg[j]
            );
        }
    }
    if on_cpu(&ctx) {
        assert!(
            by_consumer >= 3,
            "{by_consumer} of the shapes were finished by the consumer"
        );
    }
}

#[test]
fn means_maxima_and_integers_are_finished_by_their_consumer() {
    let ctx = ctx();
    let (rows, cols) = (20_001, 100);
    let mut r = rng(80);
    let xf = f32::random_vec(&mut r, rows * cols);
    let xi: Vec<i32> = xf.iter().map(|v| (*v * 10.0) as i32).collect();
    let x = ctx.from_shape_slice([rows, cols], &xf).unwrap();
    let xi_a = ctx.from_shape_slice([rows, cols], &xi).unwrap();
    let mean = x.mean_axis(0) * 2.0f32;
    let max = x.amax_axis(0) - 1.0f32;
    let isum = xi_a.sum_axis(0) + 7;
    let by_consumer = [
        finished_by_consumer(&mean),
        finished_by_consumer(&max),
        finished_by_consumer(&isum),
    ];
    if on_cpu(&ctx) {
        assert_eq!(by_consumer, [true; 3]);
    }
    let (mv, xv, iv) = (
        mean.to_vec().unwrap(),
        max.to_vec().unwrap(),
        isum.to_vec().unwrap(),
    );
    for j in 0..cols {
        let col = || (0..rows).map(|i| f64::from(xf[i * cols + j]));
        let want_mean = col().sum::<f64>() / rows as f64 * 2.0;
        assert!(
            (f64::from(mv[j]) - want_mean).abs() < 1e-3,
            "mean[{j}]: {} vs {want_mean}",
            mv[j]
        );
        let want_max = col().fold(f64::MIN, f64::max) - 1.0;
        assert_eq!(f64::from(xv[j]), want_max, "max[{j}]");
        let want_int = (0..rows)
            .fold(0i32, |a, i| a.wrapping_add(xi[i * cols + j]))
            .wrapping_add(7);
        assert_eq!(iv[j], want_int, "int[{j}]");
    }
}

/// A result read by its consumer and then by later kernels of the same flush (a
/// broadcast over the rows), evaluated together with it: every kernel sees the finished
/// values, and the flush has no combine pass. (Only the first kernel that reads the
/// result may finish it; in this flush that is the consumer.)
#[test]
fn later_readers_see_the_finished_result() {
    let ctx = ctx();
    let (rows, cols) = (50_000, 64);
    let mut r = rng(90);
    let xs = f32::random_vec(&mut r, rows * cols);
    let x = ctx.from_shape_slice([rows, cols], &xs).unwrap();
    let g = x.sum_axis(0);
    let scaled = &g * 0.5f32;
    let centered = &x - &(&g * (1.0 / rows as f32));
    let alone = centered.explain().unwrap();
    assert!(
        !alone.contains("finishes the split reduction"),
        "a broadcast of the result does not finish it:\n{alone}"
    );
    let before = ctx.stats();
    lazycl::eval(&(&centered, &scaled, &g)).unwrap();
    let d = ctx.stats() - before;
    if on_cpu(&ctx) {
        // The reduction, its consumer and the broadcast; a combine pass would make four.
        assert_eq!(d.kernels_launched, 3, "{d:?}");
    }
    let hg: Vec<f64> = (0..cols)
        .map(|j| (0..rows).map(|i| f64::from(xs[i * cols + j])).sum())
        .collect();
    let (sv, gv, cv) = (
        scaled.to_vec().unwrap(),
        g.to_vec().unwrap(),
        centered.to_vec().unwrap(),
    );
    for j in 0..cols {
        assert!(
            (f64::from(gv[j]) - hg[j]).abs() < 1e-2,
            "g[{j}]: {} vs {}",
            gv[j],
            hg[j]
        );
        assert!((f64::from(sv[j]) - hg[j] * 0.5).abs() < 1e-2, "scaled[{j}]");
    }
    for (i, c) in cv.iter().enumerate().step_by(97) {
        let want = f64::from(xs[i]) - hg[i % cols] / rows as f64;
        assert!(
            (f64::from(*c) - want).abs() < 1e-3,
            "centered[{i}]: {c} vs {want}"
        );
    }
}

/// A consumer of several dims (the result `[k, d]` with a `[k, 1]` input broadcast along
/// it, as in k-means' centroid update) and with two outputs.
#[test]
fn consumers_of_several_dims_and_outputs_finish_the_reduction() {
    let ctx = ctx();
    let (n, k, d) = (20_000, 8, 12);
    let mut r = rng(100);
    let xs = f32::random_vec(&mut r, n * k * d);
    let counts: Vec<f32> = (0..k).map(|j| 1.0 + j as f32).collect();
    let cs = f32::random_vec(&mut r, k * d);
    let x = ctx.from_shape_slice([n, k, d], &xs).unwrap();
    let count = ctx.from_shape_slice([k, 1], &counts).unwrap();
    let c = ctx.from_shape_slice([k, d], &cs).unwrap();
    let sums = x.sum_axis(0);
    let update = &sums / &count + &c * 0.5f32;
    let twice = &sums * 2.0f32;
    let used = finished_by_consumer(&update);
    let before = ctx.stats();
    lazycl::eval(&(&update, &twice)).unwrap();
    let d_stats = ctx.stats() - before;
    if on_cpu(&ctx) {
        assert!(used);
        // The reduction and one kernel for both outputs.
        assert_eq!(d_stats.kernels_launched, 2, "{d_stats:?}");
    }
    let (uv, tv) = (update.to_vec().unwrap(), twice.to_vec().unwrap());
    for e in 0..k * d {
        let s: f64 = (0..n).map(|i| f64::from(xs[i * k * d + e])).sum();
        let want = s / f64::from(counts[e / d]) + f64::from(cs[e]) * 0.5;
        assert!(
            (f64::from(uv[e]) - want).abs() < 1e-2,
            "update[{e}]: {} vs {want}",
            uv[e]
        );
        assert!(
            (f64::from(tv[e]) - 2.0 * s).abs() < 2e-2,
            "twice[{e}]: {} vs {}",
            tv[e],
            2.0 * s
        );
    }
}

/// A random case of [`random_consumers_finish_random_reductions`]: the element type, the
/// matrix's shape, the reduction (sum, mean, maximum, minimum; an i32 mean is a sum), the
/// consumer's steps and the seed of the values.
#[derive(Clone, Debug)]
struct ConsumerCase {
    float: bool,
    rows: usize,
    cols: usize,
    op: u32,
    steps: Vec<u32>,
    seed: u64,
}

/// Random cases: a column sum, mean, maximum or minimum of a tall random matrix (f32 or
/// i32, rows and columns of random length), consumed by a random chain of elementwise
/// operations with a same-shape input, a row-broadcast input and a scalar, against the
/// host. `LAZYCL_PROPTEST_CASES / 30` cases (default 8); proptest inputs with a fixed
/// seed, so a failing case shrinks toward fewer steps and a smaller matrix.
#[test]
fn random_consumers_finish_random_reductions() {
    let ctx = ctx();
    let cases = match cases("LAZYCL_PROPTEST_CASES", 0) {
        0 => 8,
        c => (c / 30).max(1),
    };
    let inputs = (
        any::<bool>(),
        13_000..17_000usize,
        96..140usize,
        0..4u32,
        prop::collection::vec(0..5u32, 1..4),
        any::<u64>(),
    )
        .prop_map(|(float, rows, cols, op, steps, seed)| ConsumerCase {
            float,
            rows,
            cols,
            op,
            steps,
            seed,
        });
    let finished = AtomicU32::new(0);
    check_property(200, cases, inputs, |case| {
        let r = &mut rng(case.seed);
        let by_consumer = if case.float {
            float_case(&ctx, r, case.rows, case.cols, case.op, &case.steps)
        } else {
            int_case(&ctx, r, case.rows, case.cols, case.op, &case.steps)
        };
        finished.fetch_add(u32::from(by_consumer), Ordering::Relaxed);
    });
    // (Every case has no combine pass, `finished_by_consumer` asserts; where each of the
    // reduction's work-items has few partials, its last work-group finishes it instead.)
    let finished = finished.into_inner();
    if on_cpu(&ctx) {
        assert!(
            finished * 2 >= cases,
            "{finished} of {cases} cases finished by their consumer"
        );
    }
}

/// One f32 case; returns whether the consumer finished the reduction.
fn float_case(
    ctx: &Context,
    r: &mut rand::rngs::StdRng,
    rows: usize,
    cols: usize,
    op: u32,
    steps: &[u32],
) -> bool {
    let xs = f32::random_vec(r, rows * cols);
    let (ws, ys) = (f32::random_vec(r, cols), f32::random_vec(r, 1));
    let x = ctx.from_shape_slice([rows, cols], &xs).unwrap();
    let w = ctx.from_slice(&ws).unwrap();
    let y = ctx.from_shape_slice([1, 1], &ys).unwrap();
    let (mut dev, name) = match op {
        0 => (x.sum_axis(0), "sum"),
        1 => (x.mean_axis(0), "mean"),
        2 => (x.amax_axis(0), "max"),
        _ => (x.amin_axis(0), "min"),
    };
    let mut host: Vec<f64> = (0..cols)
        .map(|j| {
            let col = (0..rows).map(|i| f64::from(xs[i * cols + j]));
            match op {
                0 => col.sum(),
                1 => col.sum::<f64>() / rows as f64,
                2 => col.fold(f64::MIN, f64::max),
                _ => col.fold(f64::MAX, f64::min),
            }
        })
        .collect();
    // Each element's error bound: the reduction's rounding (a sum's at most `rows`
    // roundings of values up to 100 in f32; a mean's that over `rows`; max and min are
    // exact), carried through the steps, each adding its own rounding. An element whose
    // comparison (step 3) is within its bound of flipping is not checked after that.
    let sum_err = rows as f64 * 100.0 * 2.0 * f64::from(f32::EPSILON);
    let first = match op {
        0 => sum_err,
        1 => sum_err / rows as f64,
        _ => 0.0,
    };
    let mut err = vec![first; cols];
    let mut checked = vec![true; cols];
    let yv = f64::from(ys[0]);
    for &s in steps {
        let d: Array<f32> = match s {
            0 => &dev * &w + &y,
            1 => (&dev - &w).abs(),
            2 => dev.max(&w) * 0.5f32,
            3 => dev.lt(&w).select(&dev, &(&w * 2.0f32)),
            _ => &dev / &(w.abs() + 1.0f32),
        };
        dev = d;
        for j in 0..cols {
            let (g, wj) = (host[j], f64::from(ws[j]));
            let (value, grown) = match s {
                0 => (g * wj + yv, err[j] * wj.abs()),
                1 => ((g - wj).abs(), err[j]),
                2 => (g.max(wj) * 0.5, err[j]),
                3 => {
                    if (g - wj).abs() <= err[j] {
                        checked[j] = false;
                    }
                    (if g < wj { g } else { wj * 2.0 }, err[j])
                }
                _ => (g / (wj.abs() + 1.0), err[j]),
            };
            host[j] = value;
            err[j] = grown + 4.0 * value.abs() * f64::from(f32::EPSILON);
        }
    }
    let used = finished_by_consumer(&dev);
    let got = dev.to_vec().unwrap();
    for j in (0..cols).filter(|&j| checked[j]) {
        let (g, h) = (f64::from(got[j]), host[j]);
        assert!(
            (g - h).abs() <= err[j] + 1e-6,
            "{name} {rows}x{cols} steps {steps:?} [{j}]: {g} vs {h} (bound {})",
            err[j]
        );
    }
    used
}

/// One i32 case (wrapping sums, exact); returns whether the consumer finished the
/// reduction.
fn int_case(
    ctx: &Context,
    r: &mut rand::rngs::StdRng,
    rows: usize,
    cols: usize,
    op: u32,
    steps: &[u32],
) -> bool {
    let xs = i32::random_vec(r, rows * cols);
    let ws: Vec<i32> = i32::random_vec(r, cols).iter().map(|v| v % 1000).collect();
    let x = ctx.from_shape_slice([rows, cols], &xs).unwrap();
    let w = ctx.from_slice(&ws).unwrap();
    let (mut dev, name) = match op {
        0 | 1 => (x.sum_axis(0), "sum"),
        2 => (x.amax_axis(0), "max"),
        _ => (x.amin_axis(0), "min"),
    };
    let mut host: Vec<i32> = (0..cols)
        .map(|j| {
            let col = (0..rows).map(|i| xs[i * cols + j]);
            match op {
                0 | 1 => col.fold(0i32, i32::wrapping_add),
                2 => col.max().unwrap_or(0),
                _ => col.min().unwrap_or(0),
            }
        })
        .collect();
    for &s in steps {
        let (d, h): (Array<i32>, fn(i32, i32) -> i32) = match s {
            0 => (&dev * &w + 7, |g, w| g.wrapping_mul(w).wrapping_add(7)),
            1 => (&dev - &w, |g, w| g.wrapping_sub(w)),
            2 => (dev.max(&w), |g, w| g.max(w)),
            3 => (dev.lt(&w).select(&dev, &w), |g, w| if g < w { g } else { w }),
            _ => (dev.min(&w) + &w, |g, w| g.min(w).wrapping_add(w)),
        };
        dev = d;
        host = host.iter().zip(&ws).map(|(&g, &w)| h(g, w)).collect();
    }
    let used = finished_by_consumer(&dev);
    assert_eq!(
        dev.to_vec().unwrap(),
        host,
        "{name} {rows}x{cols} steps {steps:?}"
    );
    used
}
