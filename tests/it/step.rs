//! Captured steps (`Context::capture`): runs launch the traced kernels with new inputs
//! and record nothing. Every run's result is checked against a host reference (a run
//! that kept an old input, output or scalar would fail), and the counters say what ran.

use crate::common::{ctx, rng, Random};
use lazycl::prelude::*;
use lazycl::{s, Array, Error};

#[kernel]
fn double_in_place(x: &mut [f32]) {
    let i = global_id(0);
    if i < x.len() {
        x[i] *= 2.0;
    }
}

fn close(got: &[f32], want: &[f64], tol: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}");
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g as f64 - w).abs() <= tol * (1.0 + w.abs()),
            "{what}, element {i}: {g} vs {w}"
        );
    }
}

/// Host reference of the logistic-regression step below, on rows of `d` features.
fn host_step(x: &[f32], y: &[f32], w: &mut [f64], b: &mut f64, d: usize, lr: f64) {
    let n = y.len();
    let r: Vec<f64> = (0..n)
        .map(|i| {
            let z: f64 = (0..d).map(|j| x[i * d + j] as f64 * w[j]).sum::<f64>() + *b;
            1.0 / (1.0 + (-z).exp()) - y[i] as f64
        })
        .collect();
    for (j, wj) in w.iter_mut().enumerate() {
        let g: f64 = (0..n).map(|i| x[i * d + j] as f64 * r[i]).sum();
        *wj -= lr * g / n as f64;
    }
    *b -= lr * r.iter().sum::<f64>() / n as f64;
}

/// A logistic-regression step (a row reduction, a column reduction, a mean and the
/// updates: several kernels) captured over its parameters, run many times on random
/// data of several shapes, odd sizes and one row; each shape traces once.
#[test]
fn a_captured_step_matches_the_host_every_run() {
    let ctx = ctx();
    let mut r = rng(7);
    for (n, d) in [(1, 1), (37, 5), (200, 13), (1000, 3)] {
        let xh: Vec<f32> = f32::random_vec(&mut r, n * d).iter().map(|v| v / 50.0).collect();
        let yh: Vec<f32> = (0..n).map(|i| (i % 2) as f32).collect();
        let x = ctx.from_shape_slice([n, d], &xh).unwrap();
        let y = ctx.from_shape_slice([n, 1], &yh).unwrap();
        let lr = 0.5f32;
        let step = ctx.capture(|(w, b): (Array<f32>, Array<f32>)| {
            let z = (&x * &w).sum_axes(&[1], true) + &b;
            let res = (-&z).exp().recip_plus_one() - &y;
            let g = (&x * &res).sum_axis(0);
            Ok((&w - g * (lr / n as f32), (&b - &res * lr).mean_axis(0)))
        });
        let (mut w, mut b) = (ctx.zeros::<f32>([d]).unwrap(), ctx.zeros::<f32>([1]).unwrap());
        let (mut wh, mut bh) = (vec![0.0f64; d], 0.0f64);
        let before = ctx.stats();
        let mut per_run = None;
        for run in 0..12 {
            let s0 = ctx.stats();
            (w, b) = step.run((&w, &b)).unwrap();
            let ds = ctx.stats() - s0;
            if run > 0 {
                assert_eq!(
                    (ds.steps_replayed, ds.flushes_planned, ds.plans_reused),
                    (1, 0, 0),
                    "{ds}"
                );
                assert_eq!((ds.host_waits, ds.programs_built), (0, 0), "{ds}");
                // Every run launches what the trace launched.
                assert_eq!(*per_run.get_or_insert(ds.kernels_launched), ds.kernels_launched);
            }
            host_step(&xh, &yh, &mut wh, &mut bh, d, lr as f64);
            close(&w.to_vec().unwrap(), &wh, 2e-4, &format!("w, {n}x{d}, run {run}"));
            close(
                &b.to_vec().unwrap(),
                &[bh],
                2e-4,
                &format!("b, {n}x{d}, run {run}"),
            );
        }
        let d = ctx.stats() - before;
        assert_eq!(d.steps_replayed, 11, "{d}");
    }
}

/// `1 / (1 + x)`, the logistic function's last steps, as user code writes it.
trait RecipPlusOne {
    fn recip_plus_one(&self) -> Self;
}

impl RecipPlusOne for Array<f32> {
    fn recip_plus_one(&self) -> Self {
        1.0f32 / (self + 1.0f32)
    }
}

/// A hundred runs of a one-kernel step plan nothing and build nothing; new input shapes
/// trace again, and the old shapes still replay.
#[test]
fn runs_replay_and_new_shapes_trace() {
    let ctx = ctx();
    let c = ctx.from_slice(&[0.5f32, 1.5, 2.0]).unwrap();
    let step = ctx.capture(|x: Array<f32>| Ok((&x * 2.0f32 + 1.0f32).sqrt() * &c.sum()));
    let mut r = rng(3);
    for round in 0..2 {
        for n in [5usize, 0, 1, 7] {
            let host: Vec<f32> = f32::random_vec(&mut r, n).iter().map(|v| v.abs()).collect();
            let x = ctx.from_slice(&host).unwrap();
            let s0 = ctx.stats();
            let mut out = step.run(&x).unwrap();
            for _ in 0..99 {
                out = step.run(&x).unwrap();
            }
            let d = ctx.stats() - s0;
            let traced = u64::from(round == 0);
            assert_eq!(d.steps_replayed, 100 - traced, "n = {n}, round {round}: {d}");
            assert_eq!(d.flushes_planned + d.plans_reused, traced, "{d}");
            let want: Vec<f64> = host
                .iter()
                .map(|&v| (v as f64 * 2.0 + 1.0).sqrt() * 4.0)
                .collect();
            close(&out.to_vec().unwrap(), &want, 1e-5, &format!("n = {n}"));
        }
    }
    assert!(format!("{step:?}").contains("traced_inputs"));
}

/// The same array passed as two inputs, or as an input and read by the closure besides,
/// is traced from copies: later runs with different arrays read each where it belongs.
#[test]
fn inputs_that_share_memory_at_trace_stay_apart_later() {
    let ctx = ctx();
    let a = ctx.from_slice(&[1.0f32, 2.0, 3.0]).unwrap();
    let b = ctx.from_slice(&[10.0f32, 20.0, 30.0]).unwrap();
    let step = ctx.capture(|(x, y): (Array<f32>, Array<f32>)| Ok(&x * 100.0f32 + &y));
    assert_eq!(
        step.run((&a, &a)).unwrap().to_vec().unwrap(),
        [101.0, 202.0, 303.0]
    );
    assert_eq!(
        step.run((&a, &b)).unwrap().to_vec().unwrap(),
        [110.0, 220.0, 330.0]
    );
    assert_eq!(
        step.run((&b, &a)).unwrap().to_vec().unwrap(),
        [1001.0, 2002.0, 3003.0]
    );

    let reads_a = ctx.capture(|x: Array<f32>| Ok(&x - &a));
    assert_eq!(reads_a.run(&a).unwrap().to_vec().unwrap(), [0.0, 0.0, 0.0]);
    assert_eq!(reads_a.run(&b).unwrap().to_vec().unwrap(), [9.0, 18.0, 27.0]);
}

/// Outputs may be inputs, arrays the closure read, or one array twice; lazy inputs are
/// evaluated first; element types may differ.
#[test]
fn outputs_of_every_kind() {
    let ctx = ctx();
    let c = ctx.from_slice(&[7i32, 8]).unwrap();
    let step = ctx.capture(|(x, k): (Array<f32>, Array<i32>)| {
        let y = &x * 3.0f32;
        Ok((x, c.clone(), y.clone(), y, k.gt(7)))
    });
    for (xs, ks) in [([1.0f32, 2.0], [7i32, 9]), ([-1.0, 0.5], [8, 6])] {
        let x = ctx.from_slice(&xs).unwrap();
        let lazy_k = ctx.from_slice(&ks).unwrap() + 0; // evaluated before the run
        let (x_out, c_out, y1, y2, big) = step.run((&x, &lazy_k)).unwrap();
        assert_eq!(x_out.to_vec().unwrap(), xs);
        assert_eq!(c_out.to_vec().unwrap(), [7, 8]);
        assert_eq!(y1.to_vec().unwrap(), [xs[0] * 3.0, xs[1] * 3.0]);
        assert_eq!(y2.to_vec().unwrap(), y1.to_vec().unwrap());
        assert_eq!(big.to_vec().unwrap(), [ks[0] > 7, ks[1] > 7]);
    }
}

/// Bad steps are errors, never panics: random numbers (they would repeat), an array
/// evaluated inside the closure (its traced value would stay), arrays of another context, the closure's own errors, recording errors.
#[test]
fn bad_steps_are_errors() {
    let ctx = ctx();
    let x = ctx.from_slice(&[1.0f32, 2.0]).unwrap();
    let dropout = ctx.capture(|x: Array<f32>| {
        let keep = ctx.random_uniform::<f32>([2], 1)?.lt(0.5f32).cast::<f32>();
        Ok(&x * keep)
    });
    match dropout.run(&x) {
        Err(Error::InvalidStep { reason }) => assert!(reason.contains("random"), "{reason}"),
        other => panic!("expected InvalidStep, got {other:?}"),
    }
    let evaluates = ctx.capture(|x: Array<f32>| {
        let y = &x * 2.0f32;
        y.eval()?;
        Ok(&y + 1.0f32)
    });
    match evaluates.run(&x) {
        Err(Error::InvalidStep { reason }) => assert!(reason.contains("an evaluation"), "{reason}"),
        other => panic!("expected InvalidStep, got {other:?}"),
    }
    let other = lazycl::Context::new().unwrap();
    let y = other.from_slice(&[1.0f32, 2.0]).unwrap();
    let step = ctx.capture(|x: Array<f32>| Ok(&x + 1.0f32));
    assert!(matches!(step.run(&y), Err(Error::ContextMismatch { .. })));
    let failing = ctx.capture(|_: Array<f32>| -> lazycl::Result<Array<f32>> {
        Err(Error::InvalidShape("the user's own error".into()))
    });
    assert!(matches!(failing.run(&x), Err(Error::InvalidShape(_))));
    let three = ctx.from_slice(&[1.0f32, 2.0, 3.0]).unwrap();
    let mismatched = ctx.capture(|x: Array<f32>| Ok(&x + &three));
    assert!(matches!(mismatched.run(&x), Err(Error::ShapeMismatch { .. })));
    // The step still works on inputs that fit.
    assert_eq!(mismatched.run(&three).unwrap().to_vec().unwrap(), [2.0, 4.0, 6.0]);
}

/// A host value passed as an input (`0.5f32`, or a lazy `ctx.scalar(v)`) is bound as a
/// kernel argument: each run reads its own value (a replay of the traced one would
/// fail), uploads nothing and launches only the step's kernel. An array in its place,
/// of one element or a materialized 0-d one, is memory, traced apart.
#[test]
fn host_values_are_bound_as_arguments() {
    let ctx = ctx();
    let mut r = rng(11);
    let n = 37;
    let (wh, gh) = (f32::random_vec(&mut r, n), f32::random_vec(&mut r, n));
    let (w, g) = (ctx.from_slice(&wh).unwrap(), ctx.from_slice(&gh).unwrap());
    let step = ctx.capture(|(w, g, lr): (Array<f32>, Array<f32>, Array<f32>)| Ok(&w - &g * &lr));
    let want = |lr: f32| -> Vec<f64> {
        wh.iter()
            .zip(&gh)
            .map(|(&w, &g)| w as f64 - g as f64 * lr as f64)
            .collect()
    };
    let traced = step.run((&w, &g, 0.5f32)).unwrap();
    close(&traced.to_vec().unwrap(), &want(0.5), 1e-5, "traced");
    for lr in [0.25f32, -1.5, 3.0, 0.0] {
        let s0 = ctx.stats();
        let out = step.run((&w, &g, lr)).unwrap();
        let d = ctx.stats() - s0;
        assert_eq!(
            (
                d.steps_replayed,
                d.kernels_launched,
                d.flushes_planned,
                d.plans_reused
            ),
            (1, 1, 0, 0),
            "lr = {lr}: {d}"
        );
        assert_eq!(
            (d.bytes_uploaded, d.programs_built, d.host_waits),
            (0, 0, 0),
            "{d}"
        );
        close(&out.to_vec().unwrap(), &want(lr), 1e-5, &format!("lr = {lr}"));
    }
    // Empty and one-element arrays beside a host value.
    for len in [0usize, 1] {
        let (w0, g0) = (
            ctx.from_slice(&wh[..len]).unwrap(),
            ctx.from_slice(&gh[..len]).unwrap(),
        );
        for lr in [2.0f32, -3.0] {
            let got = step.run((&w0, &g0, lr)).unwrap().to_vec().unwrap();
            close(
                &got,
                &want(lr)[..len],
                1e-5,
                &format!("{len} elements, lr = {lr}"),
            );
        }
    }
    // A lazy scalar array is the same kind of input.
    let s0 = ctx.stats();
    let out = step.run((&w, &g, &ctx.scalar(2.0f32).unwrap())).unwrap();
    assert_eq!((ctx.stats() - s0).steps_replayed, 1);
    close(&out.to_vec().unwrap(), &want(2.0), 1e-5, "ctx.scalar");
    // Memory of one element, and a materialized 0-d array: traced apart, each read.
    let one = ctx.from_slice(&[0.125f32]).unwrap();
    let zero_d = ctx.scalar(4.0f32).unwrap();
    zero_d.eval().unwrap();
    for round in 0..2 {
        for (lr, v) in [(&one, 0.125f32), (&zero_d, 4.0)] {
            let s0 = ctx.stats();
            let out = step.run((&w, &g, lr)).unwrap();
            let d = ctx.stats() - s0;
            assert_eq!(d.steps_replayed, round, "{v}, round {round}: {d}");
            close(&out.to_vec().unwrap(), &want(v), 1e-5, &format!("memory {v}"));
        }
        let out = step.run((&w, &g, -0.75f32)).unwrap();
        close(&out.to_vec().unwrap(), &want(-0.75), 1e-5, "scalar again");
    }
}

/// Host values of other element types (integers, a flag, 64-bit values past 32 bits,
/// `f64`); one returned as an output (each run returns its own), one the closure does not
/// read, one evaluated inside (an error).
#[test]
fn host_values_of_every_use() {
    let ctx = ctx();
    let x = ctx.from_slice(&[1i32, -2, 3, 40, 5]).unwrap();
    let step = ctx.capture(|(x, k, unused): (Array<i32>, Array<i32>, Array<u32>)| {
        let _ = unused;
        Ok((&x * &k + 1, k))
    });
    for k in [3i32, -2, 0, 7] {
        let (y, k_out) = step.run((&x, k, 9u32)).unwrap();
        let want: Vec<i32> = [1, -2, 3, 40, 5].iter().map(|v| v * k + 1).collect();
        assert_eq!(y.to_vec().unwrap(), want, "k = {k}");
        assert_eq!(k_out.item().unwrap(), k);
    }
    // A flag and a 64-bit value past 32 bits.
    let sign = ctx.capture(|(x, on): (Array<i32>, Array<bool>)| Ok(lazycl::select(&on, &x, -&x)));
    for on in [true, false, true] {
        let want: Vec<i32> = [1, -2, 3, 40, 5]
            .iter()
            .map(|v| if on { *v } else { -v })
            .collect();
        assert_eq!(sign.run((&x, on)).unwrap().to_vec().unwrap(), want, "on = {on}");
    }
    let wide = ctx.from_slice(&[1i64, -2]).unwrap();
    let shift = ctx.capture(|(w, k): (Array<i64>, Array<u64>)| Ok(&w + k.cast::<i64>()));
    for k in [5u64, 1 << 40] {
        let want = [1 + k as i64, -2 + k as i64];
        assert_eq!(shift.run((&wide, k)).unwrap().to_vec().unwrap(), want, "k = {k}");
    }
    if ctx.device().fp64 {
        let f = ctx.from_slice(&[0.5f64, 2.0]).unwrap();
        let scale = ctx.capture(|(f, s): (Array<f64>, Array<f64>)| Ok(&f * &s));
        for s in [2.0f64, -0.25] {
            assert_eq!(scale.run((&f, s)).unwrap().to_vec().unwrap(), [0.5 * s, 2.0 * s]);
        }
    }
    let evaluates = ctx.capture(|(x, k): (Array<i32>, Array<i32>)| {
        k.eval()?;
        Ok(&x * &k)
    });
    match evaluates.run((&x, 2i32)) {
        Err(Error::InvalidStep { reason }) => assert!(reason.contains("an evaluation"), "{reason}"),
        other => panic!("expected InvalidStep, got {other:?}"),
    }
}

/// A step is shared by threads (`Send + Sync`): four threads run one step at once, each
/// on its own inputs and host values, and every result is its own; the shapes are traced
/// once however the threads race.
#[test]
fn threads_share_a_step() {
    fn assert_send_sync<T: Send + Sync>(_: &T) {}
    let ctx = ctx();
    let bias = ctx.from_slice(&[0.5f32, -0.5, 1.0]).unwrap();
    let step = ctx.capture(|(x, k): (Array<f32>, Array<f32>)| Ok(&x * &k + &bias));
    assert_send_sync(&step);
    let before = ctx.stats();
    std::thread::scope(|s| {
        for t in 0..4 {
            let (ctx, step) = (&ctx, &step);
            s.spawn(move || {
                for i in 0..20 {
                    let xs = [t as f32, i as f32, (t * i) as f32];
                    let x = ctx.from_slice(&xs).unwrap();
                    let k = (t + 1) as f32 * 0.25;
                    let y = step.run((&x, k)).unwrap().to_vec().unwrap();
                    let want = [xs[0] * k + 0.5, xs[1] * k - 0.5, xs[2] * k + 1.0];
                    assert_eq!(y, want, "thread {t}, run {i}");
                }
            });
        }
    });
    let d = ctx.stats() - before;
    assert_eq!(d.steps_replayed + d.flushes_planned + d.plans_reused, 80, "{d}");
    assert_eq!(format!("{step:?}").matches("shape").count(), 2, "{step:?}");
}

/// What a closure runs on the device when called, instead of recording it, is refused at
/// capture time by name (a run would replay its traced result, or skip its write): every
/// operation outside the lazy graph, one case each. Uploads and fills inside the closure
/// are constants, allowed; and the same operations outside the step, their results passed
/// in, give each run its own answer.
#[test]
fn eager_operations_inside_a_step_are_refused_by_name() {
    let ctx = ctx();
    let x = ctx.from_slice(&[3.0f32, -1.0, 2.0, 0.5]).unwrap();
    let idx = ctx.from_slice(&[1u32, 0, 1, 3]).unwrap();
    let refused = |what: &str, got: lazycl::Result<Array<f32>>, names: &str| match got {
        Err(Error::InvalidStep { reason }) => {
            assert!(reason.contains(names), "{what}: {reason}")
        }
        other => panic!("{what}: expected InvalidStep, got {other:?}"),
    };
    let sort = ctx.capture(|x: Array<f32>| Ok(&x.sort()? + 0.0f32));
    refused("sort", sort.run(&x), "a sort");
    let argsort = ctx.capture(|x: Array<f32>| Ok(x.take(0, &x.argsort()?)));
    refused("argsort", argsort.run(&x), "a sort");
    let topk = ctx.capture(|x: Array<f32>| Ok(x.topk(2)?.values));
    refused("topk", topk.run(&x), "a selection");
    let compress = ctx.capture(|x: Array<f32>| Ok(x.compress(&x.gt(0.0f32))?.into_array()? * 2.0f32));
    refused("compress", compress.run(&x), "a compaction");
    let bincount = ctx.capture(|x: Array<f32>| Ok(&x + idx.bincount(4)?.cast::<f32>()));
    refused("bincount", bincount.run(&x), "scatter_add");
    let scatter = ctx.capture(|x: Array<f32>| {
        let mut d = ctx.zeros::<f32>(4)?;
        lazycl::scatter_add(&mut d, 0, &idx, &x)?;
        Ok(d)
    });
    refused("scatter_add", scatter.run(&x), "scatter_add");
    let region = ctx.capture(|x: Array<f32>| {
        let mut y = &x * 1.0f32;
        y.slice_mut(s![1..3]).assign(5.0f32)?;
        Ok(y)
    });
    refused("slice_mut", region.run(&x), "slice_mut(..).assign");
    let double = double_in_place::bind(&ctx).unwrap();
    let launch = ctx.capture(|x: Array<f32>| {
        let mut y = ctx.from_slice(&[1.0f32, 2.0, 3.0, 4.0])?;
        double.global([4]).launch(&mut y)?;
        Ok(&x + &y)
    });
    refused("kernel", launch.run(&x), "#[kernel]");
    // Work written into an array outside the step and not returned: skipped by every run.
    let mut total = ctx.zeros::<f32>(4).unwrap();
    let side = std::sync::Mutex::new(&mut total);
    let assigns = ctx.capture(|x: Array<f32>| {
        let mut t = side.lock().unwrap();
        let sum = &**t + &x;
        t.assign(sum)?;
        Ok(&x * 2.0f32)
    });
    refused("assign", assigns.run(&x), "an evaluation");
    let reads = ctx.capture(|x: Array<f32>| {
        let m = (&x * 3.0f32).sum().item()?;
        Ok(&x * m)
    });
    refused("read", reads.run(&x), "an evaluation");
    let inner = ctx.capture(|x: Array<f32>| Ok(&x + 1.0f32));
    let nested = ctx.capture(|x: Array<f32>| Ok(&inner.run(&x)? * 2.0f32));
    refused("nested step", nested.run(&x), "an evaluation");

    // Constants made inside the closure are allowed, and read by every run.
    let constants = ctx.capture(|x: Array<f32>| {
        let c = ctx.from_slice(&[1.0f32, 2.0, 3.0, 4.0])?;
        let z = ctx.zeros::<f32>(4)?;
        Ok(&x * &c + &z)
    });
    let mut r = rng(5);
    for _ in 0..3 {
        let v = f32::random_vec(&mut r, 4);
        let got = constants
            .run(&ctx.from_slice(&v).unwrap())
            .unwrap()
            .to_vec()
            .unwrap();
        let want: Vec<f64> = v.iter().zip(1..).map(|(&a, c)| a as f64 * c as f64).collect();
        close(&got, &want, 1e-6, "constants");
    }
    // A sort outside the step, passed in: each run sorts its own input.
    let after_sort = ctx.capture(|s: Array<f32>| Ok(&s + 1.0f32));
    for _ in 0..3 {
        let v = f32::random_vec(&mut r, 9);
        let sorted = ctx.from_slice(&v).unwrap().sort().unwrap();
        let got = after_sort.run(&sorted).unwrap().to_vec().unwrap();
        let mut want: Vec<f64> = v.iter().map(|&a| a as f64 + 1.0).collect();
        want.sort_by(f64::total_cmp);
        close(&got, &want, 1e-6, "sorted outside");
    }
    // The refusal leaves the step usable for nothing else, and the context working.
    assert_eq!((&x * 2.0f32).to_vec().unwrap(), [6.0, -2.0, 4.0, 1.0]);
}
