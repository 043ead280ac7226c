//! How a kernel reads its cone: every node it uses, at every [`Access`] it is read with.
//!
//! Without views each node is read once, at the kernel's own coordinates (broadcast where
//! its shape is smaller). A view, a region's source or a reshape reads its operand
//! elsewhere, so one node may be read at several accesses (the three shifted slices of a
//! stencil), each its own value; views and reshapes are no values of their own, only
//! the accesses of what they read. The walk runs from the targets down (consumers come
//! after their operands in the collected order), and gathers the loads (a node read from
//! memory, at one access) and the boxes the regions test, which the collapse of the
//! kernel's dims must respect.

use smallvec::SmallVec;

use super::access::{Access, Affine, Bound};
use super::collect::{GKind, Movement, OpCode};
use super::cone::{ConeView, NodeMap};
use crate::graph::view::{Region, SourceAxis, ViewMap};
use crate::graph::{Shape, TakeSpec};

/// The accesses of one kernel's nodes, and what they load.
pub(super) struct Reads {
    /// Per node of the cone, the distinct accesses it is read with (a scalar: the first
    /// only); see [`Reads::accesses`].
    accesses: NodeMap<SmallVec<[Access; 1]>>,
    /// Every load, in node order: its memory, and how it is read.
    pub(super) loads: Vec<Load>,
    /// The bounds of every box a region tests (they keep their dims from merging).
    pub(super) boxes: Vec<SmallVec<[Bound; 2]>>,
}

/// A node read from memory at one access.
pub(super) struct Load {
    /// The graph node whose memory is read (a reshape's operand for a reshape).
    pub(super) node: usize,
    /// The node whose value the load is: `node` itself, or the reshape reading it.
    pub(super) reader: usize,
    /// The shape the memory is read as (the reader's).
    pub(super) shape: Shape,
    pub(super) access: Access,
    /// Read through the indices of a `take` (always a strided load: the index adds to
    /// its offset).
    pub(super) gathered: bool,
}

impl ConeView<'_> {
    /// The shape of node `j`.
    fn shape(&self, j: usize) -> &[usize] {
        &self.graph[j].node.shape
    }

    /// The accesses of the operands of node `j` (computed inside) when it is read at `a`,
    /// with the boxes of a region's sources: `(operand, access)`. A reshape's operand is
    /// a load, not listed.
    pub(super) fn operand_accesses(
        &self,
        j: usize,
        a: &Access,
        space: &[usize],
    ) -> SmallVec<[(usize, Access); 3]> {
        let g = &self.graph[j];
        let GKind::Op(code, inputs) = &g.kind else {
            return SmallVec::new();
        };
        match (code, &g.movement) {
            // A GEMM epilogue's product is its accumulators, a scan epilogue's its scanned
            // element: not read from their operands.
            (OpCode::Reshape | OpCode::MatMul | OpCode::Scan(_) | OpCode::Fft(_), _) => SmallVec::new(),
            (OpCode::Take(spec), _) => {
                let (data, indices) = (inputs[0], inputs[1]);
                let (data_map, index_map) =
                    take_maps(*spec, self.shape(j), self.shape(data), self.shape(indices));
                smallvec::smallvec![(data, a.view(&data_map)), (indices, a.view(&index_map))]
            }
            // A row reduction inside a column reduction reads its rows over the kernel's
            // whole space.
            (OpCode::Reduce(_), _) => inputs
                .iter()
                .map(|&i| (i, Access::identity(space.len())))
                .collect(),
            (OpCode::View, Some(Movement::View(map))) => inputs.iter().map(|&i| (i, a.view(map))).collect(),
            (OpCode::Region, Some(Movement::Region(region))) => {
                self.parts(j, region, a, space).into_iter().flatten().collect()
            }
            _ => inputs
                .iter()
                .map(|&i| (i, a.broadcast(self.shape(j), self.shape(i))))
                .collect(),
        }
    }

    /// Each source of region node `j` read at `a`: its operand and access, or `None`
    /// where `a` never reads inside it. (A pad's fill value is read everywhere.)
    pub(super) fn parts(
        &self,
        j: usize,
        region: &Region,
        a: &Access,
        space: &[usize],
    ) -> Vec<Option<(usize, Access)>> {
        let GKind::Op(_, inputs) = &self.graph[j].kind else {
            return Vec::new();
        };
        match region {
            Region::Concat { axis, offsets } => inputs
                .iter()
                .enumerate()
                .map(|(p, &i)| {
                    let mut at: SmallVec<[usize; 4]> = smallvec::smallvec![0; self.shape(j).len()];
                    at[*axis] = offsets[p];
                    a.part(&at, self.shape(i), space).map(|pa| (i, pa))
                })
                .collect(),
            Region::Pad { before } => {
                let (src, fill) = (inputs[0], inputs[1]);
                vec![
                    a.part(before, self.shape(src), space).map(|pa| (src, pa)),
                    Some((fill, a.broadcast(self.shape(j), &[]))),
                ]
            }
        }
    }
}

/// How a take of `spec` (of shape `shape`) reads its data (the picked axis fixed at 0:
/// the index adds to the offset) and its indices (at the coordinates they fill; where
/// their shapes broadcast, axes of length 1 at 0). As [`Access::broadcast`] reads: an
/// axis as long as the take's own is read at its coordinate, even of length 1, so that
/// indices of the take's shape are read at its own coordinates (what an epilogue asks).
fn take_maps(spec: TakeSpec, shape: &[usize], data: &[usize], indices: &[usize]) -> (ViewMap, ViewMap) {
    let at = |k: usize, n: usize| SourceAxis {
        from: (n == shape[k]).then_some(k),
        start: 0,
        step: 1,
    };
    let fixed = SourceAxis {
        from: None,
        start: 0,
        step: 1,
    };
    let axis = spec.axis;
    if spec.along {
        let data_map = (0..data.len())
            .map(|d| if d == axis { fixed } else { at(d, data[d]) })
            .collect();
        let index_map = (0..indices.len()).map(|d| at(d, indices[d])).collect();
        return (ViewMap { axes: data_map }, ViewMap { axes: index_map });
    }
    let picked = indices.len();
    let data_map = (0..data.len())
        .map(|d| match d.cmp(&axis) {
            std::cmp::Ordering::Less => at(d, data[d]),
            std::cmp::Ordering::Equal => fixed,
            std::cmp::Ordering::Greater => at(d - 1 + picked, data[d]),
        })
        .collect();
    let index_map = (0..picked).map(|d| at(axis + d, indices[d])).collect();
    (ViewMap { axes: data_map }, ViewMap { axes: index_map })
}

/// Walks the cone from `targets` (read at the kernel's coordinates) and `extra` (a
/// total's operand, broadcast into the space) down to the loads.
pub(super) fn walk(cone: &ConeView, targets: &[usize], extra: Option<usize>, space: &[usize]) -> Reads {
    let mut accesses: NodeMap<SmallVec<[Access; 1]>> = NodeMap::default();
    accesses.reserve(cone.used.len());
    let mut boxes = Vec::new();
    let id = Access::identity(space.len());
    for &t in targets {
        add(accesses.entry(t).or_default(), id.clone(), false);
    }
    if let Some(e) = extra {
        add(
            accesses.entry(e).or_default(),
            id.broadcast(space, cone.shape(e)),
            false,
        );
    }
    // The data accesses of `take`s: loads through an index.
    let mut gathered: Vec<(usize, Access)> = Vec::new();
    for &j in cone.used.iter().rev().filter(|j| cone.inside.contains(j)) {
        let scalar = |i: usize| matches!(cone.graph[i].kind, GKind::Scalar(_));
        let take = matches!(cone.graph[j].kind, GKind::Op(OpCode::Take(_), _));
        let read_at = accesses.get(&j).cloned().unwrap_or_default();
        for a in read_at {
            if let Some(Movement::Region(region)) = &cone.graph[j].movement {
                boxes.extend(
                    cone.parts(j, region, &a, space)
                        .into_iter()
                        .flatten()
                        .map(|(_, pa)| pa.bounds),
                );
            }
            for (k, (i, ia)) in cone.operand_accesses(j, &a, space).into_iter().enumerate() {
                if take && k == 0 {
                    gathered.push((i, ia.clone()));
                }
                add(accesses.entry(i).or_default(), ia, scalar(i));
            }
        }
    }
    let mut loads = Vec::new();
    for &j in cone.used {
        let g = &cone.graph[j];
        let read = if !cone.inside.contains(&j) {
            Some(j)
        } else if let GKind::Op(OpCode::Reshape, inputs) = &g.kind {
            Some(inputs[0])
        } else {
            None
        };
        if let Some(node) = read {
            for a in accesses.get(&j).into_iter().flatten() {
                loads.push(Load {
                    node,
                    reader: j,
                    shape: g.node.shape.clone(),
                    access: a.clone(),
                    gathered: gathered.iter().any(|(i, ga)| *i == j && ga == a),
                });
            }
        }
    }
    Reads {
        accesses,
        loads,
        boxes,
    }
}

impl Reads {
    /// The distinct accesses node `j` is read with (none: the kernel does not read it).
    pub(super) fn accesses(&self, j: usize) -> &[Access] {
        self.accesses.get(&j).map_or(&[], |a| a.as_slice())
    }

    /// The row-major offsets, in their own shapes, of the coordinates the random nodes
    /// computed inside are read at (over the kernel's full rank): indices that the
    /// collapse of the kernel's dims must respect, as a load's offset.
    pub(super) fn index_offsets(&self, cone: &ConeView, rank: usize) -> Vec<Affine> {
        cone.used
            .iter()
            .filter(|&j| cone.inside.contains(j))
            .filter(|&&j| matches!(cone.graph[j].kind, GKind::Op(OpCode::FromIndex(_), _)))
            .flat_map(|&j| {
                self.accesses(j)
                    .iter()
                    .map(move |a| a.affine(&cone.graph[j].node.shape, rank))
            })
            .collect()
    }
}

/// Adds access `a` to a node's list unless it is there (a scalar keeps only its first).
fn add(list: &mut SmallVec<[Access; 1]>, a: Access, scalar: bool) {
    if !(list.contains(&a) || (scalar && !list.is_empty())) {
        list.push(a);
    }
}
