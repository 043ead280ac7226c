//! Cutting the collected graph into kernels: which nodes are materialized (roots,
//! reductions, and cut points that bound a kernel's size), and which materialization
//! points share a kernel.

use super::collect::{GKind, GNode, OpCode};

/// Most nodes one node's cone may have before it is materialized as its own kernel output.
pub(crate) const MAX_CONE_NODES: usize = 64;

/// Chooses the nodes to materialize: the roots, plus cut points that keep every kernel
/// within [`MAX_CONE_NODES`] and `max_args` arguments.
pub(crate) fn materialization_points(graph: &[GNode], roots: &[usize], max_args: usize) -> Vec<bool> {
    let mut mat = vec![false; graph.len()];
    for &r in roots {
        if !matches!(graph[r].kind, GKind::Ready(_)) {
            mat[r] = true;
        }
    }
    for (i, g) in graph.iter().enumerate() {
        if matches!(g.kind, GKind::Op(OpCode::Reduce(_), _)) {
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
                let c = 1 + inputs.iter().map(|&j| cone[j]).sum::<usize>();
                let a = inputs.iter().map(|&j| args[j]).sum::<usize>();
                if c >= MAX_CONE_NODES || a >= max_args {
                    mat[i] = true;
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

/// Groups materialization points into kernels: one kernel per output shape where the
/// dependencies allow, in an order where every kernel runs after those it reads from.
/// A point that reads a cut point (`cut[d]`: materialized only to bound kernel size) goes
/// to a later kernel than the cut, so cuts really split.
pub(crate) fn group_kernels(graph: &[GNode], mat: &[bool], cut: &[bool]) -> Vec<Vec<usize>> {
    let mut groups: Vec<(Vec<usize>, Vec<usize>, bool)> = Vec::new(); // (shape, members, is a reduction)
    let mut group_of: Vec<Option<usize>> = vec![None; graph.len()];
    for p in (0..graph.len()).filter(|&i| mat[i]) {
        // The latest group among the materialization points p reads (not through others);
        // p may join that group unless the dependency is a cut.
        let mut latest_dep: Option<usize> = None;
        let mut after_cut: Option<usize> = None;
        let mut seen = vec![false; 0];
        seen.resize(graph.len(), false);
        let mut stack = match &graph[p].kind {
            GKind::Op(_, inputs) => inputs.to_vec(),
            _ => Vec::new(),
        };
        while let Some(j) = stack.pop() {
            if std::mem::replace(&mut seen[j], true) {
                continue;
            }
            if mat[j] {
                latest_dep = latest_dep.max(group_of[j]);
                if cut[j] {
                    after_cut = after_cut.max(group_of[j]);
                }
                continue;
            }
            if let GKind::Op(_, inputs) = &graph[j].kind {
                stack.extend(inputs.iter().copied());
            }
        }
        let shape = &graph[p].node.shape;
        let reduction = matches!(graph[p].kind, GKind::Op(OpCode::Reduce(_), _));
        // A reduction is a kernel of its own; elementwise points join the latest kernel of
        // their shape when their dependencies allow.
        let candidate = if reduction {
            None
        } else {
            groups.iter().rposition(|(s, _, r)| s[..] == shape[..] && !r)
        };
        let g = match candidate {
            Some(c) if latest_dep.is_none_or(|d| d <= c) && after_cut.is_none_or(|d| d < c) => c,
            _ => {
                groups.push((shape.to_vec(), Vec::new(), reduction));
                groups.len() - 1
            }
        };
        groups[g].1.push(p);
        group_of[p] = Some(g);
    }
    groups.into_iter().map(|(_, m, _)| m).collect()
}
