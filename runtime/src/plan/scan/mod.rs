//! What a scan kernel's plan adds to a kernel plan ([`ScanPlan`]), and how a scan is
//! laid out ([`scan_plan`](scan_plan)). Plain data, like `kernel_plan`; `plan::build` plans it.

pub(crate) mod epilogue;

use crate::dtype::DType;
use crate::graph::{ReduceOp, ScanSpec};

/// A scan along one axis of its operand, viewed in row-major order as `[outer, len,
/// inner]`: element `(o, l, c)` (flat index `(o * len + l) * inner + c`) combines the
/// operand's elements `(o, 0..=l, c)` (`0..l` when `exclusive`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ScanPlan {
    /// `Sum` or `Prod`.
    pub(crate) op: ReduceOp,
    pub(crate) exclusive: bool,
    pub(crate) dtype: DType,
    pub(crate) outer: usize,
    pub(crate) len: usize,
    pub(crate) inner: usize,
    pub(crate) layout: ScanLayout,
    /// The value scanned: the operand's, computed in the loads.
    pub(crate) value: usize,
    /// Where the values of the elementwise consumers computed in the scan's store start
    /// (`plan::scan::epilogue`); `None`: the kernel stores the scan alone.
    pub(crate) epilogue: Option<usize>,
}

/// How a scan's work is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ScanLayout {
    /// One work-item per column `(o, c)`, walking its `len` elements in order: coalesced
    /// across columns (a scan along an axis that is not the innermost, `inner > 1`).
    Serial,
    /// Rows (`inner == 1`) in tiles of `items` elements per work-item, each tile scanned
    /// in local memory: `per_row` work-items (a power of two) per row, so that rows
    /// shorter than a tile share one; a row longer than a tile (`per_row` is the whole
    /// group) spans several, each offset by the tiles before it through a decoupled
    /// look-back. One pass over the data either way.
    Tiles { items: u32, per_row: u32 },
}

impl ScanPlan {
    /// Rows per tile of the tiled layout for work-groups of `group`.
    pub(crate) fn rows_per_tile(&self, group: u32) -> usize {
        match self.layout {
            ScanLayout::Tiles { per_row, .. } => (group / per_row.max(1)).max(1) as usize,
            ScanLayout::Serial => 1,
        }
    }

    /// Tiles per row of the tiled layout (1 unless a row is longer than a tile).
    pub(crate) fn tiles_per_row(&self) -> usize {
        match self.layout {
            ScanLayout::Tiles { items, per_row } => self.len.div_ceil((items * per_row) as usize).max(1),
            ScanLayout::Serial => 1,
        }
    }

    /// Tiles of the tiled layout in all.
    pub(crate) fn tiles(&self, group: u32) -> usize {
        self.outer.div_ceil(self.rows_per_tile(group)) * self.tiles_per_row()
    }
}

/// A scan of `spec` over an operand of `shape` and type `dtype`, and its layout for
/// work-groups of `group`.
pub(crate) fn scan_plan(spec: ScanSpec, dtype: DType, shape: &[usize], group: u32) -> ScanPlan {
    let outer = shape[..spec.axis].iter().product();
    let len = shape[spec.axis];
    let inner = shape[spec.axis + 1..].iter().product();
    let layout = if inner == 1 {
        // 16 KB of local memory per tile, and the fewest work-items that hold a row;
        // 32 KB where a row spans tiles (fewer tiles for the look-back to chain).
        let (items, long_items): (u32, u32) = if dtype.size() >= 8 { (8, 16) } else { (16, 32) };
        let per_row = len
            .div_ceil(items as usize)
            .next_power_of_two()
            .min(group as usize) as u32;
        let items = if len > (items * group) as usize {
            long_items
        } else {
            items
        };
        ScanLayout::Tiles { items, per_row }
    } else {
        ScanLayout::Serial
    };
    ScanPlan {
        op: spec.op,
        exclusive: spec.exclusive,
        dtype,
        outer,
        len,
        inner,
        layout,
        value: 0,
        epilogue: None,
    }
}
