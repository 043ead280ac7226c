//! The fusion passes that join kernel plans, run in this order by [`crate::plan::plan`]:
//! a row reduction into the column reduction that reads it, a total over the rows beside
//! it, (then `fit`), and a split reduction finished by its first elementwise reader.

pub(crate) mod finish_in;
pub(crate) mod row_totals;
pub(crate) mod rows_into_columns;
