//! Pullbacks of views and regions: the cotangent goes back to the elements the view or
//! region read, zeros elsewhere, as lazy views and pads (no scatter, no copy). A view
//! reads source element `start + step · i` along each source axis (or a fixed index), and
//! may repeat elements along broadcast axes: its pullback sums the broadcast axes, puts
//! the rest in source axis order, reverses negative steps, spreads steps above one with
//! zeros between, and pads to the source's extent.

use ndarray::SliceInfoElem;

use super::shared::{unsupported, Contribution};
use crate::api::array::Array;
use crate::dtype::Float;
use crate::error::Result;
use crate::graph::view::{Region, ViewMap};
use crate::graph::NodeRef;

/// The cotangent of `source` through a view of it by `map`.
pub(super) fn view<T: Float>(map: &ViewMap, source: &NodeRef, g: Array<T>) -> Result<NodeRef> {
    let view_rank = g.ndim();
    let read: Vec<usize> = map.axes.iter().filter_map(|a| a.from).collect();
    let mut sorted = read.clone();
    sorted.sort_unstable();
    if sorted.windows(2).any(|w| w[0] == w[1]) {
        return Err(unsupported(
            source,
            "a view reading one axis twice",
            "such views have no pullback yet",
        ));
    }
    // Broadcast axes (read by no source axis): their elements all came from one.
    let broadcast: Vec<usize> = (0..view_rank).filter(|d| !read.contains(d)).collect();
    let mut t = if broadcast.is_empty() {
        g
    } else {
        g.sum_axes(&broadcast, false)
    };
    // The remaining axes in source order (`sorted` lists them in view order).
    let order: Vec<usize> = read
        .iter()
        .map(|d| sorted.iter().position(|s| s == d).unwrap_or(0))
        .collect();
    t = t.permuted_axes(order);
    let mut widths = Vec::with_capacity(map.axes.len());
    let mut k = 0;
    for (s, a) in map.axes.iter().enumerate() {
        let extent = source.shape[s];
        let Some(_) = a.from else {
            // A fixed index: a size-1 axis at `start`.
            t = t.insert_axis(k);
            let at = a.start as usize;
            widths.push((at, extent - at - 1));
            k += 1;
            continue;
        };
        let len = t.shape()[k];
        if a.step < 0 {
            t = t.flip(k);
        }
        let step = a.step.unsigned_abs();
        if step > 1 && len > 1 {
            t = spread(t, k, step);
        }
        // The lowest source index read along this axis, and how many it spans.
        let low = if a.step < 0 {
            a.start - a.step.abs() * (len as isize - 1)
        } else {
            a.start
        };
        let span = if len == 0 { 0 } else { (len - 1) * step + 1 };
        let low = if len == 0 { 0 } else { low as usize };
        widths.push((low, extent - low - span));
        k += 1;
    }
    Ok(t.pad(&widths, T::__from_f64(0.0)).node)
}

/// `t` with `step - 1` zeros after each element along axis `k` but the last.
fn spread<T: Float>(t: Array<T>, k: usize, step: usize) -> Array<T> {
    let mut shape = t.shape().to_vec();
    let len = shape[k];
    let mut widths = vec![(0, 0); shape.len() + 1];
    widths[k + 1] = (0, step - 1);
    let padded = t.insert_axis(k + 1).pad(&widths, T::__from_f64(0.0));
    shape[k] = len * step;
    let merged = padded.reshape(shape.clone());
    let info: Vec<SliceInfoElem> = (0..shape.len())
        .map(|d| SliceInfoElem::Slice {
            start: 0,
            end: (d == k).then_some(((len - 1) * step + 1) as isize),
            step: 1,
        })
        .collect();
    merged.slice(info)
}

/// The cotangents of a region's sources: each its box of the cotangent; a pad's fill
/// value the sum of the rest.
pub(super) fn region<T: Float>(
    region: &Region,
    sources: &[NodeRef],
    g: Array<T>,
    wanted: &[bool],
) -> Vec<Contribution> {
    let boxed = |starts: &[usize], shape: &[usize]| -> Array<T> {
        let info: Vec<SliceInfoElem> = starts
            .iter()
            .zip(shape)
            .map(|(&s, &n)| SliceInfoElem::Slice {
                start: s as isize,
                end: Some((s + n) as isize),
                step: 1,
            })
            .collect();
        g.slice(info)
    };
    let float = |k: usize| wanted.get(k).copied().unwrap_or(false) && sources[k].dtype.is_float();
    match region {
        Region::Concat { axis, offsets } => (0..sources.len())
            .filter(|&k| float(k))
            .map(|k| {
                let mut starts = vec![0; g.ndim()];
                starts[*axis] = offsets[k];
                (k, boxed(&starts, &sources[k].shape).node)
            })
            .collect(),
        Region::Pad { before } => {
            let inner = boxed(before, &sources[0].shape);
            let mut out = Vec::new();
            if float(1) {
                out.push((1, (g.sum() - inner.sum()).node));
            }
            if float(0) {
                out.push((0, inner.node));
            }
            out
        }
    }
}
