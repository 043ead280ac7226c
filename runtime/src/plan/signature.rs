//! A collected flush's signature: every fact of it that planning reads, as words. Two
//! flushes with equal signatures get equal plans on one device, so a repeated step (a
//! training loop, a solver's iteration) is planned once and its plans replayed
//! (`exec::replay`).
//!
//! Written: per node its element type, shape and kind — an operation with its operands'
//! indices and any view map or region, a scalar (its type, never its value), or memory
//! (which earlier node holds the same buffer, never the buffer: planning shares an input
//! slot between two reads of one buffer) — then the roots and where the first is stored.
//! Left out: buffers and scalar values, which the plans do not hold (they are bound from
//! the flush at each launch).
//!
//! The rule that keeps replay correct: a fact planning reads from the graph is written
//! here. Every word is a fixed-length field or preceded by its count, so two different
//! graphs never write the same words.

use crate::graph::view::{Region, ViewMap};

use super::collect::{GKind, Movement, OpCode};
use super::Collected;

/// Writes the words of `collected`'s signature into `w` (cleared first: a flush reuses
/// one vector for its lookup).
pub(crate) fn write(collected: &Collected, w: &mut Vec<u64>) {
    let graph = &collected.graph;
    w.clear();
    w.reserve(8 * graph.len() + 8);
    w.push(graph.len() as u64);
    let buffers = same_buffers(collected);
    for (i, g) in graph.iter().enumerate() {
        let node = &g.node;
        w.push(node.dtype as u64);
        w.push(node.shape.len() as u64);
        w.extend(node.shape.iter().map(|&d| d as u64));
        match &g.kind {
            GKind::Ready(_) => w.extend([0, buffers[i] as u64]),
            GKind::Scalar(_) => w.push(1),
            GKind::Op(code, inputs) => {
                w.push(2);
                op_code(w, *code);
                w.push(inputs.len() as u64);
                w.extend(inputs.iter().map(|&j| j as u64));
                match &g.movement {
                    None => w.push(0),
                    Some(Movement::View(map)) => {
                        w.push(1);
                        view_map(w, map);
                    }
                    Some(Movement::Region(region)) => {
                        w.push(2);
                        region_words(w, region);
                    }
                }
            }
        }
    }
    w.push(collected.roots.len() as u64);
    w.extend(collected.roots.iter().map(|&r| r as u64));
    match &collected.store {
        None => w.push(0),
        Some(s) => {
            w.extend([1, s.node as u64, s.shape.len() as u64]);
            w.extend(s.shape.iter().map(|&d| d as u64));
            view_map(w, &s.map);
            match s.scatter {
                None => w.push(0),
                Some(sc) => w.extend([1, sc.index as u64, sc.axis as u64]),
            }
        }
    }
}

/// For each node holding memory, the index of the first node holding the same buffer
/// (itself if none earlier does); 0 for the others.
fn same_buffers(collected: &Collected) -> Vec<usize> {
    let mut first = vec![0usize; collected.graph.len()];
    let mut held: Vec<(usize, usize)> = collected
        .graph
        .iter()
        .enumerate()
        .filter_map(|(i, g)| match &g.kind {
            GKind::Ready(b) => Some((b.mem() as usize, i)),
            _ => None,
        })
        .collect();
    held.sort_unstable();
    let mut k = 0;
    while k < held.len() {
        let (mem, owner) = held[k];
        while k < held.len() && held[k].0 == mem {
            first[held[k].1] = owner;
            k += 1;
        }
    }
    first
}

fn op_code(w: &mut Vec<u64>, code: OpCode) {
    match code {
        OpCode::Unary(u) => w.extend([0, u as u64]),
        OpCode::Binary(b) => w.extend([1, b as u64]),
        OpCode::Ternary(t) => w.extend([2, t as u64]),
        OpCode::Reduce(spec) => w.extend([3, spec.op as u64, spec.axes]),
        OpCode::Expr(id) => w.extend([4, u64::from(id)]),
        OpCode::View => w.push(5),
        OpCode::Reshape => w.push(6),
        OpCode::Region => w.push(7),
        OpCode::MatMul => w.push(8),
        OpCode::Scan(spec) => w.extend([9, spec.op as u64, spec.axis as u64, u64::from(spec.exclusive)]),
        OpCode::Take(t) => w.extend([10, t.axis as u64, u64::from(t.along)]),
        OpCode::Random(r) => w.extend([11, r.draw as u64]),
    }
}

fn view_map(w: &mut Vec<u64>, map: &ViewMap) {
    w.push(map.axes.len() as u64);
    for a in &map.axes {
        w.extend([
            a.from.map_or(u64::MAX, |f| f as u64),
            a.start as u64,
            a.step as u64,
        ]);
    }
}

fn region_words(w: &mut Vec<u64>, region: &Region) {
    match region {
        Region::Concat { axis, offsets } => {
            w.extend([0, *axis as u64, offsets.len() as u64]);
            w.extend(offsets.iter().map(|&o| o as u64));
        }
        Region::Pad { before } => {
            w.extend([1, before.len() as u64]);
            w.extend(before.iter().map(|&b| b as u64));
        }
    }
}
