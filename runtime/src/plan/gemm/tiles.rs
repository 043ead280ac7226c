//! A GEMM kernel's tiles: what they are ([`GemmTile`]), the shape classes a choice is
//! made for ([`GemmClass`]), the candidates a search on the device times, and the fixed
//! table used without one. Pure: `exec::tune` runs the search and keeps its results.

use crate::dtype::DType;
pub(crate) use crate::layout::GemmTile;

use crate::plan::DeviceProfile;

/// Which way neighbouring work-items load a GEMM operand's tile: along its columns (the
/// operand's last axis, where a row-major matrix is contiguous) or along its rows (where
/// a transposed one is).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Along {
    Columns,
    Rows,
}

/// The shape class a tile is chosen for: the element type, how each operand is loaded,
/// and each of `m`, `n`, `k` and the batch by size bucket ([`bucket`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct GemmClass {
    pub(crate) dtype: DType,
    pub(crate) left: Along,
    pub(crate) right: Along,
    pub(crate) m: u8,
    pub(crate) n: u8,
    pub(crate) k: u8,
    pub(crate) batch: u8,
    /// The kernel reduces its rows too: their length rounded up to a power of two (its
    /// tiles must cover whole rows of any length of the class), else 0.
    pub(crate) rows: u16,
}

/// The size bucket of an extent: ≤ 8, ≤ 32, ≤ 128, ≤ 512, ≤ 2048, more.
pub(crate) fn bucket(x: usize) -> u8 {
    match x {
        0..=8 => 0,
        9..=32 => 1,
        33..=128 => 2,
        129..=512 => 3,
        513..=2048 => 4,
        _ => 5,
    }
}

impl GemmClass {
    pub(crate) fn of(plan: &crate::plan::GemmPlan) -> GemmClass {
        GemmClass {
            dtype: plan.dtype,
            left: plan.left.along,
            right: plan.right.along,
            m: bucket(plan.m),
            n: bucket(plan.n),
            k: bucket(plan.k),
            batch: bucket(plan.batch.iter().product()),
            rows: match plan.row {
                Some(_) => plan.n.next_power_of_two().min(u16::MAX as usize) as u16,
                None => 0,
            },
        }
    }

    /// The class as words of a tuning file's line (see [`GemmClass::parse`]).
    pub(crate) fn words(&self) -> String {
        let along = |a: Along| if a == Along::Rows { "r" } else { "c" };
        format!(
            "{} {}{} {} {} {} {}{}",
            self.dtype.rust_name(),
            along(self.left),
            along(self.right),
            self.m,
            self.n,
            self.k,
            self.batch,
            match self.rows {
                0 => String::new(),
                w => format!(" rows {w}"),
            }
        )
    }
}

/// The most accumulators (`tm x tn`) a work-item of a tile may own. The tiles of the
/// tables below own at most 128; on PoCL a tile of 1024 took minutes to compile.
pub(crate) const MAX_ACCUMULATORS: usize = 256;

/// The most elements of one operand a work-item of a tile may load per step (held in
/// registers until they are staged, each load written out in the kernel); the tables'
/// tiles load at most 16.
pub(crate) const MAX_LOADS: usize = 64;

/// The most multiply-adds one unrolled stretch of a tile's `k` loop may hold (steps
/// unrolled times accumulators); the tables' tiles hold at most 1024.
pub(crate) const MAX_UNROLLED: usize = 2048;

/// Whether the tile is well formed (every division exact, every work-item loading
/// the same number of each operand's elements) and fits the device: its work-group, its
/// local memory, the values its work-items keep live (accumulators and staged loads,
/// against [`DeviceProfile::private_bytes`]), and the size of its code (accumulators,
/// loads and unrolled steps, so that no compile takes minutes). Every tile lazycl builds
/// passes this, whether it comes from the tables below or from the disk cache's table.
pub(crate) fn fits(t: &GemmTile, profile: &DeviceProfile, dtype: DType) -> bool {
    let v = t.vector;
    let shaped = [t.bm, t.bn, t.bk, t.tm, t.tn, v].iter().all(|&x| x > 0)
        && t.bm.is_multiple_of(t.tm)
        && t.bn.is_multiple_of(t.tn)
        && t.tm.is_multiple_of(v)
        && t.tn.is_multiple_of(v)
        && matches!(v, 1 | 2 | 4 | 8 | 16);
    if !shaped {
        return false;
    }
    let group = t.group();
    let loads = |side: u16| side as usize * t.bk as usize / group;
    let accumulators = t.tm as usize * t.tn as usize;
    let steps = match t.unroll {
        0 => t.bk,
        u => u.min(t.bk),
    } as usize;
    let live = (accumulators + loads(t.bm) + loads(t.bn)) as u64 * dtype.value_size() as u64;
    (t.bm as usize * t.bk as usize).is_multiple_of(group)
        && (t.bn as usize * t.bk as usize).is_multiple_of(group)
        && group <= profile.max_group
        && t.local_bytes(dtype) <= profile.local_mem_bytes
        && accumulators <= MAX_ACCUMULATORS
        && loads(t.bm).max(loads(t.bn)) <= MAX_LOADS
        && steps * accumulators <= MAX_UNROLLED
        && group as u64 * live <= profile.private_bytes
}

/// Whether tile `t` can reduce rows of `n` elements of type `dtype` in its kernel: its
/// blocks cover whole rows, and its staged tiles and the rows' partials (a value and an
/// index per row of the block and work-item along it, of at most 8 bytes each) fit the
/// device's local memory.
pub(crate) fn covers_rows(t: &GemmTile, profile: &DeviceProfile, dtype: DType, n: usize) -> bool {
    let scratch = row_scratch(t) as u64 * 16;
    fits(t, profile, dtype) && t.bn as usize >= n && t.local_bytes(dtype) + scratch <= profile.local_mem_bytes
}

/// Partials of a row reduction in a block of tile `t`: one per row and work-item along it.
pub(crate) fn row_scratch(t: &GemmTile) -> usize {
    t.bm as usize * t.across()
}

/// A tile that reduces rows of `n` (at most [`GEMM_ROW_MAX`](crate::plan::group::GEMM_ROW_MAX))
/// in its kernel: the narrowest of a short list that covers them and fits.
pub(crate) fn covering(profile: &DeviceProfile, dtype: DType, n: usize) -> GemmTile {
    let list = [
        GemmTile::new(64, 16, 16, 4, 2, 2),
        GemmTile::new(128, 32, 16, 8, 2, 2),
        GemmTile::new(64, 64, 16, 4, 4, 4),
        GemmTile::new(64, 128, 16, 4, 8, 4),
        GemmTile::new(64, 128, 8, 4, 8, 4),
        GemmTile::new(32, 128, 8, 2, 8, 2),
        GemmTile::new(16, 128, 8, 1, 8, 1),
        GemmTile::new(8, 128, 8, 1, 8, 1),
    ];
    list.into_iter()
        .find(|t| covers_rows(t, profile, dtype, n))
        .unwrap_or(GemmTile::new(1, 128, 1, 1, 8, 1))
}

/// Multiply-adds below which a product is not worth a search: the default tile is close
/// enough, and timing candidates would cost more than it could ever save.
pub(crate) const SEARCH_FROM: u64 = 1 << 24;

/// The tiles a search times on a GPU: square blocks for large products, and blocks with a
/// side of 32 for products with a short side, some with a 4 x 4 block per work-item
/// (fewer local-memory reads per multiply-add than 4 x 2; RESULTS.md#rule-gemm-tiles).
const GPU_CANDIDATES: [GemmTile; 17] = [
    GemmTile::new(128, 128, 16, 8, 8, 4),
    GemmTile::new(128, 128, 8, 8, 8, 4),
    GemmTile::new(128, 128, 8, 8, 8, 4).unrolled(2),
    GemmTile::new(128, 64, 16, 8, 4, 4),
    GemmTile::new(64, 128, 16, 4, 8, 4),
    GemmTile::new(256, 128, 8, 16, 8, 4).unrolled(4),
    GemmTile::new(64, 64, 16, 4, 4, 4),
    GemmTile::new(64, 64, 8, 4, 4, 4),
    GemmTile::new(128, 32, 16, 8, 2, 2),
    GemmTile::new(64, 32, 16, 4, 2, 2),
    GemmTile::new(32, 32, 16, 2, 2, 2),
    GemmTile::new(16, 16, 16, 1, 1, 1),
    GemmTile::new(128, 32, 16, 4, 4, 4),
    GemmTile::new(64, 32, 16, 8, 4, 4),
    GemmTile::new(32, 64, 16, 4, 4, 4),
    GemmTile::new(32, 64, 32, 4, 4, 4),
    GemmTile::new(32, 128, 16, 4, 4, 4),
];

/// The tiles a search times on a CPU (few: each costs a compile).
const CPU_CANDIDATES: [GemmTile; 4] = [
    GemmTile::new(128, 128, 8, 8, 8, 4),
    GemmTile::new(64, 64, 8, 8, 8, 4),
    GemmTile::new(64, 128, 8, 8, 16, 4),
    GemmTile::new(64, 64, 16, 4, 4, 4),
];

/// The candidates worth timing for `class` on the device: those that fit, and whose
/// block is not far larger than the product; for a kernel that reduces its rows, those
/// that cover the class's rows, and the narrowest such tile.
pub(crate) fn candidates(profile: &DeviceProfile, class: &GemmClass) -> Vec<GemmTile> {
    let list: &[GemmTile] = if profile.gpu {
        &GPU_CANDIDATES
    } else {
        &CPU_CANDIDATES
    };
    if class.rows > 0 {
        let n = class.rows as usize;
        let mut covering_ones: Vec<GemmTile> = list
            .iter()
            .copied()
            .filter(|t| covers_rows(t, profile, class.dtype, n))
            .collect();
        let narrowest = covering(profile, class.dtype, n);
        if !covering_ones.contains(&narrowest) {
            covering_ones.push(narrowest);
        }
        return covering_ones;
    }
    let small = |block: u16, b: u8| b < 5 && block as usize > 4 * bucket_top(b);
    let fitting: Vec<GemmTile> = list
        .iter()
        .copied()
        .filter(|t| fits(t, profile, class.dtype) && !small(t.bm, class.m) && !small(t.bn, class.n))
        .collect();
    if fitting.is_empty() {
        vec![default_tile(profile, class)]
    } else {
        fitting
    }
}

/// Segments of `k` for GEMM plan `g` with its tile: where its blocks are fewer than the
/// device's compute units, enough segments for about two work-groups per compute unit,
/// each of at least [`SEGMENT_STEPS`] steps of the tile's `bk`; else 1.
pub(crate) fn split(profile: &DeviceProfile, g: &crate::plan::GemmPlan) -> usize {
    let Some(t) = g.tile else { return 1 };
    let blocks = g.blocks().max(1);
    let units = profile.compute_units.max(1) as usize;
    if blocks >= units {
        return 1;
    }
    let steps = g.k.div_ceil(t.bk as usize);
    (2 * units).div_ceil(blocks).min(steps / SEGMENT_STEPS).max(1)
}

/// The fewest steps of `bk` a segment of a split product takes.
const SEGMENT_STEPS: usize = 8;

/// The largest extent of bucket `b`.
fn bucket_top(b: u8) -> usize {
    [8, 32, 128, 512, 2048, usize::MAX][b as usize]
}

/// The tile used without a search: large blocks for large products, smaller ones where
/// a dimension is small (so that the work-groups still cover the device); on CPUs what
/// searches chose for large products, and a small block per work-item for small ones.
pub(crate) fn default_tile(profile: &DeviceProfile, class: &GemmClass) -> GemmTile {
    let wide = class.dtype.size() >= 8;
    let choice = if !profile.gpu && class.m >= 4 && class.n >= 4 {
        // What searches chose on PoCL for large products.
        GemmTile::new(64, 128, 8, 8, 16, 4)
    } else if !profile.gpu {
        // Small products: a small block per work-item compiles in a third of the time on
        // PoCL (its work-item loops keep every accumulator across a barrier), and the
        // product is too small for the difference in speed to show.
        GemmTile::new(64, 64, 8, 4, 4, 4)
    } else if class.m >= 4 && class.n >= 4 {
        GemmTile::new(128, 128, if wide { 8 } else { 16 }, 8, 8, 4)
    } else if class.m >= 3 && class.n >= 3 {
        GemmTile::new(64, 64, 16, 4, 4, 4)
    } else if class.n <= 1 && class.m >= 3 {
        GemmTile::new(128, 32, 16, 8, 2, 2)
    } else if class.m <= 1 || class.n <= 1 {
        GemmTile::new(16, 16, 16, 1, 1, 1)
    } else {
        GemmTile::new(32, 32, 16, 2, 2, 2)
    };
    let fallbacks = [
        choice,
        GemmTile::new(64, 64, 8, 4, 4, 4),
        GemmTile::new(32, 32, 8, 2, 2, 2),
        GemmTile::new(16, 16, 8, 1, 1, 1),
        GemmTile::new(8, 8, 8, 1, 1, 1),
        GemmTile::new(4, 4, 4, 1, 1, 1),
        GemmTile::new(1, 1, 1, 1, 1, 1),
    ];
    fallbacks
        .into_iter()
        .find(|t| fits(t, profile, class.dtype))
        .unwrap_or(GemmTile::new(1, 1, 1, 1, 1, 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profile(gpu: bool) -> DeviceProfile {
        DeviceProfile {
            gpu,
            compute_units: if gpu { 132 } else { 2 },
            max_group: if gpu { 1024 } else { 4096 },
            local_mem_bytes: if gpu { 49152 } else { 65536 },
            private_bytes: if gpu { 256 * 1024 } else { 1 << 20 },
            parameter_bytes: 4096,
            tuning: Default::default(),
        }
    }

    fn class(dtype: DType, m: usize, n: usize, k: usize) -> GemmClass {
        GemmClass {
            dtype,
            left: Along::Columns,
            right: Along::Columns,
            m: bucket(m),
            n: bucket(n),
            k: bucket(k),
            batch: 0,
            rows: 0,
        }
    }

    #[test]
    fn every_candidate_and_default_is_well_formed() {
        for gpu in [true, false] {
            let p = profile(gpu);
            for d in [DType::F32, DType::F64, DType::I32, DType::U64] {
                for size in [1, 7, 33, 200, 1000, 5000] {
                    let c = class(d, size, size, size);
                    assert!(fits(&default_tile(&p, &c), &p, d), "{c:?}");
                    for t in candidates(&p, &c) {
                        assert!(fits(&t, &p, d), "{t} for {c:?}");
                    }
                }
            }
        }
        for t in GPU_CANDIDATES.iter().chain(&CPU_CANDIDATES) {
            assert_eq!(
                GemmTile::parse(&t.words().split(' ').collect::<Vec<_>>()),
                Some(*t)
            );
        }
    }

    /// Each limit `fits` checks, broken alone by a tile that is well formed and within
    /// every other limit (as a line of the disk cache's table could be).
    #[test]
    fn each_limit_of_the_device_is_checked() {
        let f32 = DType::F32;
        let wide = DeviceProfile {
            max_group: 1 << 20,
            local_mem_bytes: 1 << 40,
            private_bytes: 1 << 40,
            ..profile(false)
        };
        // 256 work-items of 16 accumulators and 2 + 2 loads, 8704 bytes of local memory.
        let t = GemmTile::new(64, 64, 8, 4, 4, 4);
        assert!(fits(&t, &wide, f32));
        for (what, limited) in [
            (
                "work-group",
                DeviceProfile {
                    max_group: 128,
                    ..wide
                },
            ),
            (
                "local memory",
                DeviceProfile {
                    local_mem_bytes: 4096,
                    ..wide
                },
            ),
            (
                "private bytes",
                DeviceProfile {
                    private_bytes: 16 * 1024,
                    ..wide
                },
            ),
        ] {
            assert!(!fits(&t, &limited, f32), "{what}");
        }
        for (what, t) in [
            // 1024 accumulators (2048 unrolled multiply-adds, 4 loads).
            ("accumulators", GemmTile::new(512, 512, 2, 32, 32, 16)),
            // 256 loads of each operand (256 accumulators, 1 step unrolled).
            ("loads", GemmTile::new(128, 128, 128, 16, 16, 16).unrolled(1)),
            // 16 steps of 256 accumulators unrolled (32 loads).
            ("unrolled steps", GemmTile::new(128, 128, 16, 16, 16, 16)),
        ] {
            assert!(!fits(&t, &wide, f32), "{what}: {t}");
        }
        // The limits exclude no tile of the tables on the devices they are for.
        for (gpu, list) in [(true, &GPU_CANDIDATES[..]), (false, &CPU_CANDIDATES[..])] {
            for t in list {
                assert!(fits(t, &profile(gpu), f32), "{t}");
            }
        }
        // On PoCL's profile: the tile that crashed the process (4 MiB of accumulators
        // per work-group) and the one whose compile took minutes.
        let p = profile(false);
        assert!(!fits(&GemmTile::new(1024, 1024, 4, 16, 16, 16), &p, f32));
        assert!(!fits(&GemmTile::new(1024, 1024, 4, 32, 32, 16), &p, f32));
    }

    #[test]
    fn row_reductions_get_tiles_that_cover_their_rows() {
        for gpu in [true, false] {
            let p = profile(gpu);
            for d in [DType::F32, DType::F64, DType::U64] {
                for n in [1, 5, 16, 17, 32, 64, 100, 128] {
                    let t = covering(&p, d, n);
                    assert!(covers_rows(&t, &p, d, n), "{t} for {n} of {d:?}");
                    let mut c = class(d, 1000, n, 1000);
                    c.rows = n.next_power_of_two() as u16;
                    assert!(candidates(&p, &c).iter().all(|t| covers_rows(t, &p, d, n)));
                }
            }
        }
    }

    #[test]
    fn doubles_get_tiles_that_fit_local_memory() {
        let p = profile(true);
        let t = default_tile(&p, &class(DType::F64, 4096, 4096, 4096));
        assert!(t.local_bytes(DType::F64) <= p.local_mem_bytes);
        assert_eq!((t.bm, t.bn), (128, 128));
    }

    #[test]
    fn small_products_get_small_blocks() {
        let p = profile(true);
        let t = default_tile(&p, &class(DType::F32, 5, 5, 5));
        assert!(t.bm <= 16 && t.bn <= 16, "{t}");
        assert!(candidates(&p, &class(DType::F32, 20, 20, 20))
            .iter()
            .all(|t| t.bm <= 128));
    }
}
