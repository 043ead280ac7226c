//! Noticing device work that runs when called, while a captured step's closure runs.
//!
//! A captured step replays the lazy graph its closure recorded. Whatever the closure ran
//! on the device instead of recording it (a sort, a compaction, a scatter, a `#[kernel]`
//! launch, an evaluation) is memory to that graph: a run would read the traced result,
//! never recompute it from its own inputs. Every such write labels the memory it wrote
//! with its [`Origin`] through [`Node`](super::Node) (made ready, or written in place), so
//! that is where it is noticed: while a [`Watch`] is open on this thread, the first
//! origin other than an upload or a fill (constants, the same every run) is kept for the
//! watcher to refuse by name. A new operation that writes device memory labels it, and so
//! cannot slip past.

use std::cell::Cell;

use super::Origin;

thread_local! {
    /// Whether a watch is open on this thread, and the first eager write it saw.
    static WATCHING: Cell<Option<Option<&'static str>>> = const { Cell::new(None) };
}

/// Open while a step's closure runs on this thread; nests (an inner watch keeps its own).
pub(crate) struct Watch {
    outer: Option<Option<&'static str>>,
}

impl Watch {
    pub(crate) fn open() -> Watch {
        Watch {
            outer: WATCHING.with(|w| w.replace(Some(None))),
        }
    }

    /// The first device work that ran when called since the watch opened: what it was
    /// (an [`Origin`]'s operation, as [`Origin::eager`] names it).
    pub(crate) fn seen(&self) -> Option<&'static str> {
        WATCHING.with(|w| w.get().flatten())
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        WATCHING.with(|w| w.set(self.outer));
    }
}

/// Whether a watch is open on this thread: work it would notice must then run here, not
/// be handed to another thread (an `eval()` flushes inline while a step is traced).
pub(crate) fn watching() -> bool {
    WATCHING.with(|w| w.get().is_some())
}

/// Called where memory is labelled with `origin`: keeps the first eager write for the
/// open watch, if any; a named operation replaces an evaluation seen before it (a
/// compaction first evaluates its lazy mask: the compaction is what the user called).
pub(crate) fn note(origin: &Origin) {
    let Some(what) = origin.eager() else { return };
    let named = !matches!(origin, Origin::Flush(_));
    WATCHING.with(|w| match w.get() {
        Some(None) => w.set(Some(Some(what))),
        Some(Some(seen)) if named && seen == Origin::EVALUATION => w.set(Some(Some(what))),
        _ => {}
    });
}
