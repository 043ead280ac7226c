//! `slice_mut(..).assign(value)` on an array split across devices: each device whose
//! rows the region meets stores its share of the value into a copy of its rows; the
//! other devices' rows are kept as they are. The value is computed first (it may read
//! the array it is stored into).

use std::ops::Range;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::exec;
use crate::graph::parts::{row_count, Parts, Piece};
use crate::graph::view::ViewMap;
use crate::graph::{Node, NodeRef, Op, State, UnaryOp};
use crate::multi::windows;

/// The array `array` (materialized across devices) with the region `map` (a view of it
/// of shape `region`) set to `value` (of that shape), as a new array.
pub(crate) fn region(array: &NodeRef, map: &ViewMap, region: &[usize], value: &NodeRef) -> Result<NodeRef> {
    let Some(multi) = array.ctx.multi.as_ref() else {
        return Err(Error::Internal(
            "a multi-device store on a one-device array".into(),
        ));
    };
    crate::multi::materialize(&[array.clone(), value.clone()])?;
    let parts = array
        .parts()
        .ok_or_else(|| Error::Internal("a multi-device array was not materialized".into()))?;
    let mut pieces = Vec::new();
    for piece in &parts.pieces {
        match met(map, region, &piece.rows) {
            Some(met) => pieces.push(stored(multi, piece, map, region, value, &met)?),
            None => pieces.push(piece.clone()),
        }
    }
    Ok(Node::new(
        array.ctx.clone(),
        array.dtype,
        array.shape.clone(),
        State::Parts(Arc::new(Parts { pieces })),
    ))
}

/// Where a region meets some rows of the array: the view axis that runs along the
/// rows (`None`: the region takes one row) and its coordinates along it that land in
/// them.
struct Met {
    along: Option<usize>,
    coords: Range<usize>,
}

/// Where the region `map` (a view of shape `region`) meets the array's `rows`, if it
/// does.
fn met(map: &ViewMap, region: &[usize], rows: &Range<usize>) -> Option<Met> {
    let a0 = map.axes[0];
    match a0.from {
        None => rows.contains(&(a0.start as usize)).then_some(Met {
            along: None,
            coords: 0..0,
        }),
        Some(j) => {
            let (lo, hi) = (rows.start as isize, rows.end as isize);
            let met: Vec<usize> = (0..region[j])
                .filter(|&i| (lo..hi).contains(&(a0.start + a0.step * i as isize)))
                .collect();
            match (met.first(), met.last()) {
                (Some(&f), Some(&l)) => Some(Met {
                    along: Some(j),
                    coords: f..l + 1,
                }),
                _ => None,
            }
        }
    }
}

/// `piece` with its share of `value` stored where the region `map` (of shape `region`)
/// `met` its rows: into a copy of them on its device, which the new piece holds.
fn stored(
    multi: &crate::backend::context::Multi,
    piece: &Piece,
    map: &ViewMap,
    region: &[usize],
    value: &NodeRef,
    met: &Met,
) -> Result<Piece> {
    let rows = &piece.rows;
    let mut local = map.clone();
    let mut shape: crate::graph::Shape = region.iter().copied().collect();
    if let Some(j) = met.along {
        for a in local.axes.iter_mut().filter(|a| a.from == Some(j)) {
            a.start += a.step * met.coords.start as isize;
        }
        shape[j] = met.coords.len();
    }
    local.axes[0].start -= rows.start as isize;
    let share = value_share(multi, piece.device, value, met.along, &met.coords)?;
    let part = &multi.parts[piece.device];
    let copy = |n: &NodeRef| {
        Node::new(
            part.clone(),
            n.dtype,
            n.shape.clone(),
            State::Lazy(Op::Unary(UnaryOp::Cast, n.clone())),
        )
    };
    let fresh = copy(&piece.node);
    exec::materialize(std::slice::from_ref(&fresh))?;
    let target = fresh
        .buffer()
        .ok_or_else(|| Error::Internal("a device's copy of its rows is not in memory".into()))?;
    let share = if share.buffer().is_some() {
        copy(&share)
    } else {
        share
    };
    exec::materialize_into_region(part.queue(), &share, target, &Arc::new(local), &piece.node.shape)?;
    Ok(Piece {
        device: piece.device,
        rows: rows.clone(),
        node: fresh,
    })
}

/// The value's elements at indices `met` of its axis `along` (all of it for `None`),
/// on device `device`.
fn value_share(
    multi: &crate::backend::context::Multi,
    device: usize,
    value: &NodeRef,
    along: Option<usize>,
    met: &Range<usize>,
) -> Result<NodeRef> {
    let rows = match along {
        Some(0) => met.clone(),
        _ => 0..row_count(&value.shape),
    };
    let share = windows::record_one(multi, device, value, rows)?;
    Ok(match along {
        Some(j) if j > 0 => {
            let mut view = ViewMap::identity(value.shape.len());
            view.axes[j].start = met.start as isize;
            let mut shape = share.shape.clone();
            shape[j] = met.len();
            share.view(view, shape)
        }
        _ => share,
    })
}
