//! Fourier transforms: how a length is split into passes ([`passes`]) and how one pass is
//! laid out in work-groups ([`FftPlan`]). Plain data, like `kernel_plan`; planning a
//! pass's kernel with its producers and consumers is `epilogue`'s.
//!
//! A transform of length `n = R₁ R₂ … R_P` is `P` passes of Stockham's algorithm
//! ([`FftSpec`]), each one kernel: a work-group loads whole `Rₚ`-point vectors of its
//! operand (through the operand's producers, turning each element by its twiddle), takes
//! their transforms in local memory in stages of radix 2, 3, 4, 5 or 7, and stores them
//! (through the consumers, at the last pass). A length with another prime factor is
//! Bluestein's convolution of power-of-two transforms (`api::fft`).

pub(crate) mod epilogue;

use crate::dtype::DType;
use crate::graph::{FftReal, FftSpec};

/// The radices of a work-group's stages: each vector's transform is stages of these.
pub(crate) const STAGE_RADICES: [u32; 6] = [8, 4, 2, 3, 5, 7];

/// The most points a work-group transforms at once (a pass's largest radix), for
/// elements of `dtype` on a device with `local_bytes` of local memory: the largest power
/// of two up to 4096 whose buffer and twiddle table (a quarter as many) fit, with a
/// fifth to spare for the rows' padding (4096 `c32` and 2048 `c64` on 48 KiB, 2048 and
/// 1024 on 32 KiB).
pub(crate) fn group_points(dtype: DType, local_bytes: usize) -> usize {
    let most = (local_bytes * 2 / (3 * dtype.size())).max(2);
    (1usize << most.ilog2()).min(4096)
}

/// The points a work-group takes where its vectors are short: more fill the device's
/// local memory and leave it fewer groups to switch between (measured on an H100:
/// batches of 256- and 1024-point transforms took 15–22 % longer with 4096 a group,
/// RESULTS.md H7).
pub(crate) const GROUP_POINTS: usize = 2048;

/// The bytes of memory a load or store fetches at least (a sector of an NVIDIA GPU, a
/// half line elsewhere): where neighbouring vectors are neighbours in memory, a group
/// takes enough of them to fill one (measured on an H100: transforms of 2^20 points, two
/// passes, took 14 % less time with four vectors a group than with two, H7).
pub(crate) const SECTOR_BYTES: usize = 32;

/// The points each work-item of a pass takes: 4096 points are 512 work-items.
pub(crate) const POINTS_PER_ITEM: u32 = 8;

/// Bytes of local memory after which an index into a pass's points skips one element
/// (a row of the banks: 32 banks of 4 bytes), so that a stage's writes, `q` points apart,
/// fall in different banks.
pub(crate) const BANK_ROW_BYTES: usize = 128;

/// Elements of `dtype` in a row of the banks: an index `i` into a pass's points sits at
/// `i + i / padded_every(dtype)` in local memory.
pub(crate) fn padded_every(dtype: DType) -> u32 {
    (BANK_ROW_BYTES / dtype.size()).max(1) as u32
}

/// Vectors a work-group holds at least along an axis that is not the innermost: its
/// neighbouring vectors are the neighbours in memory, so this many make one load of 128
/// bytes of `c32` (and of `c64`, 256).
pub(crate) const STRIDED_VECTORS: usize = 16;

/// The radices of the passes of a transform of length `n` (in order, their product `n`),
/// each at most [`group_points`] on a device of `local_bytes` (a sixteenth of it along
/// an axis that is not the innermost, `strided`: [`STRIDED_VECTORS`]); `None` when `n`
/// has a prime factor above 7 (Bluestein's algorithm takes those). Length 1 has no pass.
pub(crate) fn passes(n: usize, dtype: DType, local_bytes: usize, strided: bool) -> Option<Vec<u32>> {
    let mut factors = Vec::new();
    let mut rest = n;
    for p in [2, 3, 5, 7] {
        while rest > 1 && rest.is_multiple_of(p) {
            factors.push(p);
            rest /= p;
        }
    }
    if rest != 1 {
        return None;
    }
    let cap = match strided {
        true => group_points(dtype, local_bytes) / STRIDED_VECTORS,
        false => group_points(dtype, local_bytes),
    };
    // The fewest passes whose radices each fit, the factors dealt largest first to the
    // pass with the smallest product (balanced passes: neither is a sliver).
    factors.sort_unstable_by(|a, b| b.cmp(a));
    (1..=factors.len().max(1))
        .find_map(|count| {
            let mut radices = vec![1usize; count];
            for &f in &factors {
                let smallest = (0..count).min_by_key(|&k| radices[k])?;
                radices[smallest] *= f;
            }
            radices
                .iter()
                .all(|&r| r <= cap)
                .then(|| radices.iter().map(|&r| r as u32).collect())
        })
        .map(|r: Vec<u32>| if n == 1 { Vec::new() } else { r })
}

/// The stages of a work-group's transform of `radix` points: eights while they divide,
/// then a four or a two, threes, fives and sevens.
pub(crate) fn stages(radix: u32) -> Vec<u32> {
    let mut out = Vec::new();
    let mut rest = radix;
    for r in STAGE_RADICES {
        while rest > 1 && rest.is_multiple_of(r) {
            out.push(r);
            rest /= r;
        }
    }
    out
}

/// One pass of a transform of complex elements along one axis of its operand, viewed in
/// row-major order as `[outer, len, inner]`: its vectors are `(o, j, c)` for `j < len /
/// radix`, vector `w = (o (len / radix) + j) inner + c`, point `r` of which is element
/// `(o, j + r len / radix, c)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FftPlan {
    pub(crate) spec: FftSpec,
    pub(crate) dtype: DType,
    pub(crate) outer: usize,
    pub(crate) len: usize,
    pub(crate) inner: usize,
    /// The radices of the work-group's stages (their product is the pass's radix).
    pub(crate) stages: Vec<u32>,
    /// Vectors per work-group.
    pub(crate) vectors: u32,
    /// The value transformed: the operand's, computed in the loads.
    pub(crate) value: usize,
    /// Where the values of the elementwise consumers computed in the stores start;
    /// `None`: the pass is stored alone.
    pub(crate) epilogue: Option<usize>,
}

impl FftPlan {
    /// Vectors in all.
    pub(crate) fn vector_count(&self) -> usize {
        self.outer * self.per_row() * self.inner
    }

    /// Vectors along the axis, `len / radix`, which is also the distance along it
    /// between a vector's points; one for a real signal's pass (whose operand's length is
    /// not its radix's multiple: [`FftReal`]).
    pub(crate) fn per_row(&self) -> usize {
        match self.spec.real {
            FftReal::No => self.len / self.spec.radix as usize,
            FftReal::Forward | FftReal::Inverse => 1,
        }
    }

    /// Points a vector loads: its radix, and `X_m` too for a real signal's inverse.
    pub(crate) fn loaded(&self) -> u32 {
        match self.spec.real {
            FftReal::Inverse => self.spec.radix + 1,
            FftReal::No | FftReal::Forward => self.spec.radix,
        }
    }

    /// Points a vector stores: its radix, and `X_m` too for a real signal's forward
    /// transform (an inverse's points are stored as two real samples each).
    pub(crate) fn stored(&self) -> u32 {
        match self.spec.real {
            FftReal::Forward => self.spec.radix + 1,
            FftReal::No | FftReal::Inverse => self.spec.radix,
        }
    }

    /// Work-items per work-group: one per [`POINTS_PER_ITEM`] of the group's points, at
    /// least 32 and at most 512 (and the device's largest group).
    pub(crate) fn group_size(&self) -> u32 {
        let points = self.vectors * self.spec.radix;
        (points / POINTS_PER_ITEM)
            .next_power_of_two()
            .clamp(32, 512)
            .min(self.spec.device.max_group.max(1))
    }

    /// A row of local memory: a vector's points, and one element of padding where the
    /// group holds several (so that walks across vectors fall in different banks).
    /// A real signal's pass holds `X_0 ..= X_m` in a row of `m + 1`.
    pub(crate) fn row(&self) -> u32 {
        match (self.vectors, self.spec.real) {
            (1, FftReal::No) => self.spec.radix,
            _ => self.spec.radix + 1,
        }
    }

    /// Entries of the twiddle table of the work-group's stages (`e^(∓2πi e / radix)` for
    /// `e` below it): a quarter of the radix where four divides it (the other quarters
    /// are these turned by `∓i`), half where two does (the other half is their
    /// negation), else the radix; 0 without a table (one stage).
    pub(crate) fn table(&self) -> u32 {
        let radix = self.spec.radix;
        match (self.stages.len(), radix % 4) {
            (0 | 1, _) => 0,
            (_, 0) => radix / 4,
            (_, 2) => radix / 2,
            _ => radix,
        }
    }

    /// Elements of local memory a work-group holds: its rows, padded ([`padded_every`]),
    /// and the twiddle table.
    pub(crate) fn local_elements(&self) -> usize {
        let held = (self.vectors * self.row()) as usize;
        held + held / padded_every(self.dtype) as usize + self.table() as usize
    }

    /// Work-groups in all.
    pub(crate) fn groups(&self) -> usize {
        self.vector_count().div_ceil(self.vectors as usize)
    }

    /// Whether neighbouring vectors are neighbours in memory where the pass loads them:
    /// along an axis that is not the innermost (`c` is the fastest), or past the first of
    /// several passes (`j`, whose points are `len / radix` apart).
    pub(crate) fn loads_by_vector(&self) -> bool {
        self.inner > 1 || self.per_row() > 1
    }

    /// Whether neighbouring vectors are neighbours in memory where the pass stores them:
    /// along an axis that is not the innermost, or after a first pass (`j mod done`).
    pub(crate) fn stores_by_vector(&self) -> bool {
        self.inner > 1 || self.spec.done > 1
    }
}

/// The layout of pass `spec` over an operand of `shape` with elements of `dtype`.
pub(crate) fn fft_plan(spec: FftSpec, dtype: DType, shape: &[usize]) -> FftPlan {
    let outer = shape[..spec.axis].iter().product();
    let len = shape[spec.axis];
    let inner = shape[spec.axis + 1..].iter().product();
    let radix = spec.radix as usize;
    let mut plan = FftPlan {
        spec,
        dtype,
        outer,
        len,
        inner,
        stages: stages(spec.radix),
        vectors: 1,
        value: 0,
        epilogue: None,
    };
    // Vectors up to [`GROUP_POINTS`] points, or as many as make a whole sector of memory
    // where neighbouring vectors are neighbours there; a power of two, no more than the
    // device's local memory holds, nor than there are.
    let local = spec.device.local_bytes as usize;
    let most = (group_points(dtype, local) / radix.max(1)).max(1);
    let mut wanted = (GROUP_POINTS / radix.max(1)).max(1);
    if plan.loads_by_vector() || plan.stores_by_vector() {
        wanted = wanted.max(SECTOR_BYTES / dtype.size());
    }
    let wanted = wanted
        .min(most)
        .min(plan.vector_count().max(1).next_power_of_two());
    plan.vectors = 1;
    while (plan.vectors as usize) < wanted {
        let wider = FftPlan {
            vectors: plan.vectors * 2,
            ..plan.clone()
        };
        if wider.local_elements() * dtype.size() > local {
            break;
        }
        plan.vectors = wider.vectors;
    }
    plan
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::FftDevice;

    #[test]
    fn lengths_split_into_balanced_passes_that_fit() {
        let (c32, kb) = (DType::C32, 1024);
        assert_eq!(group_points(c32, 32 * kb), 2048);
        assert_eq!(group_points(c32, 48 * kb), 4096);
        assert_eq!(group_points(c32, 64 * kb), 4096);
        assert_eq!(group_points(DType::C64, 48 * kb), 2048);
        assert_eq!(group_points(DType::C64, 32 * kb), 1024);
        let passes = |n, d| passes(n, d, 48 * kb, false);
        assert_eq!(super::passes(4096, c32, 48 * kb, true), Some(vec![64, 64]));
        assert_eq!(passes(1, c32), Some(vec![]));
        assert_eq!(passes(2, c32), Some(vec![2]));
        assert_eq!(passes(2048, c32), Some(vec![2048]));
        assert_eq!(passes(4096, DType::C64), Some(vec![64, 64]));
        assert_eq!(passes(4096, c32), Some(vec![4096]));
        assert_eq!(passes(1 << 20, c32), Some(vec![1024, 1024]));
        assert_eq!(passes(11, c32), None);
        assert_eq!(passes(2 * 1009, c32), None);
        for n in [6, 360, 1000, 7 * 7 * 7 * 5, 3 << 16, 1 << 23] {
            let r = passes(n, DType::C64).unwrap();
            assert_eq!(r.iter().map(|&x| x as usize).product::<usize>(), n);
            assert!(r.iter().all(|&x| x as usize <= 2048), "{n}: {r:?}");
        }
        assert_eq!(stages(1024), [8, 8, 8, 2]);
        assert_eq!(stages(512), [8, 8, 8]);
        assert_eq!(stages(360), [8, 3, 3, 5]);
    }

    #[test]
    fn a_group_takes_the_vectors_its_local_memory_holds() {
        let kb = 1024;
        let plan = |radix, done, len, local_bytes, dtype: DType| {
            let spec = FftSpec {
                axis: 0,
                radix,
                done,
                inverse: false,
                device: FftDevice {
                    local_bytes,
                    max_group: 1024,
                },
                real: FftReal::No,
            };
            fft_plan(spec, dtype, &[len])
        };
        for dtype in [DType::C32, DType::C64] {
            for local in [16 * kb, 32 * kb, 48 * kb, 64 * kb] {
                for (radix, len) in [(2, 1 << 12), (7, 7 * 49), (64, 1 << 12), (1024, 1 << 20)] {
                    let f = plan(radix, 1, len, local, dtype);
                    let bytes = f.local_elements() * dtype.size();
                    let most = group_points(dtype, local as usize);
                    assert!(f.vectors.is_power_of_two(), "{f:?}");
                    assert!(bytes <= local as usize || f.vectors == 1, "{f:?}: {bytes}");
                    assert!((f.vectors * radix) as usize <= most.max(radix as usize));
                    // Twice as many would not fit, or exceed the points or the vectors,
                    // or more than the group's points or a sector's neighbours.
                    let wider = FftPlan {
                        vectors: f.vectors * 2,
                        ..f.clone()
                    };
                    let by_vector = f.loads_by_vector() || f.stores_by_vector();
                    let sector = if by_vector { SECTOR_BYTES / dtype.size() } else { 1 };
                    let wanted = (GROUP_POINTS / radix as usize).max(sector);
                    assert!(
                        wider.local_elements() * dtype.size() > local as usize
                            || (wider.vectors * radix) as usize > most
                            || wider.vectors as usize > f.vector_count().next_power_of_two()
                            || wider.vectors as usize > wanted,
                        "{f:?}"
                    );
                    assert!(f.group_size() <= 512 && f.group_size() >= 32);
                }
            }
        }
        // The first of two passes of 2^20 `c32` points on 48 KiB: four vectors, 32 bytes
        // of each load's neighbours.
        assert_eq!(plan(1024, 1, 1 << 20, 48 * kb, DType::C32).vectors, 4);
        assert_eq!(plan(4096, 1, 4096, 48 * kb, DType::C32).vectors, 1);
        assert_eq!(plan(8, 1, 8, 48 * kb, DType::C32).vectors, 1);
    }
}
