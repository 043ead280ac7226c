//! Layout constants shared by the planner, the code generator and the backend: decided
//! once here so that no layer reads another's private numbers.

/// Counters per queue for reductions finished in their own kernel: the most blocks of
/// outputs such a reduction may have.
pub(crate) const FINISH_COUNTERS: usize = 1024;
/// The counter kept for reductions over the rows computed beside a row reduction
/// (`plan::RowTotal`): the last one, which no block of outputs uses
/// (their kernels have one block, and other kernels fewer than [`FINISH_COUNTERS`]).
pub(crate) const ROW_TOTAL_COUNTER: usize = FINISH_COUNTERS - 1;

/// Work-group size of reduction kernels (a power of two, within every device's limit
/// this code targets; smaller devices get `device_max` instead).
pub(crate) const REDUCE_GROUP: u32 = 256;
