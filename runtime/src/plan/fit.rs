//! Device-dependent choices of reduction plans, made when a flush is planned: how many
//! segments a reduction is split into, the column layout's tiles, which layout a
//! column reduction with a row reduction inside takes, whether a kernel finishes its
//! own reduction, and whether float sums are compensated. Every choice that changes a
//! kernel's source is part of its cache key (`plan::plan` adds them, through `key::fit`).

use crate::graph::ReduceOp;
use crate::layout::{FINISH_COUNTERS, GROUP_ROWS_LOCAL_BYTES, VECTOR_WIDTH};

use super::kernel_plan::{
    ColumnRows, Columns, Finish, KernelKind, KernelPlan, Layout, ReducePlan, REDUCE_GROUP, TILE, TILE_ROWS,
};
use crate::profile::DeviceProfile;

/// Work-items a reduction should keep busy. GPUs: every resident one. CPUs: a few
/// work-groups per core (PoCL runs a group's work-items as a loop, and each barrier as
/// another loop: many short segments make the local-memory combines dominate).
fn reduce_work_items(p: &DeviceProfile) -> usize {
    if p.gpu {
        p.work_items_cap()
    } else {
        p.compute_units.max(1) as usize * 4 * REDUCE_GROUP as usize
    }
}

/// Segments per output of a reduction: enough work-items to fill the device, while each
/// lane still reduces at least 16 elements per segment.
fn segments(p: &DeviceProfile, r: &ReducePlan, group: u32) -> usize {
    if let Layout::Columns(c) = &r.layout {
        // Work-groups for half the device's nominal resident work-items, rounded down so
        // that no second wave starts for a few groups (a whole segment's time for them);
        // fewer, longer segments were slower. Each work-item reads at least 16 rows. (CPUs:
        // as many segments as that allows, which PoCL ran better than a few per core for
        // this layout.) Figures: RESULTS.md#rule-column-segments.
        let cap = p.work_items_cap();
        let (_, rows_at_once, tiles) = c.geometry(r.n_out, group as usize);
        let target = (cap / 2 / group as usize / tiles).max(1);
        return target.min((r.n_red / (rows_at_once * 16)).max(1));
    }
    let cap = reduce_work_items(p);
    // Outputs per work-group with lanes; none (one output per work-item) without.
    let (work_items_now, lanes) = match r.layout {
        Layout::Lanes { lanes, .. } => (
            r.n_out.div_ceil((group / lanes) as usize) * group as usize,
            lanes as usize,
        ),
        _ => (r.n_out, 1),
    };
    // Several outputs per work-group (lanes stream ~128 elements each): a quarter of the
    // device's resident work-items is enough, and a combine pass costs more than it
    // gains. A whole group per output, or one work-item per output, wants them all.
    let want = if lanes > 1 && lanes < group as usize {
        cap / 4
    } else {
        cap
    };
    let target = want.div_ceil(work_items_now.max(1)).max(1);
    let most = (r.n_red / (lanes * 16)).max(1);
    target.min(most)
}

/// Vectors per tile of a column-layout reduction. An eighth of the group (so a group
/// reads eight rows of its tile at once), unless that leaves a tile fewer than 8 segments
/// (few, wide rows): then a quarter (the better of the two on each kind of shape measured;
/// RESULTS.md#rule-column-tile).
fn column_tile(p: &DeviceProfile, r: &ReducePlan, group: u32) -> usize {
    let (eighth, quarter) = ((group as usize / 8).max(1), (group as usize / 4).max(1));
    let mut narrow = *r;
    if let Layout::Columns(c) = &mut narrow.layout {
        c.tile = eighth;
    }
    if segments(p, &narrow, group) >= 8 {
        eighth
    } else {
        quarter
    }
}

/// Fits a reduction plan to the device: its segments, the column tile, whether its last
/// work-groups finish it or a combine pass does, the order in which lanes read, whether
/// float sums are compensated, and whether one work-item reads whole rows. (All but the
/// segments change the kernel's source: the caller adds them to its key.)
///
/// `one_tile`: a column reduction with a row reduction inside covers whole rows, shared
/// by a row of work-items ([`ColumnRows::RowLoop`]) unless one work-item holds a row.
pub(crate) fn fit_reduction(p: &DeviceProfile, r: &mut ReducePlan, group: u32, one_tile: bool) {
    if let Layout::Columns(c) = r.layout {
        let (tile, rows) = if one_tile {
            (group as usize, ColumnRows::RowLoop)
        } else {
            (column_tile(p, r, group), c.rows)
        };
        r.layout = Layout::Columns(Columns { tile, rows, ..c });
    }
    r.segments = segments(p, r, group);
    if one_tile && r.rows_fit_one_item() {
        fit_rows_per_item(p, r, group);
        return;
    }
    // The blocks the kernel would count finished groups of (a counter each), and the
    // partials one work-item of the last group reads: lanes share an output's; in the
    // column layout each row of work-items takes every `P`-th segment. Full sums finish
    // well in the kernel; the column layout only with a few partials per work-item: with
    // more, a combine pass is faster (RESULTS.md#rule-finish-in-kernel).
    let (blocks, per_item, most) = match &r.layout {
        Layout::Lanes { lanes, .. } => (
            r.n_out.div_ceil((group / lanes) as usize),
            r.segments.div_ceil(*lanes as usize),
            96,
        ),
        Layout::Columns(c) => {
            let (_, rows_at_once, tiles) = c.geometry(r.n_out, group as usize);
            (tiles, r.segments.div_ceil(rows_at_once.max(1)), 8)
        }
        // One work-item per output: no blocks to count.
        Layout::Serial => (usize::MAX, r.segments, 96),
    };
    let in_kernel = blocks < FINISH_COUNTERS && per_item <= most && !p.tuning.combine_pass_only;
    r.finish = Finish::of(r.segments, in_kernel);
    // On CPUs, a whole work-group per output (full sums) reads faster with one contiguous
    // run per lane (PoCL); with a few lanes per output (matrix-vector) the interleaved
    // loop was as fast or faster (RESULTS.md#rule-contiguous-lanes-cpu).
    if let Layout::Lanes {
        lanes,
        vector: Some(v),
    } = &mut r.layout
    {
        v.contiguous = !p.gpu && *lanes == group;
    }
    r.compensated = r.in_dtype.is_float()
        && matches!(r.op, ReduceOp::Sum | ReduceOp::Mean)
        && serial_steps(r, group) > COMPENSATE_AFTER;
}

/// The vector loads of a lanes-layout reduction widened to 16 bytes of the narrowest input
/// read along the innermost of `dims`: eight lanes of a 16-bit type, as four of `f32` (a
/// `bf16` sum reads 16 bytes a load, not 8). Aligned where the innermost extent is a
/// multiple of the new width.
pub(crate) fn widen_vector_loads(
    r: &mut ReducePlan,
    inputs: &[crate::plan::kernel_plan::Input],
    dims: &[usize],
) {
    let Layout::Lanes { vector: Some(v), .. } = &mut r.layout else {
        return;
    };
    let (Some(&innermost), rank) = (dims.last(), dims.len()) else {
        return;
    };
    let last = 1u32 << (rank - 1);
    let sizes = inputs
        .iter()
        .filter(|i| i.broadcast_mask & last == 0)
        .map(|i| crate::layout::vector_bytes(i.dtype));
    let (narrowest, widest) = sizes.fold((usize::MAX, 0), |(n, w), s| (n.min(s), w.max(s)));
    if widest == 0 {
        return;
    }
    v.width = crate::layout::vector_width(narrowest, widest);
    v.aligned = innermost.is_multiple_of(v.width);
}

/// A column reduction with a row reduction inside, short rows: one work-item per row
/// ([`ColumnRows::RowsPerItem`]), segments for half the device's resident work-items with
/// 16 to 128 rows per work-item (so never compensated), and a combine pass.
fn fit_rows_per_item(p: &DeviceProfile, r: &mut ReducePlan, group: u32) {
    let group = group as usize;
    if let Layout::Columns(c) = &mut r.layout {
        c.rows = ColumnRows::RowsPerItem {
            vectors: r.n_out / c.width,
        };
    }
    let target = (p.work_items_cap() / 2 / group).max(1);
    let most = (r.n_red / (group * 16)).max(1);
    let least = r.n_red.div_ceil(group * COMPENSATE_AFTER);
    r.segments = target.min(most).max(least).max(1);
    r.finish = Finish::of(r.segments, false);
    r.compensated = false;
}

/// The largest work-group of the group-rows layout ([`ColumnRows::GroupRows`]).
const GROUP_ROWS_LARGEST: usize = 512;
/// The most vectors of a row one work-item of the group-rows layout holds: rows up to
/// this many times the largest group are fused.
const GROUP_ROWS_MOST_VECTORS: usize = 2;
/// Rows of at least this many vectors that work-items share take the group-rows layout
/// (a work-group per row) instead of a row of work-items per row.
const GROUP_ROWS_FEWEST_VECTORS: usize = 128;
/// Rows each work-group of the group-rows layout takes at least (its partials, one per
/// output, cost about one row's worth of reading per segment).
const GROUP_ROWS_LEAST_ROWS: usize = 16;

/// The widest rows, in vectors, whose row reduction may go inside a column reduction
/// when work-items share them: the group-rows layout's largest group times
/// [`GROUP_ROWS_MOST_VECTORS`]. 0 where shared rows are not allowed.
///
/// Up to two vectors per work-item the fused kernel beat two passes; with seven it was
/// slower, so wider rows stay two kernels (RESULTS.md#rule-shared-rows-width).
pub(crate) fn widest_shared_row(p: &DeviceProfile) -> usize {
    if shared_rows_allowed(p) {
        largest_group(p) * GROUP_ROWS_MOST_VECTORS
    } else {
        0
    }
}

/// The largest power-of-two work-group of the group-rows layout on this device (within
/// its work-group limit and its local memory, less 1 KiB: 512 with NVIDIA's 48 KiB).
fn largest_group(p: &DeviceProfile) -> usize {
    let by_memory = (p.local_mem_bytes as usize).saturating_sub(1024) / GROUP_ROWS_LOCAL_BYTES;
    let max = p.max_group.min(by_memory).clamp(1, GROUP_ROWS_LARGEST);
    1 << (usize::BITS - 1 - max.leading_zeros())
}

/// Whether a column reduction with a row reduction inside shares each row across a
/// whole work-group ([`ColumnRows::GroupRows`]) rather than across a row of work-items
/// of the column layout: rows of at least [`GROUP_ROWS_FEWEST_VECTORS`] vectors, and rows
/// wider than that layout's group: there it beat the column layout's rows, below it not
/// (RESULTS.md#rule-group-rows).
pub(crate) fn wants_group_rows(r: &ReducePlan, group: u32) -> bool {
    let Some(c) = r.columns() else { return false };
    let vectors = r.n_out / c.width.max(1);
    !r.rows_fit_one_item() && (vectors >= GROUP_ROWS_FEWEST_VECTORS || vectors > group as usize)
}

/// Fits the group-rows layout: a work-group of the row's vectors rounded up to a power
/// of two, at most [`GROUP_ROWS_LARGEST`] (each work-item then holds one or two vectors
/// of every row), segments for half the device's resident work-items, each of at least
/// [`GROUP_ROWS_LEAST_ROWS`] rows and at most [`COMPENSATE_AFTER`] (never compensated: a
/// work-item adds one row per step), combined by a combine pass. Returns the group size.
/// (Half a wave beat a full one, and four rows per step two or eight:
/// RESULTS.md#rule-group-rows-segments.)
pub(crate) fn fit_group_rows(p: &DeviceProfile, r: &mut ReducePlan) -> u32 {
    let vectors = r.columns().map_or(r.n_out.max(1), |c| c.vectors(r.n_out));
    let group = vectors.next_power_of_two().min(largest_group(p));
    if let Layout::Columns(c) = &mut r.layout {
        c.rows = ColumnRows::GroupRows {
            vectors_per_item: vectors.div_ceil(group),
        };
        // One tile: the whole row.
        c.tile = vectors;
    }
    let target = (p.work_items_cap() / 2 / group).max(1);
    let most = (r.n_red / GROUP_ROWS_LEAST_ROWS).max(1);
    let least = r.n_red.div_ceil(COMPENSATE_AFTER);
    r.segments = target.min(most).max(least).clamp(1, r.n_red.max(1));
    r.finish = Finish::of(r.segments, false);
    r.compensated = false;
    group as u32
}

/// Whether an elementwise kernel reads an input transposed (see
/// [`KernelPlan::transposed_inputs`]) over dims wide enough for tiles, and the device
/// should stage it through local memory: GPUs (their reads coalesce only along the
/// innermost dim; on PoCL each barrier is a loop over the group).
pub(crate) fn wants_tiles(p: &DeviceProfile, plan: &KernelPlan) -> bool {
    let rank = plan.dims.len();
    (p.gpu || p.tuning.tiles_anywhere)
        && matches!(plan.kind, KernelKind::Elementwise)
        && rank >= 2
        && plan.dims[rank - 1] > 1
        && plan.dims[rank - 2] > 1
        && plan.outputs.iter().all(|o| o.store.is_none())
        && plan.transposed_inputs().contains(&true)
        && p.max_group >= TILE * TILE_ROWS
}

/// Serial accumulation steps beyond which a work-item's float sum is compensated. A
/// plain sum of `m` steps is off by at most about `m` ulps of the sum of magnitudes
/// (typically `sqrt(m)`): for 128, within 1e-5 of it in f32 even in the worst case, and
/// the tree that combines work-items adds only `log2` of their count; below this the
/// compensation's dependent adds cost more bandwidth than they are worth
/// (RESULTS.md#rule-compensate-after).
const COMPENSATE_AFTER: usize = 128;

/// Accumulation steps one work-item takes in a reduction's main loop: a row per step in
/// the column layout, a vector (or element) per step along its lanes, four elements per
/// step with one work-item per output.
fn serial_steps(r: &ReducePlan, group: u32) -> usize {
    let per_segment = r.n_red.div_ceil(r.segments.max(1));
    match &r.layout {
        Layout::Columns(c) => {
            let (_, rows_at_once, _) = c.geometry(r.n_out, group as usize);
            per_segment.div_ceil(rows_at_once.max(1))
        }
        Layout::Lanes { lanes, vector } => {
            let width = vector.map_or(1, |v| v.width);
            per_segment.div_ceil(*lanes as usize * width)
        }
        Layout::Serial => per_segment.div_ceil(VECTOR_WIDTH),
    }
}

/// Whether a row reduction may go inside a column reduction whose rows are shared by a
/// row of work-items (a barrier per step of rows): GPUs only. On PoCL each barrier is a
/// loop over the group, and that kernel took several times the time of the two kernels
/// it replaces (RESULTS.md#rule-shared-rows-gpu-only); rows read whole by one work-item
/// have no barrier and are
/// fused on every device.
pub(crate) fn shared_rows_allowed(p: &DeviceProfile) -> bool {
    p.gpu || p.tuning.shared_rows_anywhere
}

#[cfg(test)]
#[path = "fit_tests.rs"]
mod tests;
