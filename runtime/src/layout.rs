//! Layout constants shared by the planner, the code generator and the backend: decided
//! once here so that no layer reads another's private numbers.

/// Counters per queue for reductions finished in their own kernel: the most blocks of
/// outputs such a reduction may have.
pub(crate) const FINISH_COUNTERS: usize = 1024;
/// The counter kept for reductions over the rows computed beside a row reduction
/// (`KernelPlan::row_total`): the last one, which no block of outputs uses
/// (their kernels have one block, and other kernels fewer than [`FINISH_COUNTERS`]).
pub(crate) const ROW_TOTAL_COUNTER: usize = FINISH_COUNTERS - 1;

/// Work-group size of reduction kernels (a power of two, within every device's limit
/// this code targets; smaller devices get `device_max` instead).
pub(crate) const REDUCE_GROUP: u32 = 256;

/// Elements per vector: per work-item iteration of the vectorized elementwise loop, per
/// vector load of a reduction, and outputs per work-item of a vector column layout.
pub(crate) const VECTOR_WIDTH: usize = 4;

/// Rows each work-item takes per step of a column reduction with a row reduction inside
/// (their loads are in flight together).
pub(crate) const ROWS_PER_STEP: usize = 4;

/// Local memory the group-rows layout takes per work-item: two halves of a step's row
/// values, of at most 8 bytes each. The planner sizes that layout's work-group by it.
pub(crate) const GROUP_ROWS_LOCAL_BYTES: usize = 2 * ROWS_PER_STEP * 8;
