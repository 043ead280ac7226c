//! Views as index maps: which element of its source each element of a view reads.
//!
//! A view never copies. Slicing (ranges, steps of either sign, single indices, new
//! axes), transposes and permutations, flips, inserted and removed axes and broadcasts
//! are all one kind of map, [`ViewMap`]: every source axis follows at most one axis of
//! the view, affinely (`source = start + step * view`). Maps compose, so a view of a view
//! is one map over the original source, and planning folds a map into the loads of the
//! kernels that read the view.
//!
//! Regions that pick from several sources (`concatenate`, `stack`, `pad`) are not maps
//! but their own nodes ([`Region`]): each element of the result tests its coordinate
//! along one axis (or against a box) and reads the source whose range holds it. A node
//! has at most [`MAX_REGION_SOURCES`] sources; more are a tree of such nodes.

use smallvec::SmallVec;

/// How one axis of a view's source is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct SourceAxis {
    /// The view axis this source axis follows; `None`: a fixed index (`start`), as for
    /// `s![.., 3]`, a removed size-1 axis, or a size-1 axis stretched by broadcasting.
    pub(crate) from: Option<usize>,
    /// The source index at view index 0 (always inside the source axis when the view is
    /// not empty).
    pub(crate) start: isize,
    /// Source elements per view element along `from` (negative: reversed; never 0).
    pub(crate) step: isize,
}

/// A view's index map: one [`SourceAxis`] per axis of the source, giving the source
/// coordinates of each view coordinate.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct ViewMap {
    pub(crate) axes: SmallVec<[SourceAxis; 4]>,
}

impl ViewMap {
    /// The map of a view that is its source (rank `rank`).
    pub(crate) fn identity(rank: usize) -> ViewMap {
        ViewMap {
            axes: (0..rank)
                .map(|d| SourceAxis {
                    from: Some(d),
                    start: 0,
                    step: 1,
                })
                .collect(),
        }
    }

    /// Whether a view of `view_shape` with this map reads a source of `source_shape`
    /// element for element (the view is the source).
    pub(crate) fn is_identity(&self, source_shape: &[usize], view_shape: &[usize]) -> bool {
        source_shape == view_shape
            && self.axes.iter().enumerate().all(|(d, a)| {
                // A size-1 axis reads index 0 however it is mapped.
                a.start == 0 && (source_shape[d] == 1 || (a.from == Some(d) && a.step == 1))
            })
    }

    /// This map applied after `inner`: `self` maps a view's coordinates to those of its
    /// source, which is itself a view whose map `inner` reads the original source. The
    /// result maps the outer view's coordinates to the original source.
    pub(crate) fn then(&self, inner: &ViewMap) -> ViewMap {
        ViewMap {
            axes: inner
                .axes
                .iter()
                .map(|a| match a.from {
                    None => *a,
                    Some(mid) => {
                        let m = self.axes[mid];
                        match m.from {
                            None => SourceAxis {
                                from: None,
                                start: a.start + a.step * m.start,
                                step: 1,
                            },
                            Some(_) => SourceAxis {
                                from: m.from,
                                start: a.start + a.step * m.start,
                                step: a.step * m.step,
                            },
                        }
                    }
                })
                .collect(),
        }
    }
}

/// Most sources one [`Region::Concat`] node has. A longer concatenation is recorded as a
/// tree of concatenations of at most this many sources each, so that planning's cut
/// budget (nodes and kernel arguments per kernel) can split it into kernels of bounded
/// size: a node's sources are read inside the kernel that computes it, and no cut can
/// divide one node.
pub(crate) const MAX_REGION_SOURCES: usize = 16;

/// A result whose elements come from several sources, each over a box of the result.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Region {
    /// Sources placed one after another along `axis` (`concatenate`; `stack` is a
    /// concatenation of sources with a new size-1 axis): source `k` covers the
    /// coordinates `offsets[k]..offsets[k + 1]` of that axis (`offsets` has one entry
    /// more than there are sources).
    Concat {
        axis: usize,
        offsets: SmallVec<[usize; 4]>,
    },
    /// One source surrounded by a constant (`pad`): the source covers `before[d] ..
    /// before[d] + source_shape[d]` of each axis `d`; elsewhere the fill value (the node's
    /// second operand, a scalar).
    Pad { before: SmallVec<[usize; 4]> },
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ax(from: Option<usize>, start: isize, step: isize) -> SourceAxis {
        SourceAxis { from, start, step }
    }

    /// Applies a map to view coordinates.
    fn read(m: &ViewMap, view: &[isize]) -> Vec<isize> {
        m.axes
            .iter()
            .map(|a| a.start + a.from.map_or(0, |f| a.step * view[f]))
            .collect()
    }

    #[test]
    fn composition_reads_what_the_two_maps_read_one_after_the_other() {
        // inner: a transposed, reversed-rows view of a [5, 7] source (view shape [7, 5]).
        let inner = ViewMap {
            axes: [ax(Some(1), 4, -1), ax(Some(0), 0, 1)].into_iter().collect(),
        };
        // outer: rows 1..7 step 2 of that view, its column 3 fixed, and a new axis in front.
        let outer = ViewMap {
            axes: [ax(Some(1), 1, 2), ax(None, 3, 1)].into_iter().collect(),
        };
        let both = outer.then(&inner);
        for i in 0..3 {
            let mid = read(&outer, &[0, i]);
            assert_eq!(read(&both, &[0, i]), read(&inner, &mid));
        }
    }

    #[test]
    fn identity_is_recognised_with_size_one_axes_mapped_anywhere() {
        let m = ViewMap::identity(2);
        assert!(m.is_identity(&[3, 4], &[3, 4]));
        assert!(!m.is_identity(&[3, 4], &[4, 3]));
        let odd = ViewMap {
            axes: [ax(None, 0, 1), ax(Some(1), 0, 1)].into_iter().collect(),
        };
        assert!(odd.is_identity(&[1, 4], &[1, 4]));
        assert!(!odd.is_identity(&[2, 4], &[2, 4]));
    }
}
