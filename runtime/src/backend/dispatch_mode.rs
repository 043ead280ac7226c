//! Where `eval()` runs its flush: the user's choice ([`Dispatch`]) and, for
//! [`Dispatch::AfterPause`], whether the calling thread's caches have gone cold.

use std::cell::Cell;
use std::time::{Duration, Instant};

use crate::backend::device::DeviceType;
use crate::error::{Error, Result};

/// A thread whose last `eval()` returned this long ago hands its next one over
/// ([`Dispatch::AfterPause`]): by then other work, or the driver's own on a long
/// kernel's launch, has taken the caches its flush would run from.
const PAUSE: Duration = Duration::from_millis(1);

thread_local! {
    /// When this thread's last `eval()` on a context that hands over after a pause
    /// returned (or began, while one runs).
    static LAST_EVAL: Cell<Option<Instant>> = const { Cell::new(None) };
}

/// Where `eval()` runs its flush ([`ContextBuilder::dispatch`](crate::ContextBuilder::dispatch),
/// `LAZYCL_DISPATCH`).
///
/// A flush handed over is an offer: the thread's next call that submits or reads takes
/// back what the dispatch thread has not started and runs it itself, so a thread never
/// waits for the dispatch thread to wake up. An error of a flush handed over (not of
/// recording, which `eval()` still returns) is returned by the thread's next call that
/// submits or reads, as [`Error::Deferred`].
///
/// ```
/// # use lazycl::prelude::*;
/// # fn main() -> lazycl::Result<()> {
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
    /// [`AfterPause`](Dispatch::AfterPause) on GPUs and accelerators, [`Inline`](Dispatch::Inline)
    /// on CPU devices. The default.
    #[default]
    Auto,
    /// `eval()` flushes on the calling thread and returns every error itself.
    Inline,
    /// `eval()` flushes on the calling thread, but hands the flush to the context's
    /// dispatch thread when a millisecond has passed since the thread's last `eval()`
    /// returned. Such a thread runs from cold caches: the first operation after a wait
    /// for a long kernel cost it three raw enqueues' time flushed here, and about one
    /// handed over (RESULTS.md#rule-dispatch-after-pause). A loop of `eval()`s, whose
    /// caches stay warm, flushes here, its cheapest way. Not for CPU devices: their
    /// kernels run on the host's cores, and waking the dispatch thread while a kernel
    /// keeps them busy can cost the caller a scheduler time slice (milliseconds on PoCL).
    AfterPause,
    /// `eval()` checks what it can at once (recording errors such as shape mismatches,
    /// arrays of two contexts, a queue of another context, a result too large to
    /// compute or to allocate), hands every flush (planning or replaying, building,
    /// binding, enqueueing) to the context's dispatch thread, and returns: the caller
    /// pays for recording and a hand-over, and its host work overlaps the flushes. A
    /// loop of `eval()`s then runs at the dispatch thread's pace, and the flush's data
    /// moves between two cores: on the H200 a loop of `eval()`s cost 1.0–1.2 times what
    /// it costs inline, ten logistic-regression steps after a pause 1.1–1.8 times
    /// (RESULTS.md#rule-dispatch-background).
    Background,
}

impl Dispatch {
    /// `LAZYCL_DISPATCH` (`auto`, `inline`, `after-pause` or `background`), `None` when
    /// unset.
    pub(crate) fn from_env() -> Result<Option<Dispatch>> {
        let Some(v) = crate::env::text("LAZYCL_DISPATCH")? else {
            return Ok(None);
        };
        match v.to_ascii_lowercase().as_str() {
            "auto" => Ok(Some(Dispatch::Auto)),
            "inline" => Ok(Some(Dispatch::Inline)),
            "after-pause" => Ok(Some(Dispatch::AfterPause)),
            "background" => Ok(Some(Dispatch::Background)),
            _ => Err(Error::InvalidEnvironment {
                variable: "LAZYCL_DISPATCH",
                value: v,
                reason: "is not a dispatch mode: use auto (the default: after-pause on GPUs, \
                         inline on CPU devices), inline (eval() flushes on the calling \
                         thread), after-pause (eval() hands its flush to a thread of the \
                         context a millisecond after its thread's last eval()) or \
                         background (eval() hands every flush over)"
                    .into(),
            }),
        }
    }

    /// What [`Auto`](Dispatch::Auto) means on a device of `device_type`; the other modes
    /// as chosen.
    pub(crate) fn resolve(self, device_type: DeviceType) -> Dispatch {
        match (self, device_type) {
            (Dispatch::Auto, DeviceType::Cpu) => Dispatch::Inline,
            (Dispatch::Auto, _) => Dispatch::AfterPause,
            (chosen, _) => chosen,
        }
    }

    /// Whether this `eval()` hands its flush over (for a resolved mode; `Auto` flushes
    /// inline). For `AfterPause`, notes the time: this thread's next `eval()` within
    /// [`PAUSE`] flushes inline.
    pub(crate) fn hands_over(self) -> bool {
        match self {
            Dispatch::Auto | Dispatch::Inline => false,
            Dispatch::Background => true,
            Dispatch::AfterPause => {
                let now = Instant::now();
                let last = LAST_EVAL.with(|t| t.replace(Some(now)));
                last.is_none_or(|t| now.duration_since(t) >= PAUSE)
            }
        }
    }

    /// After an `eval()` flushed on the caller: for `AfterPause`, the pause counts from
    /// now (a flush that took a millisecond is no pause).
    pub(crate) fn flushed(self) {
        if self == Dispatch::AfterPause {
            LAST_EVAL.with(|t| t.set(Some(Instant::now())));
        }
    }
}
