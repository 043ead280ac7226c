//! Rows of an array in memory, on the device that needs them: its own pieces' rows as
//! views, the rest copied from the devices that hold them (`backend::bridge`), joined
//! in row order. A stencil's shifted slice fetches its own rows and a halo row or two.

use std::ops::Range;
use std::sync::Arc;

use crate::backend::bridge::{copy_across, Crossing};
use crate::backend::context::Multi;
use crate::error::{Error, Result};
use crate::graph::parts::Piece;
use crate::graph::view::Region;
use crate::graph::{Node, NodeRef, Op, Origin, State};
use crate::multi::operand_runs::{rows_shape, slice};

/// Rows `rows` of `node` (materialized across devices) as a node of device `device`.
pub(crate) fn rows(multi: &Multi, device: usize, node: &NodeRef, rows: &Range<usize>) -> Result<NodeRef> {
    let parts = node
        .parts()
        .ok_or_else(|| Error::Internal("fetching rows of an array not in memory".into()))?;
    let pieces = &parts.pieces;
    let local = |pos: usize| {
        pieces
            .iter()
            .find(|p| p.device == device && p.rows.contains(&pos))
    };
    if rows.is_empty() {
        let any = pieces.iter().find(|p| p.device == device).unwrap_or(&pieces[0]);
        if any.device == device && any.rows.is_empty() {
            return Ok(any.node.clone());
        }
        return copy(multi, device, node, any, rows.start..rows.start);
    }
    let mut segments: Vec<NodeRef> = Vec::new();
    let mut pos = rows.start;
    while pos < rows.end {
        if let Some(p) = local(pos) {
            let end = p.rows.end.min(rows.end);
            segments.push(slice(&p.node, &p.rows, &(pos..end), &node.shape));
            pos = end;
            continue;
        }
        let Some(p) = pieces.iter().find(|p| p.rows.contains(&pos)) else {
            return Err(Error::Internal(format!(
                "row {pos} of an array of shape {:?} is on no device",
                node.shape
            )));
        };
        // Up to the end of that piece, or to the next row this device holds.
        let next_local = (pos..p.rows.end.min(rows.end)).find(|&r| local(r).is_some());
        let end = next_local.unwrap_or(p.rows.end.min(rows.end));
        segments.push(copy(multi, device, node, p, pos..end)?);
        pos = end;
    }
    if segments.len() == 1 {
        return Ok(segments.remove(0));
    }
    let mut offsets: smallvec::SmallVec<[usize; 4]> = smallvec::smallvec![0];
    for s in &segments {
        offsets.push(offsets[offsets.len() - 1] + s.shape[0]);
    }
    let part = &multi.parts[device];
    Ok(Node::new(
        part.clone(),
        node.dtype,
        rows_shape(&node.shape, rows),
        State::Lazy(Op::Region(
            Arc::new(Region::Concat { axis: 0, offsets }),
            segments.into_iter().collect(),
        )),
    ))
}

/// Rows `want` of `node`, which `piece` (of another device) holds, copied to `device`.
fn copy(multi: &Multi, device: usize, node: &Node, piece: &Piece, want: Range<usize>) -> Result<NodeRef> {
    let buffer = piece
        .node
        .buffer()
        .ok_or_else(|| Error::Internal("a device's rows are not in its memory".into()))?;
    let row_bytes = node.shape.iter().skip(1).product::<usize>() * node.dtype.size();
    let to = &multi.parts[device];
    let out = copy_across(Crossing {
        src: &buffer,
        src_queue: &multi.bridges[piece.device],
        offset: (want.start - piece.rows.start) * row_bytes,
        bytes: want.len() * row_bytes,
        dst: &to.cl,
        dst_queue: &multi.bridges[device],
    })?;
    Ok(Node::new(
        to.clone(),
        node.dtype,
        rows_shape(&node.shape, &want),
        State::Ready(out, Origin::Upload),
    ))
}
