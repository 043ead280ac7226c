//! Several queues, events and dependency tracking, through the public API: results stay
//! correct whatever the interleaving, reads wait only for what they read, buffers stay
//! alive (and unreused) while commands use them, and one-queue programs create no events.

// A binary of its own with no_sync.rs, not a module of tests/it: see tests/timing/main.rs.

use std::time::{Duration, Instant};

use crate::common::{cases, check_property, ctx, rng};
use crate::exclusive;
use crate::spin::{calibrate, slow_fill};
use lazycl::prelude::*;
use proptest::prelude::*;
use rand::Rng;

/// `y = a * x + y`, after a busy loop of `iters` steps that does not change the result.
#[kernel]
fn slow_axpy(a: f32, x: &[f32], y: &mut [f32], iters: u32) {
    let i = global_id(0);
    if i < y.len() {
        let mut v = x[i];
        let mut k = 0u32;
        while k < iters {
            v = v * 0.9999 + 0.0001;
            k += 1;
        }
        let mut r = a * x[i] + y[i];
        if v == 1234.5678 {
            r = 0.0;
        }
        y[i] = r;
    }
}

fn assert_close(got: &[f32], want: &[f32], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= 1e-4 * w.abs().max(1.0),
            "{what}: element {i} is {g}, expected {w}"
        );
    }
}

#[test]
fn two_chains_on_two_queues() {
    let _one = exclusive();
    let ctx = ctx();
    let (qa, qb) = (ctx.new_queue().unwrap(), ctx.new_queue().unwrap());
    assert_eq!((ctx.queue().id(), qa.id(), qb.id()), (0, 1, 2));
    let k = slow_axpy::bind(&ctx).unwrap();
    let n = 1001;
    let mut r = rng(1);
    let xa: Vec<f32> = (0..n).map(|_| r.gen_range(-1.0..1.0)).collect();
    let xb: Vec<f32> = (0..n).map(|_| r.gen_range(-1.0..1.0)).collect();
    let (x_a, x_b) = (ctx.from_slice(&xa).unwrap(), ctx.from_slice(&xb).unwrap());
    let (mut y_a, mut y_b) = (ctx.zeros::<f32>(n).unwrap(), ctx.full(n, 1.0f32).unwrap());
    let (mut ha, mut hb) = (vec![0.0f32; n], vec![1.0f32; n]);
    for step in 0..6 {
        let a = 0.5 + step as f32 * 0.1;
        k.global(n).on(&qa).launch(a, &x_a, &mut y_a, 200).unwrap();
        k.global(n).on(&qb).launch(-a, &x_b, &mut y_b, 50).unwrap();
        // A lazy step on each queue, reading that queue's result.
        y_a.assign_on(&qa, (&y_a * 0.5).tanh()).unwrap();
        y_b.assign_on(&qb, &y_b * 0.25 + 1.0).unwrap();
        for i in 0..n {
            ha[i] = ((a * xa[i] + ha[i]) * 0.5).tanh();
            hb[i] = (-a * xb[i] + hb[i]) * 0.25 + 1.0;
        }
    }
    // A result that joins both queues, computed on a third.
    let joined = &y_a - &y_b;
    joined.eval_on(&ctx.queue()).unwrap();
    let hj: Vec<f32> = ha.iter().zip(&hb).map(|(a, b)| a - b).collect();
    assert_close(&y_a.to_vec().unwrap(), &ha, "chain on queue 1");
    assert_close(&y_b.to_vec().unwrap(), &hb, "chain on queue 2");
    assert_close(&joined.to_vec().unwrap(), &hj, "join");
}

/// One command of a random program: on queue `queue` (of three), into array `into` (of
/// four) from array `from`, a read of `into` (kind 0), an assignment (1), a lazy
/// expression evaluated on the queue (2) or a slow kernel (3, 4; a read when `into` and
/// `from` are one array). `weight` is the kernel's `a` or the expression's mixing weight,
/// `iters` the kernel's busy loop.
#[derive(Clone, Debug)]
struct Command {
    queue: usize,
    into: usize,
    from: usize,
    kind: u32,
    weight: f32,
    iters: u32,
}

/// A random program: the arrays' length, the seed of their values, 24 commands. A failing
/// program shrinks toward commands that only read, the first queue and array.
#[derive(Clone, Debug)]
struct Program {
    n: usize,
    seed: u64,
    commands: Vec<Command>,
}

fn programs() -> impl Strategy<Value = Program> {
    let command = (0..3usize, 0..4usize, 0..4usize, 0..5u32, 0.0..1.0f32, 0..400u32).prop_map(
        |(queue, into, from, kind, weight, iters)| Command {
            queue,
            into,
            from,
            kind,
            weight,
            iters,
        },
    );
    (
        prop::sample::select(vec![1usize, 17, 1000, 4099]),
        any::<u64>(),
        prop::collection::vec(command, 24),
    )
        .prop_map(|(n, seed, commands)| Program { n, seed, commands })
}

/// Random programs over a few arrays: each step runs a slow kernel, a lazy expression or
/// a read on a random queue; the host model must match every read. Proptest inputs with a
/// fixed seed; `LAZYCL_PROPTEST_CASES / 40` cases (at least 6).
#[test]
fn random_interleavings_keep_dependencies() {
    let _one = exclusive();
    let ctx = ctx();
    let queues = [ctx.queue(), ctx.new_queue().unwrap(), ctx.new_queue().unwrap()];
    let k = slow_axpy::bind(&ctx).unwrap();
    let cases = (cases("LAZYCL_PROPTEST_CASES", 0) / 40).max(6);
    check_property(100, cases, programs(), |program| {
        let mut r = rng(program.seed);
        let n = program.n;
        let mut host: Vec<Vec<f32>> = (0..4)
            .map(|_| (0..n).map(|_| r.gen_range(-1.0..1.0)).collect())
            .collect();
        let mut dev: Vec<Array<f32>> = host.iter().map(|h| ctx.from_slice(h).unwrap()).collect();
        for (step, c) in program.commands.iter().enumerate() {
            let q = &queues[c.queue];
            let (i, j) = (c.into, c.from);
            match c.kind {
                3 | 4 if i != j => {
                    let a = c.weight - 0.5;
                    let x = dev[j].clone();
                    k.global(n).on(q).launch(a, &x, &mut dev[i], c.iters).unwrap();
                    let src = host[j].clone();
                    for (h, x) in host[i].iter_mut().zip(&src) {
                        *h += a * x;
                    }
                }
                2 => {
                    let s = 0.1 + 0.8 * c.weight;
                    let v = (&dev[j] * s + &dev[i] * (1.0 - s)).sin();
                    v.eval_on(q).unwrap();
                    dev[i] = v;
                    let src = host[j].clone();
                    for (h, x) in host[i].iter_mut().zip(&src) {
                        *h = (x * s + *h * (1.0 - s)).sin();
                    }
                }
                1 => {
                    let v = &dev[j] + 0.25;
                    dev[i].assign_on(q, v).unwrap();
                    host[i] = host[j].iter().map(|x| x + 0.25).collect();
                }
                _ => assert_close(&dev[i].to_vec().unwrap(), &host[i], &format!("step {step}")),
            }
        }
        for (d, h) in dev.iter().zip(&host) {
            assert_close(&d.to_vec().unwrap(), h, "the end");
        }
    });
}

#[test]
fn a_read_does_not_wait_for_unrelated_work_on_another_queue() {
    let _one = exclusive();
    let ctx = ctx();
    let slow_q = ctx.new_queue().unwrap();
    let fill = slow_fill::bind(&ctx).unwrap();
    // One work-item: the long kernel keeps one core busy, not the whole device.
    let iters = calibrate(&ctx, 1, Duration::from_millis(400));
    let x = ctx.from_vec((0..64).map(|i| i as f32).collect()).unwrap();
    let small = (&x * 2.0).exp2();
    small.eval().unwrap();
    small.to_vec().unwrap(); // built and warm
    let small = (&x * 3.0).exp2();
    small.eval().unwrap();
    let mut other = ctx.zeros::<f32>(1).unwrap();
    ctx.synchronize().unwrap();

    let long = fill
        .global(1)
        .on(&slow_q)
        .launch_event(&mut other, 5.0, iters * 3)
        .unwrap();
    let before = ctx.stats();
    let t = Instant::now();
    let got = small.to_vec().unwrap();
    let took = t.elapsed();
    let still_running = !long.is_complete().unwrap();
    let d = ctx.stats() - before;
    assert_eq!(got[5], 2f32.powf(15.0));
    assert_eq!((d.host_waits, d.waits_read), (1, 1), "{d}");
    assert_eq!(d.cross_queue_waits, 0, "{d}");
    assert!(
        still_running,
        "the read took {took:?} and the unrelated kernel had finished"
    );
    long.wait().unwrap();
    assert_eq!(other.to_vec().unwrap(), vec![5.0]);
}

#[test]
fn events_order_work_across_queues() {
    let _one = exclusive();
    let ctx = ctx();
    let (qa, qb) = (ctx.new_queue().unwrap(), ctx.new_queue().unwrap());
    let fill = slow_fill::bind(&ctx).unwrap();
    let iters = calibrate(&ctx, 1, Duration::from_millis(100));
    let (mut slow, mut quick) = (ctx.zeros::<f32>(1).unwrap(), ctx.zeros::<f32>(1).unwrap());
    ctx.synchronize().unwrap();

    // Unrelated arrays: only the explicit event orders `quick` after `slow`.
    let e_slow = fill
        .global(1)
        .on(&qa)
        .launch_event(&mut slow, 1.0, iters * 2)
        .unwrap();
    let e_quick = fill
        .global(1)
        .on(&qb)
        .after(std::slice::from_ref(&e_slow))
        .launch_event(&mut quick, 2.0, 0)
        .unwrap();
    assert_eq!((e_slow.queue_id(), e_quick.queue_id()), (qa.id(), qb.id()));
    e_quick.wait().unwrap();
    assert!(e_slow.is_complete().unwrap(), "`after` must order the launch");
    assert_eq!(quick.to_vec().unwrap(), vec![2.0]);

    // The same with `Queue::wait_for`, and a marker.
    let e_slow = fill
        .global(1)
        .on(&qa)
        .launch_event(&mut slow, 3.0, iters * 2)
        .unwrap();
    qb.wait_for(std::slice::from_ref(&e_slow)).unwrap();
    fill.global(1).on(&qb).launch(&mut quick, 4.0, 0).unwrap();
    let m = qb.marker().unwrap();
    let before = ctx.stats();
    m.wait().unwrap();
    assert!(e_slow.is_complete().unwrap());
    let d = ctx.stats() - before;
    assert_eq!((d.host_waits, d.waits_explicit), (1, 1), "{d}");
    assert_eq!(slow.to_vec().unwrap(), vec![3.0]);
    assert_eq!(quick.to_vec().unwrap(), vec![4.0]);
    qa.finish().unwrap();
}

/// A buffer dropped while a kernel on another queue still writes it goes back to the
/// pool; whoever gets it next must not see that kernel's write land after their own.
/// (`spare_buffers(0)`: the pool reuses it rather than making a new one.)
#[test]
fn pooled_buffers_wait_for_the_commands_of_their_last_owner() {
    let _one = exclusive();
    let ctx = Context::builder().spare_buffers(0).build().unwrap();
    let slow_q = ctx.new_queue().unwrap();
    let fill = slow_fill::bind(&ctx).unwrap();
    let n = 4;
    let iters = calibrate(&ctx, n, Duration::from_millis(20));
    for round in 0..20 {
        let mut t = ctx.zeros::<f32>(n).unwrap();
        fill.global(n).on(&slow_q).launch(&mut t, -1.0, iters).unwrap();
        drop(t);
        let before = ctx.stats();
        let u = ctx.full(n, round as f32).unwrap(); // default queue, reuses t's buffer
        let d = ctx.stats() - before;
        assert_eq!(d.buffers_reused, 1, "{d}");
        assert_eq!(d.cross_queue_waits, 1, "{d}");
        assert_eq!(u.to_vec().unwrap(), vec![round as f32; n], "round {round}");
    }
}

#[test]
fn dropping_everything_right_after_launching_is_safe() {
    let _one = exclusive();
    for round in 0..25 {
        let ctx = ctx();
        let q = ctx.new_queue().unwrap();
        let k = slow_axpy::bind(&ctx).unwrap();
        let x = ctx.full(513, 1.0f32).unwrap();
        let mut y = ctx.zeros::<f32>(513).unwrap();
        k.global(513).on(&q).launch(2.0, &x, &mut y, 300).unwrap();
        let z = (&y * 3.0).sum();
        z.eval_on(&q).unwrap();
        if round % 5 == 0 {
            assert_eq!(z.item().unwrap(), 3078.0);
        }
        drop(x);
        drop(y);
        // z, the queue, the kernel and the context go here, with work in flight.
    }
}

#[test]
fn one_queue_programs_create_no_events() {
    let _one = exclusive();
    let ctx = ctx();
    let k = slow_axpy::bind(&ctx).unwrap();
    let x = ctx.full(100, 1.0f32).unwrap();
    let mut y = ctx.zeros::<f32>(100).unwrap();
    let before = ctx.stats();
    for i in 0..10 {
        k.global(100).launch(i as f32, &x, &mut y, 0).unwrap();
        y.assign(&y * 0.5).unwrap();
        let s = (&y * &y).sum();
        y.assign(&y / (s + 1.0)).unwrap();
    }
    let v = y.to_vec().unwrap();
    let d = ctx.stats() - before;
    assert!(v.iter().all(|v| v.is_finite()));
    assert_eq!(d.events_created, 0, "{d}");
    assert_eq!(d.cross_queue_waits, 0, "{d}");
    assert_eq!((d.host_waits, d.waits_read), (1, 1), "{d}");
}

#[test]
fn arrays_and_queues_of_different_contexts_do_not_mix() {
    let _one = exclusive();
    let (c1, c2) = (ctx(), ctx());
    let q2 = c2.new_queue().unwrap();
    let x = c1.full(3, 1.0f32).unwrap();
    assert!(matches!(
        (&x * 2.0).eval_on(&q2),
        Err(Error::ContextMismatch { .. })
    ));
    let k = slow_axpy::bind(&c1).unwrap();
    let mut y = c1.zeros::<f32>(3).unwrap();
    assert!(matches!(
        k.global(3).on(&q2).launch(1.0, &x, &mut y, 0),
        Err(Error::ContextMismatch { .. })
    ));
    assert_eq!(y.to_vec().unwrap(), vec![0.0; 3], "nothing ran");
}

#[test]
fn ready_events_of_arrays() {
    let _one = exclusive();
    let ctx = ctx();
    let q = ctx.new_queue().unwrap();
    let fill = slow_fill::bind(&ctx).unwrap();
    let iters = calibrate(&ctx, 1, Duration::from_millis(100));
    let mut slow = ctx.zeros::<f32>(1).unwrap();
    fill.global(1).on(&q).launch(&mut slow, 7.0, iters * 2).unwrap();
    let before = ctx.stats();
    let ev = slow.ready_event().unwrap();
    assert_eq!(ev.queue_id(), q.id());
    assert!(!ev.is_complete().unwrap(), "the slow write is still running");
    assert_eq!(
        (ctx.stats() - before).host_waits,
        0,
        "asking for the event never waits"
    );
    ev.wait().unwrap();
    assert!(ev.is_complete().unwrap());
    // A lazy array is evaluated first; an upload is ready at once.
    let lazy = &slow + 1.0;
    lazy.ready_event().unwrap().wait().unwrap();
    assert!(lazy.is_materialized());
    assert_eq!(lazy.to_vec().unwrap(), vec![8.0]);
    let up = ctx.from_slice(&[1.0f32, 2.0]).unwrap();
    up.ready_event().unwrap().wait().unwrap();
}

#[test]
fn reading_a_fresh_upload_waits_for_nothing() {
    let _one = exclusive();
    let ctx = ctx();
    let fill = slow_fill::bind(&ctx).unwrap();
    let iters = calibrate(&ctx, 1, Duration::from_millis(300));
    let x = ctx.from_slice(&[1.0f32, 2.0, 3.0]).unwrap();
    let mut busy = ctx.zeros::<f32>(1).unwrap();
    // A long kernel on the default queue, on unrelated data.
    let long = fill.global(1).launch_event(&mut busy, 1.0, iters * 3).unwrap();
    assert_eq!(x.to_vec().unwrap(), vec![1.0, 2.0, 3.0]);
    assert!(
        !long.is_complete().unwrap(),
        "reading an upload waited for the default queue"
    );
    long.wait().unwrap();
}
