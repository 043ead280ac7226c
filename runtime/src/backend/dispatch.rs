//! Background dispatch (`Dispatch::Background`): `eval()` hands its flush to one thread
//! per context and returns, so that the caller pays for recording and a hand-over, not
//! for planning, binding and enqueueing (ARCHITECTURE.md, *Background dispatch*).
//!
//! Rules:
//! - Jobs run one at a time, in the order they were handed over, on the context's
//!   dispatch thread (spawned by the first hand-over, ended when the context drops).
//! - Before a thread submits a command to a queue of the context, reads device memory,
//!   or looks at whether an array is computed, it **settles**: it waits until every job
//!   it handed over has run, and takes the first error one of them returned. So each
//!   thread's work reaches the queues in the order that thread asked for it, as if
//!   every `eval()` had run inline. Jobs of other threads are not waited for: two
//!   threads' submissions were never ordered against each other.
//! - A thread settles while it holds no lock a job may take, and it hands over no job
//!   while it runs one of its own flushes; so a settle inside a flush finds nothing to
//!   wait for, and the dispatch thread never waits for itself.
//! - A job's error is kept for the thread that handed it over (its first one only: the
//!   later ones follow from it) and returned by that thread's next settle.

use std::collections::VecDeque;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;

use crate::error::{Error, Result};
use crate::stats::Counters;

/// The most jobs a context holds that its dispatch thread has not run: a thread that
/// hands over more first waits for the older half of them (counted as
/// `dispatch_waits`), so a loop of `eval()`s cannot record arbitrarily far ahead of its
/// flushes.
const MAX_PENDING_JOBS: usize = 64;

/// How long the dispatch thread stays awake after its last job (see `Shared::linger`):
/// longer than a loop takes to record its next step.
const LINGER: std::time::Duration = std::time::Duration::from_micros(50);

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
    /// Signalled when a job a waiting thread needs has run (see `State::wake_at`).
    ran: Condvar,
    /// Jobs handed over and not run, plus errors not yet taken: while it is 0 (nearly
    /// always, once a thread has settled), settling is one atomic load.
    busy: AtomicUsize,
    /// `State::handed`, readable without the lock (`linger` watches it).
    handed: AtomicU64,
    counters: Arc<Counters>,
}

/// Wake-ups are targeted: the dispatch thread is signalled only while it idles, and a
/// waiting thread only once the job it waits for has run. (A signal costs a system call
/// each, and a thread woken early takes the lock the dispatch thread is about to need.)
#[derive(Default)]
struct State {
    jobs: VecDeque<Pending>,
    /// The job running now: its number and the thread that handed it over.
    running: Option<(u64, u64)>,
    /// Jobs are numbered from 1 in hand-over order; those up to `done` have run.
    handed: u64,
    done: u64,
    /// Per waiting thread, the number of the job it waits for.
    wake_at: Vec<u64>,
    /// The dispatch thread waits for work.
    idle: bool,
    /// Errors of jobs, each for the thread that handed the job over.
    errors: Vec<Failed>,
    worker: Option<JoinHandle<()>>,
    closing: bool,
}

struct Pending {
    number: u64,
    thread: u64,
    job: Job,
}

struct Failed {
    thread: u64,
    error: Error,
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
    pub(crate) fn new(counters: Arc<Counters>) -> Dispatcher {
        Dispatcher {
            jobs: Jobs {
                shared: Arc::new(Shared {
                    state: Mutex::default(),
                    work: Condvar::new(),
                    ran: Condvar::new(),
                    busy: AtomicUsize::new(0),
                    handed: AtomicU64::new(0),
                    counters,
                }),
            },
        }
    }
}

impl Jobs {
    /// Hands `job` to the dispatch thread (starting it on first use) and returns; waits
    /// first while [`MAX_PENDING_JOBS`] are pending. Where no thread can be started, runs
    /// the job here.
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
            Counters::add(&shared.counters.dispatch_waits, 1);
            // Until half of them have run: one wake-up per half queue, not one per job
            // (again if other threads filled it meanwhile).
            while st.jobs.len() >= MAX_PENDING_JOBS {
                let half = st.jobs[MAX_PENDING_JOBS / 2 - 1].number;
                st = shared.wait_for_job(st, half);
            }
        }
        st.handed += 1;
        let number = st.handed;
        shared.handed.store(number, Ordering::Release);
        st.jobs.push_back(Pending {
            number,
            thread: this_thread(),
            job,
        });
        shared.busy.fetch_add(1, Ordering::AcqRel);
        Counters::add(&shared.counters.evals_dispatched, 1);
        let wake = st.idle;
        drop(st);
        if wake {
            shared.work.notify_one();
        }
        Ok(())
    }

    /// Waits until the jobs this thread handed over have run; returns the first error
    /// one of them returned (taking it: it is returned once).
    #[inline]
    pub(crate) fn settle(&self) -> Result<()> {
        if self.shared.busy.load(Ordering::Acquire) == 0 {
            return Ok(());
        }
        self.shared.settle(true)
    }

    /// Waits like [`settle`](Jobs::settle) and leaves any error for the next one (for
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

    /// Waits (the lock released meanwhile) until job `number` has run.
    fn wait_for_job<'a>(&self, mut st: MutexGuard<'a, State>, number: u64) -> MutexGuard<'a, State> {
        st.wake_at.push(number);
        while st.done < number {
            st = self.ran.wait(st).unwrap_or_else(|e| e.into_inner());
        }
        if let Some(i) = st.wake_at.iter().position(|&n| n == number) {
            st.wake_at.swap_remove(i);
        }
        st
    }

    fn settle(&self, take_error: bool) -> Result<()> {
        let me = this_thread();
        let mut st = self.lock();
        // Jobs run in order: this thread's last one is the one to wait for.
        let last = st.jobs.iter().rev().find(|p| p.thread == me).map(|p| p.number);
        let last = last.or(st.running.filter(|&(_, t)| t == me).map(|(n, _)| n));
        if let Some(number) = last {
            Counters::add(&self.counters.dispatch_waits, 1);
            st = self.wait_for_job(st, number);
        }
        if !take_error {
            return Ok(());
        }
        match st.errors.iter().position(|f| f.thread == me) {
            Some(i) => {
                let failed = st.errors.swap_remove(i);
                self.busy.fetch_sub(1, Ordering::AcqRel);
                Err(Error::Deferred(Box::new(failed.error)))
            }
            None => Ok(()),
        }
    }

    /// After a job, with none pending: a loop that records and hands over its next
    /// `eval()` within [`LINGER`] finds this thread awake, and neither side pays for a
    /// wake-up. Spins without the lock, watching `handed`.
    fn linger(&self, seen: u64) {
        let start = std::time::Instant::now();
        while self.handed.load(Ordering::Acquire) == seen && start.elapsed() < LINGER {
            for _ in 0..64 {
                std::hint::spin_loop();
            }
        }
    }

    /// The next job, once there is one; `None` once the dispatcher closes.
    fn next_job(&self) -> Option<Pending> {
        let mut lingered = false;
        let mut st = self.lock();
        loop {
            if let Some(p) = st.jobs.pop_front() {
                st.running = Some((p.number, p.thread));
                return Some(p);
            }
            if st.closing {
                return None;
            }
            if !lingered {
                lingered = true;
                let seen = st.handed;
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
        loop {
            let Some(Pending { number, thread, job }) = self.next_job() else {
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
            st.done = number;
            match result {
                Err(error) if !st.errors.iter().any(|f| f.thread == thread) => {
                    st.errors.push(Failed { thread, error });
                }
                _ => {
                    self.busy.fetch_sub(1, Ordering::AcqRel);
                }
            }
            let wake = st.wake_at.iter().any(|&n| n <= number);
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

/// Where `eval()` runs its flush ([`ContextBuilder::dispatch`](crate::ContextBuilder::dispatch),
/// `LAZYCL_DISPATCH`).
///
/// ```
/// # use lazycl::prelude::*;
/// # fn main() -> lazycl::Result<()> {
/// // The first operation after a long kernel costs the caller about one raw enqueue.
/// let ctx = Context::builder().dispatch(lazycl::Dispatch::Background).build()?;
/// let y = ctx.from_slice(&[1.0f32, 2.0])? * 3.0;
/// y.eval()?; // handed over
/// assert_eq!(ctx.stats().evals_dispatched, 1);
/// assert_eq!(y.to_vec()?, [3.0, 6.0]);
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Dispatch {
    /// `eval()` flushes on the calling thread and returns every error itself. The
    /// default: a loop of `eval()`s, and the host calls around it, cost least this way.
    #[default]
    Inline,
    /// `eval()` checks what it can at once (recording errors such as shape mismatches,
    /// arrays of two contexts, a queue of another context, a result too large to
    /// compute or to allocate), hands the flush (planning or replaying, building,
    /// binding, enqueueing) to the context's dispatch thread, and returns: the caller
    /// pays for recording and a hand-over, and its host work overlaps the flush. An error
    /// of the flush itself is returned by the thread's next call that submits or reads,
    /// as [`Error::Deferred`].
    ///
    /// For a GPU program whose latency matters more than its throughput: on the H200 the
    /// first operation after a wait for a long kernel cost the caller a raw enqueue's
    /// time instead of three, while a loop of `eval()`s ran 1.1 to 1.5 times slower and
    /// a burst of them followed by a read 2 to 3 times (BENCHMARKS.md, twenty-second
    /// session). Not for CPU devices: their kernels run on the host's cores, and waking
    /// the dispatch thread while a kernel keeps them busy costs the caller a scheduler
    /// time slice (milliseconds on PoCL).
    Background,
}

impl Dispatch {
    /// `LAZYCL_DISPATCH` (`inline` or `background`), `None` when unset.
    pub(crate) fn from_env() -> Result<Option<Dispatch>> {
        let Some(v) = crate::env::text("LAZYCL_DISPATCH")? else {
            return Ok(None);
        };
        match v.to_ascii_lowercase().as_str() {
            "inline" => Ok(Some(Dispatch::Inline)),
            "background" => Ok(Some(Dispatch::Background)),
            _ => Err(Error::InvalidEnvironment {
                variable: "LAZYCL_DISPATCH",
                value: v,
                reason: "is not a dispatch mode: use inline (eval() flushes on the calling \
                         thread, the default) or background (eval() hands its flush to a \
                         thread of the context)"
                    .into(),
            }),
        }
    }
}
