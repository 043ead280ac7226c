//! Background dispatch: `eval()` hands its flush to the context's dispatch thread (every
//! flush with `Dispatch::Background`; with `Dispatch::AfterPause`, the default on GPUs,
//! the first after a pause). A thread's work still reaches the device in the order it
//! asked for it, a flush the dispatch thread has not started is taken back by the
//! thread's next call that needs it, recording errors still come from `eval()`, a flush's
//! own error comes from the thread's next call that submits or reads (`Error::Deferred`),
//! once, and nothing is lost: the arrays stay unevaluated and a read tries again. Asserted
//! with the counters (`evals_dispatched`, `evals_taken_back`, `dispatch_waits`) and every
//! result checked on the host.

use std::sync::mpsc;
use std::time::Duration;

use crate::common::{builder, rng, Random};
use lazycl::prelude::*;
use lazycl::{CacheDir, DeviceType, Dispatch};

#[kernel]
fn add_one(x: &mut [f32]) {
    let i = global_id(0);
    if i < x.len() {
        x[i] += 1.0;
    }
}

fn inline_ctx() -> Context {
    builder().dispatch(Dispatch::Inline).build().unwrap()
}

/// A context that hands its `eval()`s over.
fn background_ctx() -> Context {
    builder().dispatch(Dispatch::Background).build().unwrap()
}

/// An array whose flush fails on the device's side of the checks: its root is one
/// element, but an operand is an iteration space of 2^62 (`TooLarge`, found by planning).
fn fails_in_flush(ctx: &Context) -> Array<f32> {
    let huge = ctx.scalar(1.0f32).unwrap().broadcast_to(&[1 << 31, 1 << 31]);
    (&huge * 2.0).sum()
}

/// Longer than `Dispatch::AfterPause`'s pause.
const PAUSE: Duration = Duration::from_millis(3);

#[test]
fn the_default_hands_over_after_a_pause_on_gpus_and_flushes_inline_on_cpu_devices() {
    // (Named: `Context::new()` follows `LAZYCL_DISPATCH`, which `make test` sets for
    // its later passes.)
    let c = builder().dispatch(Dispatch::default()).build().unwrap();
    let gpu = c.device().device_type != DeviceType::Cpu;
    let want = if gpu {
        Dispatch::AfterPause
    } else {
        Dispatch::Inline
    };
    assert_eq!(c.dispatch(), want);
    std::thread::sleep(PAUSE);
    let y = c.from_slice(&[1.0f32, 2.0]).unwrap() * 2.0;
    y.eval().unwrap();
    assert_eq!(c.stats().evals_dispatched, u64::from(gpu));
    assert_eq!(y.to_vec().unwrap(), [2.0, 4.0]);
}

#[test]
fn after_a_pause_eval_hands_over_and_a_loop_flushes_on_the_caller() {
    let ctx = builder().dispatch(Dispatch::AfterPause).build().unwrap();
    let mut r = rng(77);
    let host: Vec<f32> = f32::random_vec(&mut r, 101).iter().map(|v| v.sin()).collect();
    let x = ctx.from_slice(&host).unwrap();
    let step = |y: &Array<f32>, a: f32| (y * a + &x).tanh();
    let close = |got: Vec<f32>, want: &[f32]| {
        for (i, (g, w)) in got.iter().zip(want).enumerate() {
            assert!((g - w).abs() <= 1e-5, "element {i}: {g} vs {w}");
        }
    };
    step(&x, 0.5).to_vec().unwrap(); // its program built
    std::thread::sleep(PAUSE);
    let before = ctx.stats();
    let y = step(&x, 0.25);
    y.eval().unwrap();
    let d = ctx.stats() - before;
    assert_eq!(d.evals_dispatched, 1, "the first eval after a pause: {d}");
    let mut want: Vec<f32> = host.iter().map(|&v| (v * 0.25 + v).tanh()).collect();
    close(y.to_vec().unwrap(), &want);
    // A loop: every eval within a millisecond of the last flushes here.
    let before = ctx.stats();
    let mut y = y;
    let steps = 50;
    for i in 0..steps {
        let a = 0.5 + (i % 5) as f32 * 0.1;
        y = step(&y, a);
        y.eval().unwrap();
        for (w, &h) in want.iter_mut().zip(&host) {
            *w = (*w * a + h).tanh();
        }
    }
    let d = ctx.stats() - before;
    assert_eq!(d.kernels_launched, steps);
    // (A few may find the thread paused: a loaded machine can deschedule it.)
    assert!(
        d.evals_dispatched <= 5,
        "a loop hands over no more than a few: {d}"
    );
    close(y.to_vec().unwrap(), &want);
}

#[test]
fn a_long_flush_on_the_caller_is_no_pause() {
    // Each eval below builds a program of its own on the caller (no cache on disk), for
    // far longer than the pause; the next eval follows at once and still flushes here.
    let ctx = builder()
        .dispatch(Dispatch::AfterPause)
        .program_cache(CacheDir::Off)
        .build()
        .unwrap();
    let host = [0.25f32, -0.5, 1.0];
    let x = ctx.from_slice(&host).unwrap();
    let chain = |links: usize| (0..links).fold(x.clone(), |y, _| (&y * 1.5).sin());
    let before = ctx.stats();
    let arrays: Vec<Array<f32>> = (1..=6).map(chain).collect();
    for y in &arrays {
        y.eval().unwrap();
    }
    let d = ctx.stats() - before;
    assert_eq!(d.programs_built, 6, "{d}");
    // The first may be handed over (the thread paused before it); a loaded machine may
    // pause one more. (Counting from each eval's start, every other one would be: the
    // one after a hand-over follows it within microseconds.)
    assert!(d.evals_dispatched <= 2, "{d}");
    for (links, y) in (1..=6).zip(&arrays) {
        let want: Vec<f32> = host
            .iter()
            .map(|&v| (0..links).fold(v, |y, _| (y * 1.5).sin()))
            .collect();
        for (g, w) in y.to_vec().unwrap().iter().zip(&want) {
            assert!((g - w).abs() <= 1e-5, "{links} links: {g} vs {w}");
        }
    }
}

/// A context that hands its `eval()`s over and builds every program it needs anew.
fn uncached_background_ctx() -> Context {
    builder()
        .dispatch(Dispatch::Background)
        .program_cache(CacheDir::Off)
        .build()
        .unwrap()
}

/// Runs `then` on a second thread of `ctx` while the dispatch thread is busy with a job
/// of the first: a flush that builds a program (no cache on disk, a fresh context).
fn behind_a_slow_job<T: Send>(ctx: &Context, then: impl FnOnce() -> T + Send) -> T {
    let (sent, handed) = mpsc::channel();
    let (finished, done) = mpsc::channel();
    std::thread::scope(|scope| {
        scope.spawn(move || {
            let x = ctx.from_slice(&[0.5f32; 64]).unwrap();
            let slow = ((&x * 1.75 + 0.125).sin() * &x).exp2();
            slow.eval().unwrap(); // a program to build: on the dispatch thread
            sent.send(()).unwrap();
            done.recv().unwrap();
            let want = ((0.5f32 * 1.75 + 0.125).sin() * 0.5).exp2();
            assert!((slow.to_vec().unwrap()[0] - want).abs() < 1e-5);
        });
        handed.recv().unwrap();
        let out = then();
        finished.send(()).unwrap();
        out
    })
}

#[test]
fn a_read_takes_back_an_eval_the_dispatch_thread_has_not_started() {
    let ctx = uncached_background_ctx();
    let mut r = rng(78);
    let host = f32::random_vec(&mut r, 1000);
    let x = ctx.from_slice(&host).unwrap();
    (&x * 3.0 - 1.0).to_vec().unwrap(); // this one's program built
    let (taken, got) = behind_a_slow_job(&ctx, || {
        let before = ctx.stats();
        let y = &x * 2.0 - 1.0;
        y.eval().unwrap(); // queued behind the slow job
        let got = y.to_vec().unwrap(); // taken back and run here, not waited for
        ((ctx.stats() - before).evals_taken_back, got)
    });
    assert_eq!(taken, 1, "the read ran its own eval");
    let want: Vec<f32> = host.iter().map(|v| v * 2.0 - 1.0).collect();
    assert_eq!(got, want);
}

#[test]
fn an_error_of_an_eval_taken_back_is_deferred_once() {
    let ctx = uncached_background_ctx();
    let x = ctx.from_slice(&[1.5f32, -2.0]).unwrap();
    (&x * 2.0).to_vec().unwrap();
    let (first, second, stats_taken, y) = behind_a_slow_job(&ctx, || {
        let before = ctx.stats().evals_taken_back;
        fails_in_flush(&ctx).eval().unwrap();
        // `stats()` runs it (taken back) and keeps its error for the next settle.
        let taken = ctx.stats().evals_taken_back - before;
        // A later eval taken back the same way runs, and leaves that error kept.
        let y = &x * 2.0;
        y.eval().unwrap();
        let taken = taken + ctx.stats().evals_taken_back - before - 1;
        (ctx.wait_dispatched(), ctx.wait_dispatched(), taken, y)
    });
    assert_eq!(stats_taken, 2);
    assert!(
        matches!(&first, Err(Error::Deferred(e)) if matches!(**e, Error::TooLarge { .. })),
        "{first:?}"
    );
    assert!(second.is_ok(), "returned once");
    assert!(y.is_materialized(), "the later eval ran");
    assert_eq!(y.to_vec().unwrap(), [3.0, -4.0]);
}

#[test]
fn eval_hands_its_flush_over_and_a_read_finds_it_done() {
    let mut r = rng(71);
    for n in [0usize, 1, 7, 1000] {
        let host = f32::random_vec(&mut r, n);
        let want: Vec<f32> = host.iter().map(|v| v * 2.0 + 1.0).collect();
        for (ctx, handed_over) in [(background_ctx(), 1), (inline_ctx(), 0)] {
            let x = ctx.from_slice(&host).unwrap();
            let before = ctx.stats();
            let y = &x * 2.0 + 1.0;
            y.eval().unwrap();
            assert!(
                y.is_materialized(),
                "is_materialized counts a handed-over eval as done"
            );
            let d = ctx.stats() - before;
            assert_eq!(d.kernels_launched, u64::from(n > 0), "n = {n}");
            assert_eq!(d.evals_dispatched, handed_over, "n = {n}");
            assert_eq!(y.to_vec().unwrap(), want, "n = {n}");
            // Evaluating what is already computed hands nothing over.
            let s = ctx.stats();
            y.eval().unwrap();
            assert_eq!((ctx.stats() - s).evals_dispatched, 0);
        }
    }
}

#[test]
fn a_loop_of_evals_runs_in_order_and_is_held_back() {
    let ctx = background_ctx();
    let mut r = rng(72);
    let n = 33;
    let host = f32::random_vec(&mut r, n);
    let x = ctx.from_slice(&host).unwrap();
    let mut want: Vec<f64> = host.iter().map(|&v| v as f64).collect();
    let mut y = x.clone();
    let before = ctx.stats();
    let steps = 200;
    for i in 0..steps {
        let a = 0.5 + (i % 7) as f32 * 0.01;
        y = &y * a + &x;
        y.eval().unwrap();
        for (w, &h) in want.iter_mut().zip(&host) {
            *w = (*w as f32 * a + h) as f64;
        }
    }
    let got = y.to_vec().unwrap();
    let d = ctx.stats() - before;
    assert_eq!(d.evals_dispatched, steps);
    assert_eq!(d.kernels_launched, steps, "each eval once: none computed twice");
    assert_eq!(d.flushes_planned + d.plans_reused, steps);
    // Two structures (the first step reads `x` twice), each planned once.
    assert_eq!(d.flushes_planned, 2, "{d}");
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert!(
            (*g as f64 - w).abs() <= 1e-3 * (1.0 + w.abs()),
            "element {i}: {g} vs {w}"
        );
    }
    // More than `MAX_PENDING_JOBS` handed over at once: the loop waited for the thread
    // at least once, unless the thread kept up with every hand-over (it may on an idle
    // machine); never for each one.
    assert!(d.dispatch_waits < steps, "{d}");
}

#[test]
fn calls_that_submit_or_read_come_after_this_threads_evals() {
    let mut r = rng(73);
    let host = f32::random_vec(&mut r, 100);
    for ctx in [background_ctx(), inline_ctx()] {
        let x = ctx.from_slice(&host).unwrap();
        // A `#[kernel]` reading what an eval computes: the eval's kernel first, once.
        let mut y = &x * 3.0;
        y.eval().unwrap();
        let before = ctx.stats();
        add_one::bind(&ctx).unwrap().global(100).launch(&mut y).unwrap();
        let d = ctx.stats() - before;
        assert_eq!(d.kernels_launched, 1, "the launch did not compute y again: {d}");
        let want: Vec<f32> = host.iter().map(|v| v * 3.0 + 1.0).collect();
        assert_eq!(y.to_vec().unwrap(), want);
        // `assign` after an eval that reads the target: in place once the flush ran
        // (no buffer taken), and the flush read the old values.
        let mut w = ctx.from_slice(&host).unwrap();
        let before = ctx.stats();
        let z = &w * 2.0;
        z.eval().unwrap();
        w.assign(&x - 1.0).unwrap(); // (a value that reads `w` would go to a new buffer)
        let d = ctx.stats() - before;
        let taken = d.buffers_allocated + d.buffers_reused;
        assert_eq!(taken, 1, "z's buffer only; assign wrote in place: {d}");
        let twice: Vec<f32> = host.iter().map(|v| v * 2.0).collect();
        let less: Vec<f32> = host.iter().map(|v| v - 1.0).collect();
        assert_eq!(z.to_vec().unwrap(), twice);
        assert_eq!(w.to_vec().unwrap(), less);
        // Two queues: the second eval reads the first's result.
        let q = ctx.new_queue().unwrap();
        let a = &x + 1.0;
        a.eval_on(&q).unwrap();
        let b = &a * &x;
        b.eval().unwrap();
        let want: Vec<f32> = host.iter().map(|v| (v + 1.0) * v).collect();
        assert_eq!(b.to_vec().unwrap(), want);
        q.finish().unwrap();
    }
}

#[test]
fn recording_errors_still_come_from_eval() {
    let (ctx, other) = (background_ctx(), background_ctx());
    let a = ctx.from_slice(&[1.0f32, 2.0]).unwrap();
    let b = ctx.from_slice(&[1.0f32, 2.0, 3.0]).unwrap();
    assert!(matches!((&a + &b).eval(), Err(Error::ShapeMismatch { .. })));
    let c = other.from_slice(&[1.0f32, 2.0]).unwrap() * 2.0;
    assert!(matches!(
        lazycl::eval(&(&(&a * 2.0), &c)),
        Err(Error::ContextMismatch { .. })
    ));
    assert!(matches!(
        (&a * 2.0).eval_on(&other.new_queue().unwrap()),
        Err(Error::ContextMismatch { .. })
    ));
    // A root too large to compute, or to allocate, is known at once.
    let huge = ctx.scalar(1.0f32).unwrap().broadcast_to(&[1 << 31, 1 << 31]);
    assert!(matches!((&huge * 2.0).eval(), Err(Error::TooLarge { .. })));
    let big = ctx.device().max_alloc_bytes as usize / 4 + 1;
    let wide = ctx.scalar(1.0f32).unwrap().broadcast_to(&[big]);
    assert!(matches!((&wide * 2.0).eval(), Err(Error::OutOfMemory { .. })));
    assert_eq!(ctx.stats().evals_dispatched, 0, "nothing was handed over");
}

#[test]
fn a_flush_error_comes_from_the_next_call_once_and_loses_nothing() {
    let ctx = background_ctx();
    let mut r = rng(74);
    let host = f32::random_vec(&mut r, 10);
    let x = ctx.from_slice(&host).unwrap();
    let s = fails_in_flush(&ctx);
    s.eval().unwrap(); // handed over: the flush fails on the dispatch thread
    match ctx.wait_dispatched() {
        Err(Error::Deferred(e)) => assert!(matches!(*e, Error::TooLarge { .. }), "{e}"),
        other => panic!("expected the deferred TooLarge, got {other:?}"),
    }
    ctx.wait_dispatched().unwrap(); // returned once
                                    // Nothing lost: the array is still unevaluated, and reading it tries again.
    assert!(!s.is_materialized());
    assert!(matches!(s.item(), Err(Error::TooLarge { .. })));
    // The error reaches any call that submits or reads, which then does nothing.
    s.eval().unwrap();
    let y = &x * 2.0;
    let e = y.to_vec().unwrap_err();
    assert!(matches!(&e, Error::Deferred(inner) if matches!(**inner, Error::TooLarge { .. })));
    assert!(e.to_string().contains("an earlier eval()"), "{e}");
    let want: Vec<f32> = host.iter().map(|v| v * 2.0).collect();
    assert_eq!(
        y.to_vec().unwrap(),
        want,
        "the read works once the error was taken"
    );
    // `Dispatch::Inline` returns it from the eval itself.
    let inline = inline_ctx();
    assert!(matches!(
        fails_in_flush(&inline).eval(),
        Err(Error::TooLarge { .. })
    ));
}

#[test]
fn threads_sharing_a_context_wait_only_for_their_own_evals() {
    let ctx = background_ctx();
    let mut r = rng(75);
    let host = f32::random_vec(&mut r, 257);
    let x = ctx.from_slice(&host).unwrap();
    std::thread::scope(|scope| {
        let failing = scope.spawn(|| {
            let s = fails_in_flush(&ctx);
            s.eval().unwrap();
            ctx.wait_dispatched()
        });
        let workers: Vec<_> = (0..3)
            .map(|t| {
                let (x, host) = (&x, &host);
                scope.spawn(move || {
                    let a = t as f32 + 0.5;
                    let mut y = x.clone();
                    let mut want = host.clone();
                    for _ in 0..20 {
                        y = &y * a - x;
                        y.eval().unwrap();
                        for (w, h) in want.iter_mut().zip(host) {
                            *w = *w * a - h;
                        }
                    }
                    // Another thread's failed flush never reaches this one.
                    let got = y.to_vec().unwrap();
                    for (g, w) in got.iter().zip(&want) {
                        assert!((g - w).abs() <= 1e-3 * (1.0 + w.abs()), "{g} vs {w}");
                    }
                })
            })
            .collect();
        for w in workers {
            w.join().unwrap();
        }
        assert!(matches!(failing.join().unwrap(), Err(Error::Deferred(_))));
    });
}

#[test]
fn a_context_whose_last_array_is_in_a_handed_over_eval_drops_cleanly() {
    let mut r = rng(76);
    for _ in 0..10 {
        let host = f32::random_vec(&mut r, 64);
        let c = background_ctx();
        let y = c.from_slice(&host).unwrap() * 2.0;
        y.eval().unwrap();
        // The job may hold the last references: then the dispatch thread drops the context.
        drop(y);
        drop(c);
    }
    // And one whose thread dropped it with its evals run.
    let c = background_ctx();
    let y = c.from_slice(&[1.0f32]).unwrap() * 2.0;
    y.eval().unwrap();
    assert_eq!(y.item().unwrap(), 2.0);
}

/// The dispatch thread is a batch thread on Linux (`SCHED_BATCH`: its wake-up does not
/// preempt the thread that handed the work over), its policy read from `/proc`.
#[cfg(target_os = "linux")]
#[test]
fn the_dispatch_thread_is_a_batch_thread() {
    /// `SCHED_BATCH` in `linux/sched.h`.
    const SCHED_BATCH: u32 = 3;
    let ctx = background_ctx();
    let y = ctx.from_slice(&[1.0f32, 2.0]).unwrap() * 2.0;
    y.eval().unwrap();
    assert_eq!(y.to_vec().unwrap(), [2.0, 4.0]);
    assert_eq!(ctx.stats().evals_dispatched, 1);
    // Every dispatch thread of the process (other tests' too): the stat line's policy,
    // the 41st field, 39 fields after the name's closing parenthesis.
    let policies: Vec<u32> = std::fs::read_dir("/proc/self/task")
        .unwrap()
        .flatten()
        .filter(|task| {
            std::fs::read_to_string(task.path().join("comm")).is_ok_and(|c| c.trim() == "lazycl-dispatch")
        })
        .filter_map(|task| {
            let stat = std::fs::read_to_string(task.path().join("stat")).ok()?;
            let after_name = &stat[stat.rfind(')')? + 1..];
            after_name.split_whitespace().nth(38)?.parse().ok()
        })
        .collect();
    assert!(!policies.is_empty(), "no dispatch thread found");
    assert!(
        policies.iter().all(|&p| p == SCHED_BATCH),
        "policies {policies:?}"
    );
}
