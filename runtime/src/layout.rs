//! Layout constants shared by the planner, the code generator and the backend: decided
//! once here so that no layer reads another's private numbers.

/// Counters per queue for reductions finished in their own kernel: the most blocks of
/// outputs such a reduction may have.
pub(crate) const FINISH_COUNTERS: usize = 1024;
/// The counter kept for reductions over the rows computed beside a row reduction
/// (`KernelPlan::row_total`): the last one, which no block of outputs uses
/// (their kernels have one block, and other kernels fewer than [`FINISH_COUNTERS`]).
pub(crate) const ROW_TOTAL_COUNTER: usize = FINISH_COUNTERS - 1;

/// Work-group size of reduction kernels (a power of two, within every device's limit
/// this code targets; smaller devices get `device_max` instead).
pub(crate) const REDUCE_GROUP: u32 = 256;

/// Elements per vector: per vector load of a reduction, outputs per work-item of a vector
/// column layout, and the fewest per work-item iteration of the vectorized elementwise
/// loop ([`vector_width`]).
pub(crate) const VECTOR_WIDTH: usize = 4;

/// The bytes the narrowest element type of a vectorized elementwise loop moves per access
/// at least: a 16-byte access is the widest one load instruction makes on the GPUs this
/// targets.
pub(crate) const VECTOR_BYTES: usize = 16;

/// The bytes an element of `d` counts for the vector width ([`vector_width`]): its size,
/// but four for `f16`, whose wider vector accesses NVIDIA's OpenCL makes slow (a chain over
/// `f16` in eight lanes ran at 0.58 of the copy, in four at 0.93: RESULTS.md, H4), and for
/// `bool`: a mask beside wider values (a `select` over `f32`) would widen their accesses
/// fourfold, which nothing measured asks for.
pub(crate) fn vector_bytes(d: crate::dtype::DType) -> usize {
    match d {
        crate::dtype::DType::F16 | crate::dtype::DType::Bool => 4,
        d => d.size(),
    }
}

/// The widest vector, in bytes, of any element type of a vectorized elementwise loop.
const VECTOR_MOST_BYTES: usize = 64;

/// Elements per work-item iteration of a vectorized elementwise loop whose element types
/// in memory take from `narrowest` to `widest` bytes: [`VECTOR_BYTES`] of the narrowest
/// (eight lanes of a 16-bit type, sixteen of an 8-bit one), at least [`VECTOR_WIDTH`],
/// and at most [`VECTOR_MOST_BYTES`] of the widest (eight `f64` lanes beside `u8`).
pub(crate) fn vector_width(narrowest: usize, widest: usize) -> usize {
    let most = (VECTOR_MOST_BYTES / widest.max(1)).max(VECTOR_WIDTH);
    (VECTOR_BYTES / narrowest.max(1)).clamp(VECTOR_WIDTH, most.min(16))
}

/// Rows each work-item takes per step of a column reduction with a row reduction inside
/// (their loads are in flight together).
pub(crate) const ROWS_PER_STEP: usize = 4;

/// Local memory the group-rows layout takes per work-item: two halves of a step's row
/// values, of at most 8 bytes each. The planner sizes that layout's work-group by it.
pub(crate) const GROUP_ROWS_LOCAL_BYTES: usize = 2 * ROWS_PER_STEP * 8;

/// The tiles of a GEMM kernel: a work-group computes a `bm x bn` block of the product,
/// stepping through `k` by `bk` with both operands' tiles staged in local memory (two
/// buffers each, so that one step's loads overlap the previous step's arithmetic); each
/// of its `(bm / tm) * (bn / tn)` work-items computes `tm x tn` elements, in runs of
/// `vector` neighbours read from local memory as one vector.
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct GemmTile {
    pub(crate) bm: u16,
    pub(crate) bn: u16,
    pub(crate) bk: u16,
    pub(crate) tm: u16,
    pub(crate) tn: u16,
    pub(crate) vector: u16,
    /// How many steps of a tile's `bk` the compiler unrolls (0: all): full unrolling
    /// gives the scheduler the most freedom, and on some compilers too many live
    /// registers.
    pub(crate) unroll: u16,
}

impl GemmTile {
    /// A tile of these sizes (not checked: see `plan::gemm::tiles::fits`).
    pub const fn new(bm: u16, bn: u16, bk: u16, tm: u16, tn: u16, vector: u16) -> GemmTile {
        GemmTile {
            bm,
            bn,
            bk,
            tm,
            tn,
            vector,
            unroll: 0,
        }
    }

    /// This tile with `unroll` steps of `bk` unrolled (0: all).
    pub const fn unrolled(self, unroll: u16) -> GemmTile {
        GemmTile { unroll, ..self }
    }

    /// The tile as seven words (`bm bn bk tm tn vector unroll`), as tables store it.
    pub(crate) fn words(&self) -> String {
        format!(
            "{} {} {} {} {} {} {}",
            self.bm, self.bn, self.bk, self.tm, self.tn, self.vector, self.unroll
        )
    }

    /// A tile from its seven [`words`](GemmTile::words).
    pub(crate) fn parse(words: &[&str]) -> Option<GemmTile> {
        let v: Vec<u16> = words.iter().map(|w| w.parse().ok()).collect::<Option<_>>()?;
        match v[..] {
            [bm, bn, bk, tm, tn, vector, unroll] => {
                Some(GemmTile::new(bm, bn, bk, tm, tn, vector).unrolled(unroll))
            }
            _ => None,
        }
    }

    /// Work-items per work-group.
    pub(crate) fn group(&self) -> usize {
        (self.bm / self.tm) as usize * (self.bn / self.tn) as usize
    }

    /// Work-items along the block's columns.
    pub(crate) fn across(&self) -> usize {
        (self.bn / self.tn) as usize
    }

    /// Local memory of the staged tiles (two buffers of each operand, rows padded by a
    /// vector).
    pub(crate) fn local_bytes(&self, dtype: crate::dtype::DType) -> u64 {
        let v = self.vector as u64;
        2 * self.bk as u64 * (self.bm as u64 + v + self.bn as u64 + v) * dtype.value_size() as u64
    }
}

impl std::fmt::Display for GemmTile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}x{}x{}/{}x{}/v{}",
            self.bm, self.bn, self.bk, self.tm, self.tn, self.vector
        )?;
        match self.unroll {
            0 => Ok(()),
            u => write!(f, "/u{u}"),
        }
    }
}
