//! Recompute or store: an elementwise value is normally computed inside every kernel that
//! reads it (fusion), which is free when each element is read once. A value read many
//! times over by a larger kernel — a per-row value broadcast along the rows' columns, as
//! a backward pass makes of a loss's per-row derivative — is recomputed for each read.
//! Storing it instead costs a launch and a write and a read of its elements. This pass
//! compares the two for each such value, in the device's terms, and stores the values
//! whose recomputation costs more. `explain()` says so on the kernel that stores one.
//!
//! The costs: an operation weighs 1, a division 4, a transcendental function 8, an
//! `expr!` (whose body planning does not see) 16, a random number 32. A value is only
//! considered when its own cone weighs at least a transcendental's. Recomputing adds
//! `(reads - elements) * weight` operations; storing adds a launch and `2 * elements *
//! bytes` of memory traffic. A value that a column reduction reads beside the row
//! reduction fused into it (`passes::rows_into_columns`, chosen by its own measured
//! rules) is left there: planning tries the flush without storing first, and stores only
//! values outside such kernels. Their rates differ by device kind (see [`Rates`]); they
//! were set from the logistic regression's two formulations, whose per-row residual is
//! exactly this choice (RESULTS.md, `rule-residual-fused`: on an H200 recomputed was
//! faster at every shape measured, 1.0–1.5x; on PoCL stored was, 1.1–2.4x), and they
//! choose as those measurements did at each of their shapes.

use super::collect::{GKind, GNode, OpCode};
use crate::graph::{BinaryOp, UnaryOp};
use crate::profile::DeviceProfile;

/// Why a kernel's value is stored rather than recomputed by its readers (for `explain`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Stored {
    /// How many times over the largest reader reads each element.
    pub(crate) reads: u64,
    /// The weight of the operations an element takes.
    pub(crate) weight: u32,
}

/// A device kind's costs, in operations of weight 1.
struct Rates {
    /// Operations that cost what a byte of memory traffic does.
    ops_per_byte: f64,
    /// A launch, in bytes of memory traffic.
    launch_bytes: f64,
}

/// A GPU: tens of TFLOP/s against a few TB/s, a launch of a few microseconds, and its
/// transcendental units hidden behind the memory a broadcast read streams.
const GPU: Rates = Rates {
    ops_per_byte: 64.0,
    launch_bytes: 10e6,
};

/// A CPU (PoCL): compute closer to its memory's speed, and a launch of tens of
/// microseconds against tens of GB/s.
const CPU: Rates = Rates {
    ops_per_byte: 2.0,
    launch_bytes: 0.5e6,
};

/// The least weight of a value worth storing: one transcendental function.
const MIN_WEIGHT: u32 = 8;

/// The elementwise values (not materialized by `mat`) whose recomputation by their
/// readers costs more than storing them, with why; each one found counts as stored for
/// the values read after it.
pub(crate) fn worth_storing(graph: &[GNode], mat: &[bool], profile: &DeviceProfile) -> Vec<(usize, Stored)> {
    let mut mat = mat.to_vec();
    let rates = if profile.gpu { &GPU } else { &CPU };
    let elements = |i: usize| graph[i].node.shape.iter().product::<usize>() as u64;
    // The largest iteration space that reads each node.
    let mut readers = vec![0u64; graph.len()];
    for (i, g) in graph.iter().enumerate() {
        if let GKind::Op(code, inputs) = &g.kind {
            let space = match code {
                OpCode::Reduce(_) | OpCode::Scan(_) | OpCode::Fft(_) => {
                    inputs.first().map_or(0, |&j| elements(j))
                }
                OpCode::MatMul => 0,
                _ => elements(i),
            };
            for &j in inputs {
                readers[j] = readers[j].max(space);
            }
        }
    }
    let mut weight = vec![0u32; graph.len()];
    let mut stored = Vec::new();
    for (i, g) in graph.iter().enumerate() {
        let GKind::Op(code, inputs) = &g.kind else {
            continue;
        };
        let carried: u32 = inputs.iter().filter(|&&j| !mat[j]).map(|&j| weight[j]).sum();
        weight[i] = own_weight(*code).saturating_add(carried);
        let movement = matches!(code, OpCode::View | OpCode::Reshape | OpCode::Region);
        if mat[i] || movement || !code.is_elementwise() || weight[i] < MIN_WEIGHT {
            continue;
        }
        let (n, reads) = (elements(i), readers[i]);
        if n == 0 || reads < 2 * n {
            continue;
        }
        let recompute = (reads - n) as f64 * f64::from(weight[i]) / rates.ops_per_byte;
        let store = rates.launch_bytes + 2.0 * n as f64 * g.node.dtype.size() as f64;
        if recompute > store {
            mat[i] = true;
            stored.push((
                i,
                Stored {
                    reads: reads / n,
                    weight: weight[i],
                },
            ));
        }
    }
    stored
}

/// The values of `found` that no node of `readers` computes inside its kernel (reaches
/// through nodes `mat` does not materialize).
pub(crate) fn not_read_by(
    graph: &[GNode],
    mat: &[bool],
    found: Vec<(usize, Stored)>,
    readers: &[usize],
) -> Vec<(usize, Stored)> {
    let mut inside = vec![false; graph.len()];
    let mut stack: Vec<usize> = Vec::new();
    for &r in readers {
        if let GKind::Op(_, inputs) = &graph[r].kind {
            stack.extend(inputs.iter().copied());
        }
    }
    while let Some(k) = stack.pop() {
        if inside[k] || mat[k] {
            continue;
        }
        inside[k] = true;
        if let GKind::Op(_, inputs) = &graph[k].kind {
            stack.extend(inputs.iter().copied());
        }
    }
    found.into_iter().filter(|(j, _)| !inside[*j]).collect()
}

/// The weight of one operation (see the module's text).
fn own_weight(code: OpCode) -> u32 {
    match code {
        OpCode::Unary(u) => match u {
            UnaryOp::Neg
            | UnaryOp::Not
            | UnaryOp::Abs
            | UnaryOp::Floor
            | UnaryOp::Ceil
            | UnaryOp::Round
            | UnaryOp::Trunc
            | UnaryOp::Signum
            | UnaryOp::Cast => 1,
            UnaryOp::Sqrt => 4,
            _ => 8,
        },
        OpCode::Binary(b) => match b {
            BinaryOp::Div | BinaryOp::Rem => 4,
            BinaryOp::Pow | BinaryOp::PowI | BinaryOp::Atan2 | BinaryOp::Hypot => 8,
            _ => 1,
        },
        OpCode::Ternary(_) => 1,
        OpCode::Expr(_) => 16,
        OpCode::FromIndex(_) => 32,
        OpCode::View | OpCode::Reshape | OpCode::Region => 0,
        OpCode::Take(_) | OpCode::Reduce(_) | OpCode::Scan(_) | OpCode::Fft(_) | OpCode::MatMul => 1,
    }
}
