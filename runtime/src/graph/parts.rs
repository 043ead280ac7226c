//! Where the rows of a multi-device context's materialized array are: pieces of it, each
//! a run of rows (along axis 0) in one device's memory. A 0-d array is one row.

use std::ops::Range;

use crate::graph::NodeRef;

/// A materialized array of a multi-device context, as pieces on its devices. The pieces
/// cover every row at least once, in row order (an array of no rows has one empty piece).
pub(crate) struct Parts {
    pub(crate) pieces: Vec<Piece>,
}

/// Rows `rows` of an array, held by device `device` (its index in the context) as
/// `node`, a materialized node of that device's context of shape `[rows.len(), ..]` (the
/// array's own shape for a 0-d array).
#[derive(Clone)]
pub(crate) struct Piece {
    pub(crate) device: usize,
    pub(crate) rows: Range<usize>,
    pub(crate) node: NodeRef,
}

/// The rows of an array with `shape` as a multi-device context counts them: its first
/// axis, or one for a 0-d array.
pub(crate) fn row_count(shape: &[usize]) -> usize {
    shape.first().copied().unwrap_or(1)
}

/// Which rows of an array of `n` rows each device computes and holds: device `d` takes
/// those from `floor(n * (w[0] + .. + w[d - 1]) / W)` on (`W` the sum of the weights),
/// so every device has its share and the ranges cover `0..n` in order.
pub(crate) fn split_rows(n: usize, weights: &[f64]) -> Vec<Range<usize>> {
    let total: f64 = weights.iter().sum();
    let mut bounds = Vec::with_capacity(weights.len() + 1);
    let mut acc = 0.0;
    bounds.push(0usize);
    for (d, w) in weights.iter().enumerate() {
        acc += w;
        let b = if d + 1 == weights.len() {
            n
        } else {
            ((n as f64) * acc / total).floor() as usize
        };
        bounds.push(b.clamp(*bounds.last().unwrap_or(&0), n));
    }
    bounds.windows(2).map(|b| b[0]..b[1]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_shared_in_proportion_and_cover_the_array_in_order() {
        assert_eq!(split_rows(10, &[1.0, 1.0]), [0..5, 5..10]);
        assert_eq!(split_rows(7, &[1.0, 1.0, 1.0]), [0..2, 2..4, 4..7]);
        assert_eq!(split_rows(9, &[2.0, 1.0]), [0..6, 6..9]);
        assert_eq!(split_rows(1, &[1.0, 1.0]), [0..0, 0..1]);
        assert_eq!(split_rows(0, &[1.0, 1.0]), [0..0, 0..0]);
        for n in 0..40 {
            for w in [&[1.0, 3.0][..], &[0.3, 0.3, 0.4], &[5.0]] {
                let r = split_rows(n, w);
                assert_eq!(r.len(), w.len());
                assert_eq!(r[0].start, 0);
                assert_eq!(r.last().unwrap().end, n);
                assert!(r.windows(2).all(|p| p[0].end == p[1].start));
            }
        }
    }
}
