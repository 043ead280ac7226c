//! A kernel's cone: which collected nodes it uses, which of them it computes inside (the
//! rest are its inputs), and which are its targets.
//!
//! Rule: nothing planned per kernel is sized by the flush's graph. A kernel uses a few
//! dozen nodes of a graph that can hold 10^5 (a long chain cut into bounded kernels), so
//! per-node data of one kernel lives in sets and maps keyed by graph index
//! ([`NodeSet`], [`NodeMap`]), and loops run over the kernel's own nodes: planning a
//! flush stays linear in its graph.

use rustc_hash::{FxHashMap, FxHashSet};

use super::collect::{GKind, GNode};

/// Graph indices of some of a kernel's nodes.
pub(super) type NodeSet = FxHashSet<usize>;

/// Per-node data of one kernel, keyed by graph index.
pub(super) type NodeMap<T> = FxHashMap<usize, T>;

/// What the walk (`reads`) and the binding (`values`) need to know of the kernel: the
/// graph, the nodes the kernel uses and those it computes inside.
pub(super) struct ConeView<'a> {
    pub(super) graph: &'a [GNode],
    /// The nodes the kernel uses, in graph order.
    pub(super) used: &'a [usize],
    /// Those it computes inside.
    pub(super) inside: &'a NodeSet,
}

/// Which collected nodes a kernel uses, which of them it computes inside (the rest are
/// its inputs), and which are its targets.
pub(super) struct Cone {
    /// Every node the kernel uses, in graph (topological) order.
    pub(super) used: Vec<usize>,
    pub(super) inside: NodeSet,
    pub(super) is_target: NodeSet,
}

impl Cone {
    /// The cone of `targets` (and `extra`): elementwise nodes that are not materialized
    /// are computed inside, as are the targets of an elementwise kernel and the row
    /// reduction `row`; the walk stops at everything else. `product`: the matrix product
    /// a GEMM kernel's epilogue reads, a value of its own (the accumulators), whose
    /// operands the epilogue does not read.
    pub(super) fn of(
        graph: &[GNode],
        mat: &[bool],
        targets: &[usize],
        extra: Option<usize>,
        reduces: bool,
        row: Option<usize>,
        product: Option<usize>,
    ) -> Cone {
        let is_target: NodeSet = targets.iter().copied().collect();
        let mut inside = NodeSet::default();
        let mut used = NodeSet::default();
        let mut stack: Vec<usize> = targets.to_vec();
        stack.extend(extra);
        while let Some(j) = stack.pop() {
            if !used.insert(j) {
                continue;
            }
            let elementwise = matches!(graph[j].kind, GKind::Scalar(_))
                || matches!(&graph[j].kind, GKind::Op(code, _) if code.is_elementwise());
            if product == Some(j) {
                inside.insert(j);
                continue;
            }
            let computed_here =
                (elementwise && (!mat[j] || (is_target.contains(&j) && !reduces))) || row == Some(j);
            if computed_here {
                inside.insert(j);
                if let GKind::Op(_, inputs) = &graph[j].kind {
                    stack.extend(inputs.iter().copied());
                }
            }
        }
        let mut used: Vec<usize> = used.into_iter().collect();
        used.sort_unstable();
        Cone {
            used,
            inside,
            is_target,
        }
    }

    /// What the walk reads of it.
    pub(super) fn view<'a>(&'a self, graph: &'a [GNode]) -> ConeView<'a> {
        ConeView {
            graph,
            used: &self.used,
            inside: &self.inside,
        }
    }
}
