//! Background dispatch: `eval()` hands its flush to one thread per context and returns,
//! so that the caller pays for recording and a hand-over, not for planning, binding and
//! enqueueing (ARCHITECTURE.md, *Background dispatch*; when it does: [`Dispatch`](crate::Dispatch)).
//!
//! Rules:
//! - Jobs run one at a time, in the order they were handed over, on the context's
//!   dispatch thread (spawned by the first hand-over, ended when the context drops).
//! - Before a thread submits a command to a queue of the context, reads device memory,
//!   or looks at whether an array is computed, it **settles**: every job it handed over
//!   has run when settling returns, and settling returns the first error one of them
//!   returned. A job of its own that the dispatch thread runs, it waits for; those the
//!   dispatch thread has not started, it **takes back** and runs itself, in order (a
//!   hand-over is an offer: a caller that needs its flush before the dispatch thread is
//!   awake does not wait for the wake-up). So each thread's work reaches the queues in
//!   the order that thread asked for it, as if every `eval()` had run inline. Jobs of
//!   other threads are not waited for: two threads' submissions were never ordered
//!   against each other.
//! - A thread settles while it holds no lock a job may take (a job may run on either
//!   thread), and it hands over no job while it runs one of its own flushes; so a
//!   settle inside a flush finds nothing to wait for, and the dispatch thread never
//!   waits for itself.
//! - A job's error is kept for the thread that handed it over (its first one only: the
//!   later ones follow from it) and returned by that thread's next settle.
//! - A thread that hands over a job while [`MAX_PENDING_JOBS`] are pending settles first.
//! - The dispatch thread is a batch thread (Linux): waking it does not preempt the thread
//!   that handed the job over ([`yield_to_callers`]).
//! - Waiting is [`Waits::Poll`] on devices with their own processors: a thread that
//!   waits for a job polls for [`POLL`] before it sleeps, and the dispatch thread stays
//!   awake [`LINGER`] after its last job, since waking a sleeping thread took 20–150 µs
//!   on the H200's virtual machine, longer than a job. On CPU devices ([`Waits::Sleep`])
//!   both sleep at once: there a polling core is a core the device's kernels lack.

use std::collections::VecDeque;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;

use crate::error::{Error, Result};
use crate::stats::Counters;

/// The most jobs a context holds that its dispatch thread has not run, so that a loop
/// of `eval()`s cannot record arbitrarily far ahead of its flushes.
const MAX_PENDING_JOBS: usize = 64;

/// How long the dispatch thread stays awake after its last job (see `Shared::linger`):
/// longer than a loop takes to record its next step.
const LINGER: std::time::Duration = std::time::Duration::from_micros(50);

/// How long a thread waiting for a job polls before it sleeps: longer than a job takes.
const POLL: std::time::Duration = std::time::Duration::from_micros(200);

/// How the threads of a dispatcher wait for each other (see the rules above).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Waits {
    /// Poll first: devices with processors of their own.
    Poll,
    /// Sleep at once: CPU devices, whose kernels run on the host's cores.
    Sleep,
}

/// One flush handed over.
pub(crate) type Job = Box<dyn FnOnce() -> Result<()> + Send>;

/// A context's dispatch thread and its jobs: a cheap handle (every queue of the context
/// holds one, to settle before it submits); [`Dispatcher`] owns the thread.
#[derive(Clone)]
pub(crate) struct Jobs {
    shared: Arc<Shared>,
}

/// Owns the dispatch thread: dropping it (with the context) ends the thread.
pub(crate) struct Dispatcher {
    pub(crate) jobs: Jobs,
}

struct Shared {
    state: Mutex<State>,
    /// Signalled when a job is handed over to an idle thread, or the dispatcher closes.
    work: Condvar,
    /// Signalled when a job has run while a thread sleeps waiting (`State::sleepers`).
    ran: Condvar,
    /// Jobs handed over and neither run nor taken back, plus errors not yet taken: while
    /// it is 0 (nearly always, once a thread has settled), settling is one atomic load.
    busy: AtomicUsize,
    /// Jobs handed over so far (`linger` watches it).
    handed: AtomicU64,
    /// Jobs the dispatch thread has finished so far (a waiting thread polls it).
    finished: AtomicU64,
    waits: Waits,
    counters: Arc<Counters>,
}

/// Wake-ups are targeted: the dispatch thread is signalled only while it idles, and
/// waiting threads only while one sleeps. (A signal costs a system call each.)
#[derive(Default)]
struct State {
    jobs: VecDeque<Pending>,
    /// The thread whose job the dispatch thread runs now.
    running: Option<u64>,
    /// Threads asleep on `Shared::ran`.
    sleepers: usize,
    /// The dispatch thread waits for work.
    idle: bool,
    /// Errors of jobs, each for the thread that handed the job over.
    errors: Vec<Failed>,
    worker: Option<JoinHandle<()>>,
    closing: bool,
}

struct Pending {
    thread: u64,
    job: Job,
}

struct Failed {
    thread: u64,
    error: Error,
}

/// Polls `ready` until it is true, for at most `limit`. Without `spin_loop`: under
/// KVM a loop of `pause` instructions is what gets a vCPU descheduled.
fn poll(limit: std::time::Duration, mut ready: impl FnMut() -> bool) {
    let start = std::time::Instant::now();
    let mut polls = 0u32;
    while !ready() {
        polls = polls.wrapping_add(1);
        if polls.is_multiple_of(64) && start.elapsed() > limit {
            return;
        }
    }
}

/// Makes the calling thread (the dispatch thread) one whose wake-up does not preempt the
/// thread that woke it (Linux's `SCHED_BATCH`): it lands on an idle core at once, and
/// where none is idle the job waits for the caller to block or to take it back, instead
/// of taking the caller's core for a time slice. On a CPU device whose kernel holds every
/// core, an `eval()` handed over took over 1 ms in 13 of 150 trials, and in 2 of 150 as
/// a batch thread (RESULTS.md#rule-dispatch-batch-thread). Elsewhere, or where the system
/// refuses, the thread stays as it is.
fn yield_to_callers() {
    #[cfg(target_os = "linux")]
    {
        let param = libc::sched_param { sched_priority: 0 };
        // SAFETY: sets this thread's own policy; `param` outlives the call. (Unprivileged:
        // SCHED_BATCH is not a real-time policy. A refusal leaves the policy unchanged.)
        let _ = unsafe { libc::pthread_setschedparam(libc::pthread_self(), libc::SCHED_BATCH, &param) };
    }
}

/// Threads are told apart by a number of lazycl's own (cheaper to read than
/// `std::thread::current().id()`).
fn this_thread() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    thread_local! {
        static ME: u64 = NEXT.fetch_add(1, Ordering::Relaxed);
    }
    ME.with(|me| *me)
}

impl Dispatcher {
    pub(crate) fn new(counters: Arc<Counters>, waits: Waits) -> Dispatcher {
        Dispatcher {
            jobs: Jobs {
                shared: Arc::new(Shared {
                    state: Mutex::default(),
                    work: Condvar::new(),
                    ran: Condvar::new(),
                    busy: AtomicUsize::new(0),
                    handed: AtomicU64::new(0),
                    finished: AtomicU64::new(0),
                    waits,
                    counters,
                }),
            },
        }
    }
}

impl Jobs {
    /// Hands `job` to the dispatch thread (starting it on first use) and returns; settles
    /// first while [`MAX_PENDING_JOBS`] are pending (returning what settling returns).
    /// Where no thread can be started, runs the job here.
    pub(crate) fn hand_over(&self, job: Job) -> Result<()> {
        let shared = &self.shared;
        let mut st = shared.lock();
        if st.worker.is_none() {
            let for_worker = shared.clone();
            let spawned = std::thread::Builder::new()
                .name("lazycl-dispatch".into())
                .spawn(move || for_worker.work_loop());
            match spawned {
                Ok(handle) => st.worker = Some(handle),
                Err(_) => {
                    drop(st);
                    return job();
                }
            }
        }
        if st.jobs.len() >= MAX_PENDING_JOBS {
            drop(st);
            shared.settle(true)?;
            st = shared.lock();
            // Other threads' jobs: until one has run.
            if st.jobs.len() >= MAX_PENDING_JOBS {
                Counters::add(&shared.counters.dispatch_waits, 1);
                st = shared.wait_until(st, |st| st.jobs.len() < MAX_PENDING_JOBS);
            }
        }
        st.jobs.push_back(Pending {
            thread: this_thread(),
            job,
        });
        shared.handed.fetch_add(1, Ordering::Release);
        shared.busy.fetch_add(1, Ordering::AcqRel);
        Counters::add(&shared.counters.evals_dispatched, 1);
        // This hand-over wakes an idle thread; the next ones find it woken.
        let wake = std::mem::replace(&mut st.idle, false);
        drop(st);
        if wake {
            shared.work.notify_one();
        }
        Ok(())
    }

    /// Returns once the jobs this thread handed over have run (here, those the dispatch
    /// thread has not started); returns the first error one of them returned (taking
    /// it: it is returned once).
    #[inline]
    pub(crate) fn settle(&self) -> Result<()> {
        if self.shared.busy.load(Ordering::Acquire) == 0 {
            return Ok(());
        }
        self.shared.settle(true)
    }

    /// Settles like [`settle`](Jobs::settle) and leaves any error for the next one (for
    /// calls that cannot return it: counters, `is_materialized`).
    #[inline]
    pub(crate) fn wait(&self) {
        if self.shared.busy.load(Ordering::Acquire) != 0 {
            let _ = self.shared.settle(false);
        }
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits (the lock released meanwhile) until `done(state)`, checked again after each
    /// job the dispatch thread finishes: polls first ([`Waits::Poll`]), then sleeps.
    fn wait_until<'a>(
        &'a self,
        mut st: MutexGuard<'a, State>,
        mut done: impl FnMut(&State) -> bool,
    ) -> MutexGuard<'a, State> {
        if self.waits == Waits::Poll {
            let start = std::time::Instant::now();
            while !done(&st) && start.elapsed() < POLL {
                let seen = self.finished.load(Ordering::Acquire);
                drop(st);
                let left = POLL.saturating_sub(start.elapsed());
                poll(left, || self.finished.load(Ordering::Acquire) != seen);
                st = self.lock();
            }
        }
        st.sleepers += 1;
        while !done(&st) {
            st = self.ran.wait(st).unwrap_or_else(|e| e.into_inner());
        }
        st.sleepers -= 1;
        st
    }

    fn settle(&self, take_error: bool) -> Result<()> {
        let me = this_thread();
        let mut st = self.lock();
        // A job of this thread that the dispatch thread runs now: wait for it (and for
        // the next, should the dispatch thread have started that one meanwhile).
        if st.running == Some(me) {
            Counters::add(&self.counters.dispatch_waits, 1);
            st = self.wait_until(st, |st| st.running != Some(me));
        }
        // The rest were not started: taken back, to run here in order.
        let mut mine = VecDeque::new();
        if st.jobs.iter().any(|p| p.thread == me) {
            let (taken, others) = std::mem::take(&mut st.jobs)
                .into_iter()
                .partition(|p| p.thread == me);
            st.jobs = others;
            mine = taken;
        }
        // An error kept for this thread comes out now, so that the settles inside the
        // jobs run below find none to take.
        let earlier = st
            .errors
            .iter()
            .position(|f| f.thread == me)
            .map(|i| st.errors.swap_remove(i).error);
        drop(st);
        if !mine.is_empty() {
            // Taken back, they are no longer pending: counted off before they run, so
            // that a panic in one (a bug, propagated as it would be inline; the jobs
            // behind it are dropped, their arrays left lazy) leaves no job counted.
            self.busy.fetch_sub(mine.len(), Ordering::AcqRel);
            Counters::add(&self.counters.evals_taken_back, mine.len() as u64);
        }
        let mut later = None;
        for p in mine {
            let result = (p.job)();
            // (The first error only: later ones follow from it.)
            if let (Err(e), None, None) = (result, &earlier, &later) {
                later = Some(e);
            }
        }
        // `busy` counts an error kept (`earlier`), not one of a job run here (`later`).
        match (earlier, later) {
            (None, None) => Ok(()),
            (Some(error), _) if take_error => {
                self.busy.fetch_sub(1, Ordering::AcqRel);
                Err(Error::Deferred(Box::new(error)))
            }
            (None, Some(error)) if take_error => Err(Error::Deferred(Box::new(error))),
            (Some(error), _) => {
                self.lock().errors.push(Failed { thread: me, error });
                Ok(())
            }
            (None, Some(error)) => {
                self.lock().errors.push(Failed { thread: me, error });
                self.busy.fetch_add(1, Ordering::AcqRel);
                Ok(())
            }
        }
    }

    /// After a job, with none pending: a loop that records and hands over its next
    /// `eval()` within [`LINGER`] finds this thread awake, and neither side pays for a
    /// wake-up. Polls without the lock, watching `handed`.
    fn linger(&self, seen: u64) {
        poll(LINGER, || self.handed.load(Ordering::Acquire) != seen);
    }

    /// The next job, once there is one; `None` once the dispatcher closes.
    fn next_job(&self) -> Option<Pending> {
        let mut lingered = false;
        let mut st = self.lock();
        loop {
            if let Some(p) = st.jobs.pop_front() {
                st.running = Some(p.thread);
                return Some(p);
            }
            if st.closing {
                return None;
            }
            if !lingered && self.waits == Waits::Poll {
                lingered = true;
                let seen = self.handed.load(Ordering::Acquire);
                drop(st);
                self.linger(seen);
                st = self.lock();
                continue;
            }
            st.idle = true;
            st = self.work.wait(st).unwrap_or_else(|e| e.into_inner());
            st.idle = false;
        }
    }

    /// The dispatch thread: runs jobs in order until the dispatcher closes.
    fn work_loop(&self) {
        yield_to_callers();
        loop {
            let Some(Pending { thread, job }) = self.next_job() else {
                return;
            };
            // A panic is a bug in lazycl; it must not leave the job's thread waiting.
            let result = catch_unwind(AssertUnwindSafe(job)).unwrap_or_else(|panic| {
                let what = panic
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_default();
                Err(Error::Internal(format!(
                    "a flush panicked on the dispatch thread: {what}"
                )))
            });
            let mut st = self.lock();
            st.running = None;
            match result {
                Err(error) if !st.errors.iter().any(|f| f.thread == thread) => {
                    st.errors.push(Failed { thread, error });
                }
                _ => {
                    self.busy.fetch_sub(1, Ordering::AcqRel);
                }
            }
            self.finished.fetch_add(1, Ordering::Release);
            let wake = st.sleepers > 0;
            drop(st);
            if wake {
                self.ran.notify_all();
            }
        }
    }
}

impl Drop for Dispatcher {
    fn drop(&mut self) {
        let shared = &self.jobs.shared;
        let (worker, errors) = {
            let mut st = shared.lock();
            st.closing = true;
            (st.worker.take(), std::mem::take(&mut st.errors))
        };
        shared.work.notify_all();
        // The last job's arrays may have held the context: then this runs on the
        // dispatch thread itself, which ends once this job is done.
        if let Some(worker) = worker {
            if worker.thread().id() != std::thread::current().id() {
                let _ = worker.join();
            }
        }
        for f in errors {
            eprintln!("lazycl: an eval() failed on the dispatch thread after it returned, and its thread made no later call that could report it: {}", f.error);
        }
    }
}

#[cfg(test)]
#[path = "dispatch_tests.rs"]
mod tests;
