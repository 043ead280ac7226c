//! What each kind of operation needs of its operands to compute a run of its rows on one
//! device, and how that run is recorded on the device: every kind's share in one place.
//!
//! A run of rows `r` of a node reads, of each operand, the rows its index map sends `r`
//! to: the same rows for an elementwise operand of the node's shape, every row for one
//! broadcast along axis 0, the mapped rows for a view (a shifted slice reads a few rows
//! more: its halo), the intersecting sources of a concatenation along axis 0. Where no
//! narrower rule applies, the device computes the whole node and keeps its rows
//! ([`Build::Whole`]): always right, and only as costly as the whole array.

use std::ops::Range;

use smallvec::SmallVec;

use crate::graph::parts::row_count;
use crate::graph::view::{Region, SourceAxis, ViewMap};
use crate::graph::{Node, NodeRef, Op, Shape};

/// The rows of each operand a run of a node's rows needs, and how to record the run.
pub(crate) struct Window {
    /// Per operand, in the order of [`Op::inputs`]: the rows needed (`None`: not read).
    pub(crate) operands: SmallVec<[Option<Range<usize>>; 4]>,
    pub(crate) build: Build,
}

/// How a run of a node's rows is recorded on a device, from its operands' rows.
pub(crate) enum Build {
    /// The same operation over the operands' rows.
    Same,
    /// The operation over whole operands, then the run's rows of the result.
    Whole,
    /// A view of the operand's rows through this map.
    View(ViewMap),
    /// The operand's rows reshaped: the run's elements start `skip` elements in.
    Reshape { skip: usize },
    /// This region over the operands that are read.
    Region(Region),
    /// The one operand that is read is the run.
    Operand,
    /// No rows: an empty array.
    Empty,
}

/// How node `node` (computed by `op`) gets its rows `rows` on a device.
pub(crate) fn window(node: &Node, op: &Op, rows: &Range<usize>) -> Window {
    let inputs = op.inputs();
    let full = |n: &NodeRef| Some(0..row_count(&n.shape));
    let whole = |build: Build| Window {
        operands: inputs.iter().map(|n| full(n)).collect(),
        build,
    };
    if rows.is_empty() && !node.shape.is_empty() {
        return Window {
            operands: inputs.iter().map(|_| None).collect(),
            build: Build::Empty,
        };
    }
    if node.shape.is_empty() || *rows == (0..node.shape[0]) {
        return whole(Build::Same);
    }
    let aligned = |n: &NodeRef| n.shape.len() == node.shape.len() && n.shape[0] == node.shape[0];
    let along = |n: &NodeRef| if aligned(n) { Some(rows.clone()) } else { full(n) };
    let same = |operands: SmallVec<[Option<Range<usize>>; 4]>| Window {
        operands,
        build: Build::Same,
    };
    match op {
        Op::Scalar(_) => same(SmallVec::new()),
        Op::Unary(..) | Op::Binary(..) | Op::WithScalar(..) | Op::Ternary(..) | Op::Expr(..) => {
            same(inputs.iter().map(|n| along(n)).collect())
        }
        Op::Reduce(spec, a) if spec.axes & 1 == 0 && !a.shape.is_empty() => {
            same(smallvec::smallvec![Some(rows.clone())])
        }
        Op::Scan(spec, _) if spec.axis != 0 => same(smallvec::smallvec![Some(rows.clone())]),
        Op::Fft(spec, _) if spec.axis != 0 => same(smallvec::smallvec![Some(rows.clone())]),
        Op::MatMul(a, b) if a.shape.len() >= 2 && b.shape.len() >= 2 => {
            if node.shape.len() == 2 {
                same(smallvec::smallvec![Some(rows.clone()), full(b)])
            } else {
                same(smallvec::smallvec![along(a), along(b)])
            }
        }
        Op::Take { spec, data, indices } => match (spec.along, spec.axis) {
            (false, 0) if !indices.shape.is_empty() => {
                same(smallvec::smallvec![full(data), Some(rows.clone())])
            }
            (false, 0) => whole(Build::Whole),
            (false, _) => same(smallvec::smallvec![Some(rows.clone()), full(indices)]),
            (true, 0) => same(smallvec::smallvec![full(data), along(indices)]),
            (true, _) => same(smallvec::smallvec![along(data), along(indices)]),
        },
        Op::View(map, src) => view(node, map, src, rows),
        Op::Reshape(a) => reshape(node, a, rows).unwrap_or_else(|| whole(Build::Whole)),
        Op::Region(region, sources) => match &**region {
            Region::Concat { axis, .. } if *axis != 0 => same(sources.iter().map(along).collect()),
            Region::Concat { offsets, .. } => concat(offsets, rows),
            Region::Pad { before } => pad(before, &sources[0], rows).unwrap_or_else(|| whole(Build::Whole)),
        },
        // Values computed from their index (random numbers, positions) take the index in
        // the whole array.
        Op::FromIndex(..) | Op::Reduce(..) | Op::Scan(..) | Op::Fft(..) | Op::MatMul(..) => {
            whole(Build::Whole)
        }
    }
}

/// A view's rows read the source rows its map sends them to (all of them where the
/// source's axis 0 follows another view axis, as in a transpose); the map is rebased on
/// the rows fetched.
fn view(node: &Node, map: &ViewMap, src: &NodeRef, rows: &Range<usize>) -> Window {
    let mut axes = map.axes.clone();
    for a in axes.iter_mut().filter(|a| a.from == Some(0)) {
        a.start += a.step * rows.start as isize;
    }
    let Some(a0) = map.axes.first().copied() else {
        return Window {
            operands: smallvec::smallvec![Some(0..1)],
            build: Build::View(ViewMap { axes }),
        };
    };
    let extent = |from: usize, len: usize| -> Range<isize> {
        let last = a0.start + a0.step * (len as isize - 1);
        let first = a0.start + a0.step * from as isize;
        first.min(last)..first.max(last) + 1
    };
    let need = match a0.from {
        Some(0) => extent(rows.start, rows.end),
        Some(f) => extent(0, node.shape[f]),
        None => a0.start..a0.start + 1,
    };
    let need = need.start.max(0) as usize..(need.end.max(0) as usize).min(src.shape[0]);
    axes[0] = SourceAxis {
        start: axes[0].start - need.start as isize,
        ..axes[0]
    };
    Window {
        operands: smallvec::smallvec![Some(need)],
        build: Build::View(ViewMap { axes }),
    }
}

/// A reshape's rows are a run of its operand's elements in row-major order: the rows
/// holding them, and where the run starts in the first. `None` where rows hold nothing.
fn reshape(node: &Node, a: &NodeRef, rows: &Range<usize>) -> Option<Window> {
    let per_row = node.shape[1..].iter().product::<usize>();
    let a_row = a.shape.get(1..)?.iter().product::<usize>();
    if per_row == 0 || a_row == 0 {
        return None;
    }
    let (first, last) = (rows.start * per_row, rows.end * per_row);
    let need = first / a_row..last.div_ceil(a_row);
    Some(Window {
        build: Build::Reshape {
            skip: first - need.start * a_row,
        },
        operands: smallvec::smallvec![Some(need)],
    })
}

/// A concatenation along axis 0 reads the sources whose rows the run meets.
fn concat(offsets: &[usize], rows: &Range<usize>) -> Window {
    let mut kept: SmallVec<[usize; 4]> = smallvec::smallvec![0];
    let operands: SmallVec<[Option<Range<usize>>; 4]> = offsets
        .windows(2)
        .map(|o| {
            let (lo, hi) = (rows.start.max(o[0]), rows.end.min(o[1]));
            (lo < hi).then(|| {
                kept.push(kept[kept.len() - 1] + hi - lo);
                lo - o[0]..hi - o[0]
            })
        })
        .collect();
    let build = if kept.len() == 2 {
        Build::Operand
    } else {
        Build::Region(Region::Concat {
            axis: 0,
            offsets: kept,
        })
    };
    Window { operands, build }
}

/// A padded array's rows read the source rows they overlap (`None`: none, only padding).
fn pad(before: &[usize], src: &NodeRef, rows: &Range<usize>) -> Option<Window> {
    let (b0, n) = (before[0], src.shape[0]);
    let (lo, hi) = (rows.start.max(b0), rows.end.min(b0 + n));
    if lo >= hi {
        return None;
    }
    let mut before: SmallVec<[usize; 4]> = before.iter().copied().collect();
    before[0] = lo - rows.start;
    Some(Window {
        operands: smallvec::smallvec![Some(lo - b0..hi - b0), Some(0..1)],
        build: Build::Region(Region::Pad { before }),
    })
}

/// The shape of rows `rows` of an array of shape `shape` (a 0-d array is its one row).
pub(crate) fn rows_shape(shape: &[usize], rows: &Range<usize>) -> Shape {
    let mut s: Shape = shape.iter().copied().collect();
    if let Some(first) = s.first_mut() {
        *first = rows.len();
    }
    s
}

/// Rows `want` of a device's node `node`, which holds rows `have` of an array of shape
/// `shape`: a view of it where they differ.
pub(crate) fn slice(node: &NodeRef, have: &Range<usize>, want: &Range<usize>, shape: &[usize]) -> NodeRef {
    if have == want || shape.is_empty() {
        return node.clone();
    }
    let mut map = ViewMap::identity(shape.len());
    map.axes[0].start = (want.start - have.start) as isize;
    node.view(map, rows_shape(shape, want))
}
