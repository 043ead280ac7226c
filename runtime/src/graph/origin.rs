//! Where a materialized node's memory came from, so that `explain` of an array with
//! nothing left to compute can say what computed it. Kept with the buffer
//! ([`State::Ready`](super::State::Ready)) and small: a flush's description is one `Arc`
//! shared by every node it materialized and every flush of its structure, a few words
//! per kernel, never its plans or sources.

use std::sync::Arc;

/// What wrote a materialized node's memory last.
#[derive(Clone, Debug)]
pub(crate) enum Origin {
    /// Copied from the host (`Context::array`, `from_slice`, `from_vec`,
    /// `from_shape_slice`).
    Upload,
    /// Filled on the device (`Context::zeros`, `full`).
    Fill,
    /// Computed by a kernel of a lazy flush.
    Flush(FlushOrigin),
    /// Written by device kernels outside the lazy graph: "a sort", "a compaction".
    Algorithm(&'static str),
    /// Written in place after it was made: by "a #[kernel] launch (a &mut argument)",
    /// "slice_mut(..).assign" or "scatter_add".
    WrittenBy(&'static str),
}

impl Origin {
    /// What [`eager`](Origin::eager) calls a flush.
    pub(crate) const EVALUATION: &'static str = "an evaluation (`eval`, `assign`, a read)";

    /// The operation that wrote the memory when it was called, as a user names it: `None`
    /// for an upload or a fill, which write the same values whenever they run.
    pub(crate) fn eager(&self) -> Option<&'static str> {
        match self {
            Origin::Upload | Origin::Fill => None,
            Origin::Flush(_) => Some(Origin::EVALUATION),
            Origin::Algorithm(what) | Origin::WrittenBy(what) => Some(what),
        }
    }
}

/// The kernel of a flush that computed a node.
#[derive(Clone, Debug)]
pub(crate) struct FlushOrigin {
    /// The flush's number in this process (counting every flush of every context from 0;
    /// `LAZYCL_DUMP_DOT` names its picture `flush-<number>.dot`).
    pub(crate) flush: u64,
    /// The kernel's index in the flush's launch order.
    pub(crate) kernel: u32,
    /// One line per kernel of the flush, in launch order: what kind of kernel it is
    /// (`plan::describe`).
    pub(crate) kernels: Arc<[String]>,
}
