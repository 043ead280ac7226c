//! Recycled buffers and short-lived queues: a pooled buffer carries no false waits into
//! unrelated work on another queue, still carries the real ones, and queues made and
//! dropped in a loop do not pile up in their context.

use std::time::Duration;

use crate::common::ctx;
use crate::exclusive;
use crate::spin::{calibrate, slow_fill};
use lazycl::prelude::*;

/// A small DAG on `q`: two elementwise steps and a reduction, each evaluated on its own
/// (so intermediate buffers come from and return to the pool).
fn dag(x: &Array<f32>, s: f32, q: &Queue) -> (Array<f32>, Array<f32>) {
    let a = (x * s + 1.0).sin();
    a.eval_on(q).unwrap();
    let b = (&a * &a - x) * 0.5;
    b.eval_on(q).unwrap();
    let c = &b + &a;
    c.eval_on(q).unwrap();
    let total = c.sum();
    total.eval_on(q).unwrap();
    (c, total)
}

fn host_dag(x: &[f32], s: f32) -> (Vec<f32>, f32) {
    let c: Vec<f32> = x
        .iter()
        .map(|&x| {
            let a = (x * s + 1.0).sin();
            (a * a - x) * 0.5 + a
        })
        .collect();
    let total = c.iter().map(|&v| f64::from(v)).sum::<f64>() as f32;
    (c, total)
}

/// Two independent DAGs on two queues, round after round: from the second round on they
/// must not wait for each other through the buffers the pool hands them.
fn independent_dags_stay_independent(read_between_rounds: bool) {
    let ctx = ctx();
    let (q1, q2) = (ctx.new_queue().unwrap(), ctx.new_queue().unwrap());
    let n = 1 << 15;
    let h1: Vec<f32> = (0..n).map(|i| (i % 97) as f32 / 97.0).collect();
    let h2: Vec<f32> = (0..n).map(|i| (i % 89) as f32 / -89.0).collect();
    let (x1, x2) = (ctx.from_slice(&h1).unwrap(), ctx.from_slice(&h2).unwrap());
    for round in 0..4 {
        let s = 0.5 + round as f32;
        let before = ctx.stats();
        let (c1, t1) = dag(&x1, s, &q1);
        let (c2, t2) = dag(&x2, -s, &q2);
        let d = ctx.stats() - before;
        if round > 0 {
            assert!(d.buffers_reused > 0, "round {round}: {d}");
            assert_eq!(d.cross_queue_waits, 0, "round {round}: {d}");
            assert_eq!(d.events_created, 0, "round {round}: {d}");
        }
        if read_between_rounds || round == 3 {
            for (c, t, h, s) in [(&c1, &t1, &h1, s), (&c2, &t2, &h2, -s)] {
                let (hc, ht) = host_dag(h, s);
                let got = c.to_vec().unwrap();
                assert!(got
                    .iter()
                    .zip(&hc)
                    .all(|(g, w)| (g - w).abs() <= 1e-4 * w.abs().max(1.0)));
                let got = t.item().unwrap();
                assert!((got - ht).abs() <= 1e-3 * ht.abs().max(1.0), "{got} != {ht}");
            }
        }
    }
}

#[test]
fn recycled_buffers_add_no_waits_between_independent_queues() {
    let _one = exclusive();
    independent_dags_stay_independent(true);
}

#[test]
fn recycled_buffers_add_no_waits_between_independent_queues_without_reads() {
    let _one = exclusive();
    independent_dags_stay_independent(false);
}

/// A context whose queue `q1` runs a long one-work-item kernel (~300 ms) that writes an
/// array of `n` elements dropped right after the launch, so its buffer is in the pool while
/// the kernel runs (a size class nothing else in these tests uses); `x`, `n` elements,
/// for new work; `long` completes with the long kernel.
struct Busy {
    ctx: Context,
    q1: Queue,
    q2: Queue,
    x: Array<f32>,
    n: usize,
    long: Event,
}

fn busy(ctx: Context) -> Busy {
    let (q1, q2) = (ctx.new_queue().unwrap(), ctx.new_queue().unwrap());
    let spin = slow_fill::bind(&ctx).unwrap();
    let iters = calibrate(&ctx, 1, Duration::from_millis(300));
    let n = 3001;
    let x = ctx.from_vec((0..n).map(|i| i as f32).collect()).unwrap();
    let mut a = ctx.zeros::<f32>(n).unwrap();
    ctx.synchronize().unwrap();
    spin.global(1).on(&q1).launch(&mut a, -5.0, iters).unwrap();
    let long = q1.marker().unwrap(); // complete once the long kernel is
    drop(a); // its buffer goes to the pool while the kernel runs
    Busy {
        ctx,
        q1,
        q2,
        x,
        n,
        long,
    }
}

/// A buffer dropped while a long kernel on another queue still writes it is handed to
/// new work only with a device-side wait: the new work's values are what remains. (By
/// default the pool makes a new buffer instead: `spare_buffers(0)` makes it reuse.)
#[test]
fn a_recycled_buffer_still_in_use_is_waited_for() {
    let _one = exclusive();
    let Busy {
        ctx, q1, q2, x, n, ..
    } = busy(Context::builder().spare_buffers(0).build().unwrap());
    let before = ctx.stats();
    let y = &x + 3.0;
    y.eval_on(&q2).unwrap(); // the output takes the pooled buffer
    let d = ctx.stats() - before;
    assert_eq!(d.buffers_reused, 1, "{d}");
    assert_eq!(d.cross_queue_waits, 1, "{d}");
    // Let the long kernel end before reading: without the wait it would have written
    // y[0] after y's kernel did.
    q1.finish().unwrap();
    let got = y.to_vec().unwrap();
    assert_eq!(got[0], 3.0, "the long kernel's write landed after the new work's");
    assert_eq!(got[n - 1], (n - 1) as f32 + 3.0);
}

/// By default the same buffer is passed over: the new work gets a new one and waits for
/// nothing, and the busy one is reused once it is known to be free.
#[test]
fn a_busy_buffer_is_passed_over_by_default() {
    let _one = exclusive();
    let Busy {
        ctx, q1, q2, x, long, ..
    } = busy(ctx());
    let before = ctx.stats();
    let y = &x + 3.0;
    y.eval_on(&q2).unwrap();
    let d = ctx.stats() - before;
    assert_eq!((d.buffers_reused, d.buffers_allocated), (0, 1), "{d}");
    assert_eq!((d.cross_queue_waits, d.events_created), (0, 0), "{d}");
    assert_eq!(y.to_vec().unwrap()[0], 3.0);
    // (On NVIDIA's OpenCL the new buffer's first use waits for the running kernel: the
    // driver's wait, measured on the H200, not one lazycl adds. ARCHITECTURE.md.)
    if !ctx.device().platform_name.contains("NVIDIA") {
        assert!(!long.is_complete().unwrap(), "y waited for the long kernel");
    }
    long.wait().unwrap(); // known complete now: its buffer needs no wait
    let before = ctx.stats();
    let z = &x * 2.0;
    z.eval_on(&q2).unwrap();
    let d = ctx.stats() - before;
    assert_eq!((d.buffers_reused, d.cross_queue_waits), (1, 0), "{d}");
    assert_eq!(z.to_vec().unwrap()[1], 2.0);
    q1.finish().unwrap();
}

/// Queues made per task and dropped do not pile up in the context: with a read of each
/// task's result, or with only an occasional `synchronize`.
#[test]
fn dropped_queues_are_released() {
    let _one = exclusive();
    let ctx = ctx();
    let x = ctx.from_vec((0..64).map(|i| i as f32).collect()).unwrap();
    let live = |ctx: &Context| {
        let s = ctx.stats();
        s.queues_created - s.queues_released
    };
    let at_start = live(&ctx);
    // The most queues alive at once: while each task's result is read, and while only
    // every 100th task synchronizes (until then the input's records name the others).
    let mut most = [0, 0];
    for i in 0..10_000u32 {
        let q = ctx.new_queue().unwrap();
        let y = &x + i as f32;
        y.eval_on(&q).unwrap();
        let phase = usize::from(i >= 5_000);
        if phase == 0 {
            assert_eq!(y.to_vec().unwrap()[1], 1.0 + i as f32);
        } else if i % 100 == 0 {
            ctx.synchronize().unwrap();
        }
        drop((y, q));
        most[phase] = most[phase].max(live(&ctx) - at_start);
    }
    assert!(
        most[0] <= 3 && most[1] <= 102,
        "up to {most:?} queues were alive at once"
    );
    let s = ctx.stats();
    assert!(s.queues_created >= 10_000, "{s}");
}
