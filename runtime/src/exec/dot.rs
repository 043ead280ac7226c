//! A planned flush drawn as Graphviz DOT (`Array::explain_dot`, `LAZYCL_DUMP_DOT`), in
//! the manner of PyTensor's `pydotprint` and TensorBoard's graph view:
//!
//! - one cluster (`subgraph cluster_<k>`) per kernel, in launch order, labelled with its
//!   kind (`plan::describe`) and whether it is new (generated and built by this flush)
//!   or cached;
//! - inside it, a box per graph operation it computes (`k<k>n<j>`, `j` the node's index
//!   in the collected graph); an operation that two kernels both compute (not written
//!   in between: recomputed, as elementwise producers are) appears in both;
//! - outside, the arrays already in memory (`n<j>`): uploads and fills as cylinders
//!   (`class="upload"`, `"fill"`), results of earlier flushes and of device algorithms as
//!   3-d boxes (`"earlier"`); host scalars as plain text (`"scalar"`, by-value
//!   arguments);
//! - materialization points: each array the flush writes has a double border; the roots
//!   (`class="root"`) a bold one too; the cut points (`"cut"`, written because a later
//!   kernel reads them) name their readers, and a 0-d one is a double ellipse
//!   (`"device-scalar"`): it stays on the device and later kernels load it, no host round
//!   trip; what a kernel writes for itself alone is `"written"` (a row kernel's
//!   reductions, read back by its later phases);
//! - edges follow the data: bold where a kernel reads what an earlier one wrote
//!   (`class="memory"`), dashed from scalars.
//!
//! The text depends only on the graph's structure and the plans, so equal flushes draw
//! equal pictures and tests can compare them.

use std::fmt::Write;

use crate::graph::Origin;
use crate::plan::describe::op_name;
use crate::plan::{GKind, GNode, KernelKind, KernelPlan};

/// What to draw: a flush's graph, roots and plans, and which kernels are cached.
pub(crate) struct Picture<'a> {
    pub(crate) graph: &'a [GNode],
    /// Graph indices of the roots.
    pub(crate) roots: &'a [usize],
    pub(crate) kernels: &'a [KernelPlan],
    /// Per kernel: found in the context's kernel cache (else this flush builds it).
    pub(crate) cached: &'a [bool],
    /// Kind of each kernel in one line (`plan::describe::kernel_kind`).
    pub(crate) kinds: &'a [String],
}

/// The graph nodes a kernel writes: its outputs and the reductions computed inside it.
fn written(plan: &KernelPlan) -> impl Iterator<Item = usize> + '_ {
    plan.outputs.iter().map(|o| o.node).chain(joined(plan))
}

/// The graph nodes of the reductions computed inside a kernel beside its outputs.
fn joined(plan: &KernelPlan) -> smallvec::SmallVec<[usize; 2]> {
    match &plan.kind {
        KernelKind::Reduction(r) => r.row.iter().chain(&r.row_total).map(|j| j.node).collect(),
        KernelKind::Gemm(g) => g.row.iter().map(|r| r.node).collect(),
        KernelKind::Elementwise
        | KernelKind::Tiled
        | KernelKind::Finishing(_)
        | KernelKind::Scan(_)
        | KernelKind::Fft(_)
        | KernelKind::Rows(_) => smallvec::SmallVec::new(),
    }
}

/// The picture as DOT text, titled `title`.
pub(crate) fn render(p: &Picture, title: &str) -> String {
    let flow = Flow::of(p);
    let mut s = String::new();
    let _ = writeln!(s, "digraph flush {{");
    let _ = writeln!(
        s,
        "  graph [label={}, labelloc=t, fontname=\"Helvetica\", rankdir=TB];",
        quote(title)
    );
    let _ = writeln!(s, "  node [fontname=\"Helvetica\", fontsize=10];");
    let _ = writeln!(s, "  edge [fontname=\"Helvetica\", fontsize=9];");
    for j in (0..p.graph.len()).filter(|&j| flow.outside[j]) {
        let _ = writeln!(s, "  n{j} [{}];", outside_attrs(p, j));
    }
    for (k, cone) in flow.cones.iter().enumerate() {
        cluster(p, &flow, k, cone, &mut s);
    }
    for (k, cone) in flow.cones.iter().enumerate() {
        for &j in cone {
            let GKind::Op(_, inputs) = &p.graph[j].kind else {
                continue;
            };
            for &i in inputs {
                let (from, style) = match (flow.writer[i], &p.graph[i].kind) {
                    (Some(w), _) if w != k => (format!("k{w}n{i}"), " [style=bold, class=\"memory\"]"),
                    (_, GKind::Op(..)) => (format!("k{k}n{i}"), ""),
                    (_, GKind::Scalar(_)) => (format!("n{i}"), " [style=dashed]"),
                    (_, GKind::Ready(_)) => (format!("n{i}"), ""),
                };
                let _ = writeln!(s, "  {from} -> k{k}n{j}{style};");
            }
        }
    }
    s.push_str("}\n");
    s
}

/// How data flows through a picture's kernels, by graph index.
struct Flow {
    /// The first kernel that writes each node, if one does.
    writer: Vec<Option<usize>>,
    /// Each kernel's operations, in graph order: what its outputs need, down to arrays in
    /// memory, scalars and what other kernels write.
    cones: Vec<Vec<usize>>,
    /// The kernels that read each array written here (other than its writer).
    readers: Vec<Vec<usize>>,
    /// The nodes read from outside the kernels (arrays in memory, scalars), and roots
    /// that no kernel computes.
    outside: Vec<bool>,
}

impl Flow {
    /// The flow of picture `p`.
    fn of(p: &Picture) -> Flow {
        let n = p.graph.len();
        let mut writer: Vec<Option<usize>> = vec![None; n];
        for (k, plan) in p.kernels.iter().enumerate() {
            for j in written(plan) {
                writer[j].get_or_insert(k);
            }
        }
        let mut stamp: Vec<usize> = vec![usize::MAX; n];
        let mut cones: Vec<Vec<usize>> = Vec::with_capacity(p.kernels.len());
        for (k, plan) in p.kernels.iter().enumerate() {
            let mut cone = Vec::new();
            let mut stack: Vec<usize> = written(plan).collect();
            while let Some(j) = stack.pop() {
                if std::mem::replace(&mut stamp[j], k) == k {
                    continue;
                }
                cone.push(j);
                if let GKind::Op(_, inputs) = &p.graph[j].kind {
                    stack.extend(inputs.iter().copied().filter(|&i| {
                        matches!(p.graph[i].kind, GKind::Op(..)) && writer[i].is_none_or(|w| w == k)
                    }));
                }
            }
            cone.sort_unstable();
            cones.push(cone);
        }
        let mut readers: Vec<Vec<usize>> = vec![Vec::new(); n];
        let mut outside = vec![false; n];
        for (k, cone) in cones.iter().enumerate() {
            for &j in cone {
                let GKind::Op(_, inputs) = &p.graph[j].kind else {
                    continue;
                };
                for &i in inputs {
                    match writer[i] {
                        Some(w) if w != k && !readers[i].contains(&k) => readers[i].push(k),
                        None if !matches!(p.graph[i].kind, GKind::Op(..)) => outside[i] = true,
                        _ => {}
                    }
                }
            }
        }
        for &r in p.roots {
            if !matches!(p.graph[r].kind, GKind::Op(..)) {
                outside[r] = true;
            }
        }
        Flow {
            writer,
            cones,
            readers,
            outside,
        }
    }
}

/// Writes kernel `k`'s cluster into `s`: its label, and a box per operation of its `cone`.
fn cluster(p: &Picture, flow: &Flow, k: usize, cone: &[usize], s: &mut String) {
    let cached = p.cached.get(k).copied().unwrap_or(false);
    let kind = p.kinds.get(k).map_or("", String::as_str);
    let _ = writeln!(s, "  subgraph cluster_{k} {{");
    let _ = writeln!(
        s,
        "    graph [label={}, class={}, style=\"rounded,filled\", fillcolor={}];",
        quote(&format!(
            "kernel {k} ({})\n{}",
            if cached {
                "cached"
            } else {
                "new: generated and built"
            },
            kind.replace("; ", "\n")
        )),
        quote(if cached { "cached" } else { "new" }),
        quote(if cached { "#eef2f8" } else { "#fdf1dc" }),
    );
    for &j in cone {
        let _ = writeln!(
            s,
            "    k{k}n{j} [{}];",
            op_attrs(p, j, flow.writer[j] == Some(k), &flow.readers[j])
        );
    }
    let _ = writeln!(s, "  }}");
}

/// The attributes of operation `j` in a kernel's cluster; `writes`: that kernel writes it
/// to memory, which kernels `readers` read.
fn op_attrs(p: &Picture, j: usize, writes: bool, readers: &[usize]) -> String {
    let g = &p.graph[j];
    let GKind::Op(code, _) = &g.kind else {
        return String::new();
    };
    let mut label = format!("{}\n{}", op_name(*code, g.node.dtype), type_of(g));
    if !writes {
        return format!("label={}, shape=box, style=rounded", quote(&label));
    }
    let root = p.roots.contains(&j);
    let scalar = g.node.shape.is_empty();
    let mut classes = vec![match (root, readers.is_empty()) {
        (true, _) => "root",
        (false, false) => "cut",
        (false, true) => "written",
    }];
    if root {
        label.push_str("\nmaterialized (root)");
    } else if readers.is_empty() {
        label.push_str("\nwritten");
    } else {
        let names: Vec<String> = readers.iter().map(|r| r.to_string()).collect();
        label.push_str(&format!("\nwritten for kernel {}", names.join(", ")));
    }
    if scalar && !readers.is_empty() {
        classes.push("device-scalar");
        label.push_str("\n0-d, stays on the device");
    }
    format!(
        "label={}, class={}, shape={}, peripheries=2{}",
        quote(&label),
        quote(&classes.join(" ")),
        if classes.contains(&"device-scalar") {
            "ellipse"
        } else {
            "box"
        },
        if root { ", penwidth=2" } else { "" }
    )
}

/// The attributes of node `j` outside the kernels: an array in memory or a host scalar.
fn outside_attrs(p: &Picture, j: usize) -> String {
    let g = &p.graph[j];
    let root = if p.roots.contains(&j) {
        ", peripheries=2, penwidth=2"
    } else {
        ""
    };
    if let GKind::Scalar(_) = g.kind {
        return format!(
            "label={}, class=\"scalar\", shape=plaintext",
            quote(&format!("scalar {} (argument)", g.node.dtype))
        );
    }
    let (what, class, shape) = match g.node.origin() {
        Some(Origin::Upload) | None => ("upload".to_string(), "upload", "cylinder"),
        Some(Origin::Fill) => ("fill".to_string(), "fill", "cylinder"),
        Some(Origin::Flush(f)) => (
            format!("from flush {}, kernel {}", f.flush, f.kernel),
            "earlier",
            "box3d",
        ),
        Some(Origin::Algorithm(what)) => (what.to_string(), "earlier", "box3d"),
        Some(Origin::WrittenBy(by)) => (format!("written by {by}"), "earlier", "box3d"),
    };
    let device_scalar = g.node.shape.is_empty() && class == "earlier";
    format!(
        "label={}, class={}, shape={shape}{root}",
        quote(&format!(
            "{what}\n{}{}",
            type_of(g),
            if device_scalar { "\n0-d, on the device" } else { "" }
        )),
        quote(&if device_scalar {
            format!("{class} device-scalar")
        } else {
            class.to_string()
        }),
    )
}

/// `f32 [1000, 3]`.
fn type_of(g: &GNode) -> String {
    format!("{} {:?}", g.node.dtype, &g.node.shape[..])
}

/// `text` as a DOT string: quoted, `"` and `\` escaped, line breaks as `\n`.
pub(crate) fn quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => {}
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::quote;

    #[test]
    fn quotes_escape_what_dot_reads_specially() {
        assert_eq!(quote("a \"b\" \\ c\nd"), "\"a \\\"b\\\" \\\\ c\\nd\"");
        assert_eq!(quote("f32 [3, 4]"), "\"f32 [3, 4]\"");
    }
}
