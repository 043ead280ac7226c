//! Cutting the collected graph into kernels: which nodes are materialized (roots,
//! reductions, matrix products, and cut points that bound a kernel's size), and which
//! materialization points share a kernel.

use super::collect::{GKind, GNode, OpCode};
use super::cone::NodeSet;
use super::row_kernel::{row_kernel, RowSpace};
use crate::profile::DeviceProfile;

/// Most nodes one node's cone may have before it is materialized as its own kernel output.
pub(crate) const MAX_CONE_NODES: usize = 64;

/// Chooses the nodes to materialize: the roots, plus cut points that keep every kernel
/// within [`MAX_CONE_NODES`] and `max_args` arguments. A node over the budget has its
/// computed operands cut, then itself if it is still over (its own operands are that
/// many: a region's sources are at most
/// [`MAX_REGION_SOURCES`](crate::graph::view::MAX_REGION_SOURCES)).
pub(crate) fn materialization_points(graph: &[GNode], roots: &[usize], max_args: usize) -> Vec<bool> {
    let mut mat = vec![false; graph.len()];
    for &r in roots {
        if !matches!(graph[r].kind, GKind::Ready(_)) {
            mat[r] = true;
        }
    }
    for (i, g) in graph.iter().enumerate() {
        if matches!(g.kind, GKind::Op(code, _) if !code.is_elementwise()) {
            mat[i] = true;
        }
    }
    // Estimated cone size and argument count of each node as seen by its consumers
    // (over-counts shared subexpressions, which only makes cuts a little earlier).
    let mut cone = vec![0usize; graph.len()];
    let mut args = vec![0usize; graph.len()];
    for (i, g) in graph.iter().enumerate() {
        match &g.kind {
            GKind::Ready(_) | GKind::Scalar(_) => {
                cone[i] = 0;
                args[i] = 1;
            }
            GKind::Op(code, inputs) => {
                if let OpCode::Take(_) = code {
                    // The data is read through the indices, from memory of its own.
                    let data = inputs[0];
                    if matches!(graph[data].kind, GKind::Op(..)) {
                        mat[data] = true;
                        cone[data] = 0;
                        args[data] = 1;
                    }
                }
                if *code == OpCode::Reshape {
                    // A reshape reads its operand's memory in place: the operand is
                    // computed first (unless it is materialized already).
                    for &j in inputs {
                        if matches!(graph[j].kind, GKind::Op(..)) {
                            mat[j] = true;
                            cone[j] = 0;
                            args[j] = 1;
                        }
                    }
                }
                let mut c = 1 + inputs.iter().map(|&j| cone[j]).sum::<usize>();
                let mut a = inputs.iter().map(|&j| args[j]).sum::<usize>();
                let over = |c: usize, a: usize| c >= MAX_CONE_NODES || a >= max_args;
                if over(c, a) {
                    // Its computed operands are cut first: each is within the budget, and
                    // the node starts a kernel of its own operands' loads. (Cutting the
                    // node alone would keep them all inside it: for a node of many
                    // operands, a concatenation's, a kernel many times the budget.)
                    for (k, &j) in inputs.iter().enumerate() {
                        if matches!(graph[j].kind, GKind::Op(..)) && !mat[j] && !inputs[..k].contains(&j) {
                            let times = inputs.iter().filter(|&&o| o == j).count();
                            c -= times * cone[j];
                            a = a - times * args[j] + times;
                            mat[j] = true;
                            cone[j] = 0;
                            args[j] = 1;
                        }
                    }
                    if over(c, a) {
                        mat[i] = true;
                    }
                }
                if mat[i] {
                    cone[i] = 0;
                    args[i] = 1;
                } else {
                    cone[i] = c;
                    args[i] = a;
                }
            }
        }
    }
    mat
}

/// What a kernel of materialization points computes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum GroupKind {
    Elementwise,
    Reduction,
    /// The GEMM kernel of the product at this graph index, with the elementwise points
    /// of its shape that joined its epilogue.
    Gemm(usize),
    /// The kernel of the scan or transform pass at this graph index (an axis kernel), with
    /// the elementwise points of its shape that joined its store (its epilogue).
    Axis(usize),
    /// A row kernel (`plan::row_kernel`): reductions along the rows of a space (the group's
    /// shape) and the elementwise points of that space that read them per row. Planned
    /// as a plain reduction while it has one member.
    Rows(RowSpace),
}

/// A kernel of materialization points being grouped.
struct Group {
    shape: Vec<usize>,
    members: Vec<usize>,
    kind: GroupKind,
    /// The nodes its members compute inside (a node shared by two members counted twice).
    nodes: usize,
    /// What its members read: leaves and materialized nodes, each once.
    leaves: NodeSet,
}

/// Most nodes the members of one kernel compute together: several points of one shape
/// share a kernel up to this size (one point's cone is bounded by [`MAX_CONE_NODES`]).
pub(crate) const MAX_KERNEL_NODES: usize = 4 * MAX_CONE_NODES;

impl Group {
    /// Whether a point computing `nodes` nodes and reading `leaves` keeps this kernel
    /// within [`MAX_KERNEL_NODES`] and `args` arguments (what it reads and writes).
    fn has_room(&self, nodes: usize, leaves: &NodeSet, args: usize) -> bool {
        let new = leaves.iter().filter(|j| !self.leaves.contains(j)).count();
        self.nodes + nodes <= MAX_KERNEL_NODES && self.leaves.len() + new + self.members.len() < args
    }
}

/// Groups materialization points into kernels: one kernel per output shape where the
/// dependencies and the kernel's size ([`Group::has_room`]) allow, in an order where every kernel runs after those it reads from.
/// A point that reads a cut point (`cut[d]`: materialized only to bound kernel size) goes
/// to a later kernel than the cut, so cuts really split. A reduction and a matrix product
/// each start a kernel of their own; elementwise points of a product's (or a scan's)
/// shape may join its kernel (its epilogue) where they read it only at its own
/// coordinates ([`joins_epilogue`]). The first member of such a kernel is the product
/// (the scan).
///
/// A reduction along the innermost axes whose rows fit on chip ([`row_kernel`]) starts a
/// row kernel; later reductions along the same rows and elementwise points of that space
/// join it where they read its reductions only per row ([`joins_rows`]).
pub(crate) fn group_kernels(
    graph: &[GNode],
    mat: &[bool],
    cut: &[bool],
    profile: &DeviceProfile,
) -> Vec<Vec<usize>> {
    let max_args = profile.max_args();
    let mut groups: Vec<Group> = Vec::new();
    let mut group_of: Vec<Option<usize>> = vec![None; graph.len()];
    for p in (0..graph.len()).filter(|&i| mat[i]) {
        let point = Point::walk(graph, mat, cut, &group_of, p);
        let rows = row_kernel(graph, p, profile);
        // (A row kernel's shape is its space: its reductions' operands'.)
        let shape = match &rows {
            Some(space) => &graph[space.operand].node.shape,
            None => &graph[p].node.shape,
        };
        let kind = match &graph[p].kind {
            GKind::Op(OpCode::Reduce(_), _) => match rows {
                Some(space) => GroupKind::Rows(space),
                None => GroupKind::Reduction,
            },
            // (A scan or a transform pass is a kernel of its own too, and joins nothing.)
            GKind::Op(OpCode::Scan(_) | OpCode::Fft(_), _) => GroupKind::Axis(p),
            GKind::Op(OpCode::MatMul, _) => GroupKind::Gemm(p),
            _ => GroupKind::Elementwise,
        };
        // A cut point, materialized only to bound kernel sizes, joins within half the
        // argument budget: cut points that share little (a long concatenation's parts)
        // gain only a launch from one kernel, and a larger kernel costs its build (on
        // PoCL, more than in proportion to its size).
        let args = if cut[p] { max_args / 2 } else { max_args };
        let candidate = point.candidate(graph, mat, &groups, kind, shape, args);
        let g = match candidate {
            Some(c) if point.latest_dep.is_none_or(|d| d <= c) && point.after_cut.is_none_or(|d| d < c) => c,
            _ => {
                groups.push(Group {
                    shape: shape.to_vec(),
                    members: Vec::new(),
                    kind,
                    nodes: 0,
                    leaves: NodeSet::default(),
                });
                groups.len() - 1
            }
        };
        groups[g].nodes += point.nodes;
        groups[g].leaves.extend(point.leaves);
        groups[g].members.push(p);
        group_of[p] = Some(g);
    }
    groups.into_iter().map(|g| g.members).collect()
}

/// A materialization point being grouped: what its cone reads, down to materialized
/// nodes and leaves.
struct Point {
    node: usize,
    /// The latest group among the materialization points it reads (not through others):
    /// it may join that group, or a later one.
    latest_dep: Option<usize>,
    /// The latest group among the cut points it reads: it goes to a later one, so that
    /// cuts really split.
    after_cut: Option<usize>,
    /// The nodes it computes inside (itself included).
    nodes: usize,
    /// What it reads: leaves and materialized nodes, each once.
    leaves: NodeSet,
}

impl Point {
    /// Walks the cone of point `p`, whose materialized operands are in the groups
    /// `group_of` says.
    fn walk(graph: &[GNode], mat: &[bool], cut: &[bool], group_of: &[Option<usize>], p: usize) -> Point {
        let mut latest_dep: Option<usize> = None;
        let mut after_cut: Option<usize> = None;
        let mut seen = NodeSet::default();
        let (mut nodes, mut leaves) = (1, NodeSet::default());
        let mut stack = match &graph[p].kind {
            GKind::Op(_, inputs) => inputs.to_vec(),
            _ => Vec::new(),
        };
        while let Some(j) = stack.pop() {
            if !seen.insert(j) {
                continue;
            }
            if mat[j] {
                latest_dep = latest_dep.max(group_of[j]);
                if cut[j] {
                    after_cut = after_cut.max(group_of[j]);
                }
                leaves.insert(j);
                continue;
            }
            match &graph[j].kind {
                GKind::Op(_, inputs) => {
                    nodes += 1;
                    stack.extend(inputs.iter().copied());
                }
                _ => {
                    leaves.insert(j);
                }
            }
        }
        Point {
            node: p,
            latest_dep,
            after_cut,
            nodes,
            leaves,
        }
    }

    /// The latest of `groups` that this point, of `kind` and `shape`, may join within
    /// `args` arguments, its dependencies aside (the caller checks those). Elementwise
    /// points join the latest kernel of their shape; a reduction of a product's epilogue
    /// along its rows joins the product's kernel (see `joins_as_row`), one along the rows
    /// of a row kernel joins that.
    fn candidate(
        &self,
        graph: &[GNode],
        mat: &[bool],
        groups: &[Group],
        kind: GroupKind,
        shape: &[usize],
        args: usize,
    ) -> Option<usize> {
        let p = self.node;
        match kind {
            GroupKind::Elementwise => groups.iter().rposition(|g| {
                g.shape[..] == shape[..]
                    && g.has_room(self.nodes, &self.leaves, args)
                    && match g.kind {
                        GroupKind::Elementwise => true,
                        GroupKind::Reduction => false,
                        GroupKind::Gemm(product) | GroupKind::Axis(product) => {
                            joins_epilogue(graph, mat, &g.members, p, product)
                        }
                        GroupKind::Rows(space) => joins_rows(graph, mat, &g.members, p, &space, false),
                    }
            }),
            GroupKind::Reduction | GroupKind::Rows(_) => groups.iter().rposition(|g| match g.kind {
                GroupKind::Gemm(product) => joins_as_row(graph, mat, &g.members, p, product),
                GroupKind::Rows(space) => match kind {
                    GroupKind::Rows(mine) => {
                        mine.inner == space.inner
                            && g.shape[..] == shape[..]
                            && joins_rows(graph, mat, &g.members, mine.operand, &space, true)
                    }
                    _ => false,
                },
                _ => false,
            }),
            GroupKind::Gemm(_) | GroupKind::Axis(_) => None,
        }
    }
}

/// The longest rows a GEMM kernel reduces inside: its work-groups cover whole rows, and
/// no candidate tile is wider.
pub(crate) const GEMM_ROW_MAX: usize = 128;

/// Whether reduction `r` may be computed in the GEMM kernel of `product` (members so far
/// `members`): it reduces exactly the last axis of an operand of the product's shape that
/// the epilogue can compute ([`joins_epilogue`]), the rows are 1 to [`GEMM_ROW_MAX`]
/// long (a product with empty rows launches nothing), and the kernel has no row
/// reduction yet.
fn joins_as_row(graph: &[GNode], mat: &[bool], members: &[usize], r: usize, product: usize) -> bool {
    let GKind::Op(OpCode::Reduce(spec), inputs) = &graph[r].kind else {
        return false;
    };
    let operand = inputs[0];
    let shape = &graph[product].node.shape;
    let rank = shape.len();
    let has_row = members
        .iter()
        .any(|&m| matches!(graph[m].kind, GKind::Op(OpCode::Reduce(_), _)));
    graph[operand].node.shape == *shape
        && spec.axes == 1 << (rank - 1)
        && (1..=GEMM_ROW_MAX).contains(&shape[rank - 1])
        && !has_row
        && joins_epilogue(graph, mat, members, operand, product)
}

/// Whether elementwise point `q` may be computed in the epilogue of the GEMM kernel of
/// `product` (whose members so far are `members`): every node through which `q` reads
/// the product, computed inside that kernel, reads it at the product's own coordinates
/// (has its shape, and is no view, region or reshape, nor a take of it as data), since
/// the epilogue holds the product only there, in its accumulators.
fn joins_epilogue(graph: &[GNode], mat: &[bool], members: &[usize], q: usize, product: usize) -> bool {
    let inside = |j: usize| j == q || (j != product && (!mat[j] || members.contains(&j)));
    // The nodes computed inside that q reads, in graph (topological) order.
    let mut cone = NodeSet::default();
    let mut stack = vec![q];
    while let Some(j) = stack.pop() {
        if !cone.insert(j) {
            continue;
        }
        if let GKind::Op(_, inputs) = &graph[j].kind {
            stack.extend(inputs.iter().copied().filter(|&i| inside(i)));
        }
    }
    let shape = &graph[product].node.shape;
    let mut reaches = NodeSet::default();
    for j in in_order(&cone) {
        let GKind::Op(code, inputs) = &graph[j].kind else {
            continue;
        };
        if !inputs.iter().any(|&i| i == product || reaches.contains(&i)) {
            continue;
        }
        reaches.insert(j);
        // (A take reads its data through its indices, from memory: never the product's
        // accumulators; reading the product as its indices is a read at its coordinates.)
        let gathers =
            matches!(code, OpCode::Take(_)) && (inputs[0] == product || reaches.contains(&inputs[0]));
        let plain = graph[j].node.shape == *shape
            && !gathers
            && !matches!(code, OpCode::View | OpCode::Region | OpCode::Reshape);
        if !plain {
            return false;
        }
    }
    true
}

/// Whether each graph node is read by a kernel other than its own (`groups`, as
/// [`group_kernels`] made them): a product that is not is computed in its epilogue only,
/// and never stored.
pub(crate) fn read_elsewhere(graph: &[GNode], mat: &[bool], groups: &[Vec<usize>]) -> Vec<bool> {
    let mut group_of: Vec<Option<usize>> = vec![None; graph.len()];
    for (g, members) in groups.iter().enumerate() {
        for &m in members {
            group_of[m] = Some(g);
        }
    }
    let mut elsewhere = vec![false; graph.len()];
    for (g, members) in groups.iter().enumerate() {
        let mut seen = NodeSet::default();
        let mut stack: Vec<usize> = Vec::new();
        for &m in members {
            if let GKind::Op(_, inputs) = &graph[m].kind {
                stack.extend(inputs.iter().copied());
            }
        }
        while let Some(j) = stack.pop() {
            if !seen.insert(j) {
                continue;
            }
            if mat[j] {
                if group_of[j] != Some(g) {
                    elsewhere[j] = true;
                }
                continue;
            }
            if let GKind::Op(_, inputs) = &graph[j].kind {
                stack.extend(inputs.iter().copied());
            }
        }
    }
    elsewhere
}

/// Whether `q` may be computed in the row kernel over `space` whose members so far are
/// `members`: as an elementwise point of the space (`reduction` false: in the epilogue)
/// or as the operand of a reduction along its rows (`reduction` true: in a phase of its
/// own, before the epilogue, so it may not read an elementwise member). Every node
/// computed inside that reaches a member reads it per row: it is an elementwise
/// operation (no view, region, reshape or gather) whose shape keeps the space's outer
/// dims and has each row dim either whole or 1; a reduction member is itself of such a
/// shape (its reduced dims kept, as size 1), and an elementwise member is read only at
/// its own coordinates (by nodes of the space's shape).
fn joins_rows(
    graph: &[GNode],
    mat: &[bool],
    members: &[usize],
    q: usize,
    space: &RowSpace,
    reduction: bool,
) -> bool {
    let shape = &graph[space.operand].node.shape;
    let rank = shape.len();
    let outer = rank - space.inner;
    let per_row = |s: &[usize]| {
        s.len() == rank
            && s[..outer] == shape[..outer]
            && (outer..rank).all(|d| s[d] == 1 || s[d] == shape[d])
    };
    let member = |j: usize| members.contains(&j);
    let inside = |j: usize| j == q || !mat[j] || member(j);
    let mut cone = NodeSet::default();
    let mut stack = vec![q];
    while let Some(j) = stack.pop() {
        if !cone.insert(j) || (member(j) && j != q) {
            continue;
        }
        if let GKind::Op(_, inputs) = &graph[j].kind {
            stack.extend(inputs.iter().copied().filter(|&i| inside(i)));
        }
    }
    // Whether each node reaches a reduction member, or an elementwise member.
    let (mut reaches_row, mut reaches_own) = (NodeSet::default(), NodeSet::default());
    for j in in_order(&cone) {
        let GKind::Op(code, inputs) = &graph[j].kind else {
            continue;
        };
        if member(j) && j != q {
            match code {
                OpCode::Reduce(_) => {
                    if !per_row(&graph[j].node.shape) {
                        return false;
                    }
                    reaches_row.insert(j);
                }
                _ if reduction => return false,
                _ => {
                    reaches_own.insert(j);
                }
            }
            continue;
        }
        let row = inputs.iter().any(|i| reaches_row.contains(i));
        let own = inputs.iter().any(|i| reaches_own.contains(i));
        if row {
            reaches_row.insert(j);
        }
        if own {
            reaches_own.insert(j);
        }
        if !row && !own {
            continue;
        }
        let plain = code.is_elementwise()
            && !matches!(
                code,
                OpCode::View | OpCode::Region | OpCode::Reshape | OpCode::Take(_)
            );
        let node_shape = &graph[j].node.shape;
        if !plain || !per_row(node_shape) || (own && node_shape[..] != shape[..]) {
            return false;
        }
    }
    true
}

/// The nodes of `set` in graph (topological) order.
fn in_order(set: &NodeSet) -> Vec<usize> {
    let mut v: Vec<usize> = set.iter().copied().collect();
    v.sort_unstable();
    v
}
