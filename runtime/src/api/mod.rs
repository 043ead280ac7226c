//! What users call: [`Array`](array::Array) and its constructors, recording operators and
//! reductions, `expr!`'s run-time side, `eval`/`explain`/`assign`, and the
//! [`Context`](crate::Context) constructors. The only home of the user-facing
//! `impl Array` and `impl Context` blocks.

pub(crate) mod array;
pub(crate) mod autodiff;
pub(crate) mod builder;
pub(crate) mod compact;
pub(crate) mod compacted;
pub(crate) mod complex;
pub(crate) mod construct;
pub(crate) mod context;
pub(crate) mod covariance;
pub(crate) mod display;
pub(crate) mod eval;
pub(crate) mod explain;
pub(crate) mod fft;
pub(crate) mod frequencies;
pub(crate) mod handover;
pub(crate) mod histogram;
pub(crate) mod indexing;
pub(crate) mod kernel;
pub(crate) mod matmul;
pub(crate) mod operators;
pub(crate) mod ops;
pub(crate) mod queue;
pub(crate) mod random;
pub(crate) mod reduce;
pub(crate) mod reduce_by_key;
pub(crate) mod regions;
pub(crate) mod scan;
pub(crate) mod scatter;
pub(crate) mod search;
pub(crate) mod sequences;
pub(crate) mod sets;
pub(crate) mod shifts;
pub(crate) mod slice_mut;
pub(crate) mod sort;
#[cfg(test)]
mod source_snapshot;
pub(crate) mod stats;
pub(crate) mod step;
pub(crate) mod topk;
pub(crate) mod views;
