//! Layout constants shared by the planner and codegen.

/// Elements per vector: per work-item iteration of the vectorized elementwise loop, per
/// vector load of a reduction, and outputs per work-item of a vector column layout.
pub(crate) const VECTOR_WIDTH: usize = 4;

/// Rows each work-item takes per step of a column reduction with a row reduction inside
/// (their loads are in flight together).
pub(crate) const ROWS_PER_STEP: usize = 4;

/// Local memory the group-rows layout takes per work-item: two halves of a step's row
/// values, of at most 8 bytes each. The planner sizes that layout's work-group by it.
pub(crate) const GROUP_ROWS_LOCAL_BYTES: usize = 2 * ROWS_PER_STEP * 8;
