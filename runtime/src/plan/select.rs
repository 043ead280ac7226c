//! How the `k` first keys of each row are selected without sorting the row
//! ([`SelectPlan`], chosen by [`select_plan`]): `topk` and `bottomk` for a small `k`.
//! Plain data, like `sort`, that codegen prints and exec launches.
//!
//! A work-group reads its row once, in chunks of `GROUP * ITEMS` keys. The group keeps a
//! buffer of `cap` (key, position) pairs in local memory: its first `k` slots hold the
//! best `k` found so far, sorted, and the `k`-th of them is the bar a key must pass to be
//! appended after them. When the buffer overflows (and at the row's end) a bitonic sort
//! of the buffer keeps the best `k` and raises the bar. Keys are compared with their
//! positions (lower first), so the result is exactly a stable sort's first `k`.
//!
//! A few long rows are split into parts, a work-group each; a second launch selects the
//! row's `k` from the parts' `k` candidates each ([`SelectLayout::Parts`]).

use crate::dtype::DType;
use crate::profile::DeviceProfile;

use crate::plan::sort::{flag, KeyKind, Order, SortLimit};

/// Keys a work-item reads per chunk (kept in registers until appended or passed over).
pub(crate) const SELECT_ITEMS: u32 = 8;
/// The largest work-group of a selection.
const MAX_GROUP: u32 = 256;
/// The largest buffer of candidates (slots).
const MAX_CAP: u32 = 2048;
/// A buffer holds at least this many times `k`: a merge keeps `k` slots and leaves the
/// rest (seven eighths at least) to new candidates, so that merges stay rare.
const CAP_PER_K: u32 = 8;

/// How the rows are spread over work-groups.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SelectLayout {
    /// A work-group of `group` work-items per row, which writes the row's `k`.
    Rows { group: u32 },
    /// `parts` work-groups of `group` per row, each selecting `k` candidates from its
    /// part of the row, then a work-group of `merge_group` per row selecting the `k`
    /// from the row's `parts * k` candidates.
    Parts {
        parts: usize,
        group: u32,
        merge_group: u32,
    },
}

/// A selection of the first `k` keys (in `order`) of `rows` rows of `len` keys each
/// (row-major, contiguous): their values and their positions in the row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SelectPlan {
    /// The keys' element type.
    pub(crate) dtype: DType,
    pub(crate) kind: KeyKind,
    pub(crate) order: Order,
    pub(crate) rows: usize,
    pub(crate) len: usize,
    pub(crate) k: usize,
    /// Slots of the group's buffer of candidates (a power of two, at least
    /// `CAP_PER_K * k`).
    pub(crate) cap: u32,
    pub(crate) layout: SelectLayout,
}

impl SelectPlan {
    /// Bits of a key.
    pub(crate) fn key_bits(&self) -> u32 {
        self.dtype.size() as u32 * 8
    }

    /// Keys of a row each group of the first launch reads (the whole row, or a part).
    pub(crate) fn part_len(&self) -> usize {
        match self.layout {
            SelectLayout::Rows { .. } => self.len,
            SelectLayout::Parts { parts, .. } => self.len.div_ceil(parts),
        }
    }

    /// The `flags` argument of a launch (`sort::flag`'s bits): `first` reads the
    /// user's keys (transformed on load, positions made), `last` writes the results
    /// (transformed back).
    pub(crate) fn flags(&self, first: bool, last: bool) -> u32 {
        let kind = match self.kind {
            KeyKind::Unsigned => 0,
            KeyKind::Signed => flag::SIGNED,
            KeyKind::Float => flag::FLOAT,
        };
        kind | if first { flag::FIRST } else { 0 }
            | if last { flag::LAST } else { 0 }
            | if self.order == Order::Descending {
                flag::DESCENDING
            } else {
                0
            }
    }
}

/// The buffer of candidates a selection of keys of `key_bytes` takes on `profile`'s
/// device: the largest power of two up to [`MAX_CAP`] whose slots (a key and a `u32`
/// position each) take at most half the local memory a group may use (so that two
/// groups share a compute unit).
pub(crate) fn select_cap(key_bytes: u32, profile: &DeviceProfile) -> u32 {
    let budget = profile.local_mem_bytes.min(64 * 1024) / 2;
    let slot = key_bytes as u64 + 4;
    let mut cap = MAX_CAP;
    while cap > 2 && cap as u64 * slot > budget {
        cap /= 2;
    }
    cap
}

/// The most `k` that a selection takes for keys of `dtype` on `profile`'s device
/// (larger `k` sort the whole row): a buffer of [`CAP_PER_K`] times `k` must fit.
pub(crate) fn max_select_k(dtype: DType, profile: &DeviceProfile) -> usize {
    (select_cap(dtype.size() as u32, profile) / CAP_PER_K) as usize
}

/// The plan of a selection of `k` keys from each of `rows` rows of `len` keys of
/// `dtype`, or `None` where the whole rows are sorted instead: `k` above
/// [`max_select_k`], `bool` keys (which the sort refuses), or
/// [`Tuning::topk_by_sort`](crate::profile::Tuning::topk_by_sort). A row too long for
/// `u32` positions is an error.
pub(crate) fn select_plan(
    dtype: DType,
    order: Order,
    rows: usize,
    len: usize,
    k: usize,
    profile: &DeviceProfile,
) -> Result<Option<SelectPlan>, SortLimit> {
    let kind = match dtype {
        DType::U32 | DType::U64 => KeyKind::Unsigned,
        DType::I32 | DType::I64 => KeyKind::Signed,
        DType::F32 | DType::F64 => KeyKind::Float,
        DType::Bool
        | DType::I8
        | DType::U8
        | DType::I16
        | DType::U16
        | DType::F16
        | DType::BF16
        | DType::C32
        | DType::C64 => return Ok(None),
    };
    if profile.tuning.topk_by_sort || k == 0 || k > max_select_k(dtype, profile) {
        return Ok(None);
    }
    // Positions are `u32`, and `u32::MAX` marks an empty slot.
    if len >= u32::MAX as usize {
        return Err(SortLimit::RowTooLong(len));
    }
    let cap = select_cap(dtype.size() as u32, profile);
    let largest = MAX_GROUP.min(floor_pow2(profile.max_group.max(1) as u32));
    // A group of about a work-item per `ITEMS` keys, from a warp's 32 up to `largest`.
    let group_for = |n: usize| {
        let want = n.div_ceil(SELECT_ITEMS as usize).next_power_of_two();
        (want.min(largest as usize) as u32).max(32.min(largest))
    };
    let chunk = (largest * SELECT_ITEMS) as usize;
    // Enough groups to fill the device; a long row is split where the rows alone are
    // fewer, each part at least two chunks.
    let want_groups = profile.compute_units.max(1) as usize * if profile.gpu { 4 } else { 2 };
    let parts = if rows < want_groups {
        want_groups.div_ceil(rows.max(1)).min(len / (2 * chunk))
    } else {
        1
    };
    let layout = if parts > 1 {
        SelectLayout::Parts {
            parts,
            group: group_for(len.div_ceil(parts)),
            merge_group: group_for(parts * k),
        }
    } else {
        SelectLayout::Rows {
            group: group_for(len),
        }
    };
    Ok(Some(SelectPlan {
        dtype,
        kind,
        order,
        rows,
        len,
        k,
        cap,
        layout,
    }))
}

/// The largest power of two at most `n` (`n >= 1`).
fn floor_pow2(n: u32) -> u32 {
    1 << (31 - n.leading_zeros())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::Tuning;

    fn gpu() -> DeviceProfile {
        DeviceProfile {
            gpu: true,
            compute_units: 132,
            max_group: 1024,
            local_mem_bytes: 48 * 1024,
            private_bytes: 1 << 20,
            parameter_bytes: 4352,
            tuning: Tuning::default(),
        }
    }

    fn plan(dtype: DType, rows: usize, len: usize, k: usize, p: &DeviceProfile) -> Option<SelectPlan> {
        select_plan(dtype, Order::Ascending, rows, len, k, p).unwrap()
    }

    #[test]
    fn small_k_selects_and_large_k_sorts() {
        let g = gpu();
        // 48 KiB: a buffer of 2048 slots of 4- and 8-byte keys, so k up to 256.
        assert_eq!(select_cap(4, &g), 2048);
        assert_eq!(select_cap(8, &g), 2048);
        assert_eq!(max_select_k(DType::F32, &g), 256);
        assert_eq!(max_select_k(DType::F64, &g), 256);
        let p = plan(DType::F32, 4096, 65_536, 16, &g).unwrap();
        assert_eq!(p.layout, SelectLayout::Rows { group: 256 });
        assert_eq!(p.flags(true, true), flag::FLOAT | flag::FIRST | flag::LAST);
        assert!(plan(DType::F32, 4096, 65_536, 256, &g).is_some());
        assert!(plan(DType::F32, 4096, 65_536, 257, &g).is_none());
        assert!(plan(DType::F32, 4096, 65_536, 0, &g).is_none());
        assert!(plan(DType::Bool, 10, 100, 1, &g).is_none());
        // A short row takes a small group.
        let p = plan(DType::I64, 1000, 5, 2, &g).unwrap();
        assert_eq!(p.layout, SelectLayout::Rows { group: 32 });
        // Less local memory: a smaller buffer, a smaller largest k.
        let small = DeviceProfile {
            local_mem_bytes: 16 * 1024,
            ..g
        };
        assert_eq!(select_cap(8, &small), 512);
        assert_eq!(max_select_k(DType::U64, &small), 64);
        assert!(plan(DType::U64, 10, 10_000, 65, &small).is_none());
        // The switch that sorts whole rows at every k.
        let sorting = DeviceProfile {
            tuning: Tuning {
                topk_by_sort: true,
                ..Tuning::default()
            },
            ..g
        };
        assert!(plan(DType::F32, 4096, 65_536, 16, &sorting).is_none());
    }

    #[test]
    fn few_long_rows_are_split_into_parts() {
        let g = gpu();
        let p = plan(DType::F32, 1, 1 << 20, 16, &g).unwrap();
        // 528 groups wanted; parts of two chunks (4096 keys) at least.
        assert_eq!(
            p.layout,
            SelectLayout::Parts {
                parts: 256,
                group: 256,
                merge_group: 256
            }
        );
        assert_eq!(p.part_len(), 4096);
        let p = plan(DType::F32, 4, 100_000, 2, &g).unwrap();
        assert_eq!(
            p.layout,
            SelectLayout::Parts {
                parts: 24,
                group: 256,
                merge_group: 32
            }
        );
        // Rows shorter than two chunks are never split.
        let p = plan(DType::F32, 1, 4095, 2, &g).unwrap();
        assert_eq!(p.layout, SelectLayout::Rows { group: 256 });
        assert_eq!(
            select_plan(DType::U32, Order::Ascending, 1, u32::MAX as usize, 1, &g),
            Err(SortLimit::RowTooLong(u32::MAX as usize))
        );
    }
}
