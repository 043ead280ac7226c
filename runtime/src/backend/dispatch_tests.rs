//! The dispatcher's bookkeeping, with jobs of its own (no device): what the integration
//! tests cannot reach, a job that panics on the thread that took it back.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering;
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::*;

fn dispatcher() -> Dispatcher {
    Dispatcher::new(Arc::new(Counters::default()), Waits::Sleep)
}

/// Waits until `f()` holds (a few seconds at most).
fn eventually(what: &str, f: impl Fn() -> bool) {
    let start = Instant::now();
    while !f() {
        assert!(start.elapsed() < Duration::from_secs(10), "never: {what}");
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// A job taken back that panics: the panic reaches the caller (as it would inline), the
/// jobs taken back behind it are dropped unrun, and nothing stays counted as pending, so
/// later settles return at once (`busy` is 0 again) and the dispatcher still runs jobs.
#[test]
fn a_panic_in_a_job_taken_back_leaves_nothing_pending() {
    let d = dispatcher();
    let jobs = d.jobs.clone();
    let shared = jobs.shared.clone();
    // Another thread's job holds the dispatch thread until released.
    let (release, held) = mpsc::channel::<()>();
    let (started_tx, started) = mpsc::channel::<()>();
    let other = {
        let jobs = jobs.clone();
        std::thread::spawn(move || {
            jobs.hand_over(Box::new(move || {
                started_tx.send(()).ok();
                held.recv().ok();
                Ok(())
            }))
            .unwrap();
            jobs.settle().unwrap();
        })
    };
    started.recv().unwrap();
    // This thread's jobs wait behind it: a settle takes them back.
    let ran_after = Arc::new(std::sync::atomic::AtomicBool::new(false));
    jobs.hand_over(Box::new(|| panic!("a bug in a flush"))).unwrap();
    let flag = ran_after.clone();
    jobs.hand_over(Box::new(move || {
        flag.store(true, Ordering::SeqCst);
        Ok(())
    }))
    .unwrap();
    let settled = catch_unwind(AssertUnwindSafe(|| jobs.settle()));
    assert!(
        settled.is_err(),
        "the panic reaches the thread that took the job back"
    );
    assert!(
        !ran_after.load(Ordering::SeqCst),
        "the jobs behind it are dropped unrun"
    );
    release.send(()).unwrap();
    other.join().unwrap();
    eventually("no job pending", || shared.busy.load(Ordering::Acquire) == 0);
    assert!(shared.lock().jobs.is_empty());
    // The dispatcher still works.
    jobs.hand_over(Box::new(|| Ok(()))).unwrap();
    jobs.settle().unwrap();
    assert_eq!(shared.busy.load(Ordering::Acquire), 0);
}
