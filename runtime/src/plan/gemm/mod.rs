//! What a GEMM kernel's plan adds to a kernel plan ([`GemmPlan`]): its operands' phases,
//! its sizes, its tile and split, the row reduction in its epilogue. Plain data, like
//! `kernel_plan`; `plan::gemm` fills it in.

mod build;
pub(crate) mod tiles;

pub(crate) use build::{plan_gemm, set_tile};

use crate::dtype::DType;
use crate::graph::ReduceOp;

/// A GEMM kernel: the product `[.., m, k] · [.., k, n]` of two operands, each evaluated
/// where the kernel loads its tiles (its producers fused in: the left operand's values
/// over coordinates `[.., m, k]`, the right one's over `[.., k, n]`), and an epilogue over
/// the product's coordinates `[.., m, n]` ([`KernelPlan::dims`](crate::plan::KernelPlan::dims)): the product's value (an
/// `Op(MatMul)` with no operands, the accumulator) and every elementwise consumer the
/// kernel computes, whose targets are its outputs. Every load is strided, over the
/// explicit coordinates of its phase. The values are in phase order: the left operand's,
/// the right one's, then the epilogue's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct GemmPlan {
    pub(crate) left: GemmOperand,
    pub(crate) right: GemmOperand,
    /// The batch axes (the product's shape without its last two), then `m`, `n`, `k`.
    pub(crate) batch: Vec<usize>,
    pub(crate) m: usize,
    pub(crate) n: usize,
    pub(crate) k: usize,
    /// The element type multiplied and accumulated.
    pub(crate) dtype: DType,
    /// The tiles, chosen for the device (a search or the default table, `exec::tune`)
    /// before the kernel is generated: `None` until then, and then written into the key.
    pub(crate) tile: Option<crate::plan::gemm::tiles::GemmTile>,
    /// Segments of `k`, chosen with the tile (`plan::gemm::tiles::split`): a product of too few
    /// blocks to fill the device, with a long `k`, runs one work-group per block and
    /// segment, each writing its partial product, and a second kernel adds them up and
    /// applies the epilogue. 1: not split.
    pub(crate) split: usize,
    /// A reduction along the rows of an epilogue value, computed in the kernel (its
    /// work-groups cover whole rows: the tile's `bn` is at least `n`).
    pub(crate) row: Option<GemmRow>,
}

/// A reduction along the rows of a GEMM kernel's epilogue (`(a.matmul(&b) +
/// &bias).max(0.0).sum_axis(Axis(1))`, k-means' `argmin_axis(1)`): each work-item
/// reduces its columns of each of its rows, the work-items of a row combine in local
/// memory, and the result is written per row, `[.., m]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct GemmRow {
    pub(crate) op: ReduceOp,
    /// The epilogue value reduced.
    pub(crate) value: usize,
    /// The result's element type (`u64` for an arg reduction).
    pub(crate) dtype: DType,
    /// Graph index of the reduction.
    pub(crate) node: usize,
}

impl GemmPlan {
    /// Where the epilogue's values start.
    pub(crate) fn epilogue(&self) -> usize {
        self.right.values.end
    }

    /// The coordinates of each phase: the left operand's `[.., m, k]`, the right one's
    /// `[.., k, n]`, the epilogue's `[.., m, n]`.
    pub(crate) fn spaces(&self) -> [Vec<usize>; 3] {
        let with = |rows: usize, cols: usize| self.batch.iter().copied().chain([rows, cols]).collect();
        [with(self.m, self.k), with(self.k, self.n), with(self.m, self.n)]
    }

    /// The phase (0 left, 1 right, 2 epilogue) of value `v`.
    pub(crate) fn phase_of(&self, v: usize) -> usize {
        if self.left.values.contains(&v) {
            0
        } else if self.right.values.contains(&v) {
            1
        } else {
            2
        }
    }

    /// Blocks of the product: one per `bm x bn` block of each matrix.
    pub(crate) fn blocks(&self) -> usize {
        let Some(t) = self.tile else { return 0 };
        self.matrices() * self.m.div_ceil(t.bm as usize) * self.n.div_ceil(t.bn as usize)
    }

    /// Work-groups of a launch: one per block and segment of `k`.
    pub(crate) fn groups(&self) -> usize {
        self.blocks() * self.split
    }

    /// The number of matrices of the product.
    pub(crate) fn matrices(&self) -> usize {
        self.batch.iter().product()
    }

    /// Multiply-adds of the product.
    pub(crate) fn work(&self) -> u64 {
        let batch: u64 = self.batch.iter().map(|&b| b as u64).product();
        batch * self.m as u64 * self.n as u64 * self.k as u64
    }
}

/// One operand of a GEMM kernel: its values (a range of [`KernelPlan::values`](crate::plan::KernelPlan::values)), the one
/// that is the operand, and how its tiles are loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct GemmOperand {
    pub(crate) values: std::ops::Range<usize>,
    pub(crate) value: usize,
    pub(crate) along: crate::plan::gemm::tiles::Along,
    /// Every vector load of its phase starts at a multiple of the vector width (its
    /// offset and strides are), so it can be one wide load; set with the tile.
    pub(crate) aligned: bool,
}
