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
//! here. Every word is a fixed-length field (small fields packed into bits of their own
//! in one word) or preceded by its count, so two different graphs never write the same
//! words.

use crate::graph::view::{Region, ViewMap};
use crate::graph::IndexFn;

use super::collect::{GKind, Movement, OpCode};
use super::Collected;

/// Writes the words of `collected`'s signature into `w` (cleared first: a flush reuses
/// one vector for its lookup).
pub(crate) fn write(collected: &Collected, w: &mut Vec<u64>) {
    let graph = &collected.graph;
    w.clear();
    w.reserve(6 * graph.len() + 8);
    w.push(graph.len() as u64);
    let buffers = SameBuffers::of(collected);
    for g in graph {
        let node = &g.node;
        // One word for the node's type, rank and kind (each field in bits of its own).
        let head = |kind: u64| node.dtype as u64 | kind << 8 | (node.shape.len() as u64) << 16;
        match &g.kind {
            GKind::Ready(_) => w.push(head(0)),
            GKind::Scalar(_) => w.push(head(1)),
            GKind::Op(..) => w.push(head(2)),
        }
        w.extend(node.shape.iter().map(|&d| d as u64));
        match &g.kind {
            GKind::Ready(b) => w.push(buffers.first(b.mem() as usize) as u64),
            GKind::Scalar(_) => {}
            GKind::Op(code, inputs) => {
                op_code(w, *code);
                let movement = match &g.movement {
                    None => 0,
                    Some(Movement::View(_)) => 1,
                    Some(Movement::Region(_)) => 2,
                };
                w.push(inputs.len() as u64 | movement << 32);
                w.extend(inputs.iter().map(|&j| j as u64));
                match &g.movement {
                    None => {}
                    Some(Movement::View(map)) => view_map(w, map),
                    Some(Movement::Region(region)) => region_words(w, region),
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
                Some(sc) => w.extend([1 + sc.combine as u64, sc.index as u64, sc.axis as u64]),
            }
        }
    }
}

/// The memory of a flush's materialized nodes, sorted: (buffer, graph index) pairs.
/// Inline up to 8 (a typical flush reads a few arrays: no allocation).
struct SameBuffers(smallvec::SmallVec<[(usize, usize); 8]>);

impl SameBuffers {
    fn of(collected: &Collected) -> SameBuffers {
        let mut held: smallvec::SmallVec<[(usize, usize); 8]> = collected
            .graph
            .iter()
            .enumerate()
            .filter_map(|(i, g)| match &g.kind {
                GKind::Ready(b) => Some((b.mem() as usize, i)),
                _ => None,
            })
            .collect();
        held.sort_unstable();
        SameBuffers(held)
    }

    /// The index of the first node holding buffer `mem` (the pairs are sorted by buffer,
    /// then index).
    fn first(&self, mem: usize) -> usize {
        let k = self.0.partition_point(|&(m, _)| m < mem);
        self.0.get(k).map_or(0, |&(_, i)| i)
    }
}

/// The operation's kind in the low byte of its first word, small fields in the bits above.
fn op_code(w: &mut Vec<u64>, code: OpCode) {
    match code {
        OpCode::Unary(u) => w.push((u as u64) << 8),
        OpCode::Binary(b) => w.push(1 | (b as u64) << 8),
        OpCode::Ternary(t) => w.push(2 | (t as u64) << 8),
        OpCode::Reduce(spec) => w.extend([3 | (spec.op as u64) << 8, spec.axes]),
        OpCode::Expr(id) => w.push(4 | u64::from(id) << 8),
        OpCode::View => w.push(5),
        OpCode::Reshape => w.push(6),
        OpCode::Region => w.push(7),
        OpCode::MatMul => w.push(8),
        OpCode::Scan(spec) => w.extend([
            9 | (spec.op as u64) << 8 | u64::from(spec.exclusive) << 16,
            spec.axis as u64,
        ]),
        OpCode::Fft(spec) => w.extend([
            11 | u64::from(spec.inverse) << 8,
            spec.axis as u64,
            u64::from(spec.radix) | u64::from(spec.done) << 32,
        ]),
        OpCode::Take(t) => w.extend([
            10 | u64::from(t.along) << 8 | u64::from(t.search_code()) << 16,
            t.axis as u64,
        ]),
        OpCode::FromIndex(f) => w.push(match f {
            IndexFn::Random(draw) => 11 | (draw as u64) << 8,
            IndexFn::Position => 12,
        }),
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
