//! Shapes and numpy-style broadcasting.

use crate::error::{Error, Result};

/// Anything that names a shape: `[2, 3]`, `(2, 3)` (ndarray's form, up to six axes),
/// `&[2, 3][..]`, `vec![2, 3]`, `6` (1-D), `()` (0-d).
pub trait IntoShape {
    /// The dimensions, outermost first.
    fn into_shape(self) -> Vec<usize>;
}

impl IntoShape for usize {
    fn into_shape(self) -> Vec<usize> {
        vec![self]
    }
}
impl IntoShape for () {
    fn into_shape(self) -> Vec<usize> {
        Vec::new()
    }
}
impl<const N: usize> IntoShape for [usize; N] {
    fn into_shape(self) -> Vec<usize> {
        self.to_vec()
    }
}
impl IntoShape for &[usize] {
    fn into_shape(self) -> Vec<usize> {
        self.to_vec()
    }
}
impl IntoShape for Vec<usize> {
    fn into_shape(self) -> Vec<usize> {
        self
    }
}
impl IntoShape for &Vec<usize> {
    fn into_shape(self) -> Vec<usize> {
        self.clone()
    }
}

macro_rules! tuple_shapes {
    ($( ($($d:ident),+) ),+) => {$(
        impl IntoShape for ($(tuple_shapes!(@usize $d),)+) {
            fn into_shape(self) -> Vec<usize> {
                let ($($d,)+) = self;
                vec![$($d),+]
            }
        }
    )+};
    (@usize $d:ident) => { usize };
}

tuple_shapes!(
    (a),
    (a, b),
    (a, b, c),
    (a, b, c, d),
    (a, b, c, d, e),
    (a, b, c, d, e, f)
);

/// The element count of `shape`, or an error if it overflows `usize`.
pub(crate) fn checked_numel(shape: &[usize]) -> Result<usize> {
    shape
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))
        .ok_or_else(|| Error::InvalidShape(format!("the element count of shape {shape:?} overflows usize")))
}

/// Whether `from` broadcasts to exactly `to` (numpy's `broadcast_to`: no more axes, and
/// each trailing axis equal or 1).
pub(crate) fn broadcasts_to(from: &[usize], to: &[usize]) -> bool {
    from.len() <= to.len()
        && from
            .iter()
            .rev()
            .zip(to.iter().rev())
            .all(|(&f, &t)| f == t || f == 1)
}

/// The broadcast of two shapes by numpy's rules (align trailing axes; a size-1 axis
/// stretches), or `None` when they are incompatible.
pub(crate) fn broadcast(a: &[usize], b: &[usize]) -> Option<crate::graph::Shape> {
    // Fast paths: equal shapes, and a 0-d operand (a scalar).
    if a == b || b.is_empty() {
        return Some(a.into());
    }
    if a.is_empty() {
        return Some(b.into());
    }
    let rank = a.len().max(b.len());
    let mut out: crate::graph::Shape = smallvec::smallvec![0; rank];
    for i in 0..rank {
        let da = if i < rank - a.len() {
            1
        } else {
            a[i - (rank - a.len())]
        };
        let db = if i < rank - b.len() {
            1
        } else {
            b[i - (rank - b.len())]
        };
        out[i] = match (da, db) {
            (x, y) if x == y => x,
            (1, y) => y,
            (x, 1) => x,
            _ => return None,
        };
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broadcasting_follows_numpy() {
        let b = |a: &[usize], b: &[usize]| broadcast(a, b).map(|s| s.to_vec());
        assert_eq!(b(&[3, 1], &[4]), Some(vec![3, 4]));
        assert_eq!(b(&[], &[2, 5]), Some(vec![2, 5]));
        assert_eq!(b(&[2, 1, 5], &[7, 1]), Some(vec![2, 7, 5]));
        assert_eq!(b(&[0], &[1]), Some(vec![0]));
        assert_eq!(broadcast(&[3], &[4]), None);
        assert_eq!(broadcast(&[2, 3], &[3, 3]), None);
    }
}
