//! How rows of keys are sorted ([`SortPlan`], chosen by [`sort_plan`]): plain data, like
//! `scan`, that codegen prints and exec launches. Sorts are not part of a fused
//! graph; `api::sort` evaluates the keys and calls exec with a plan from here.
//!
//! Every sort is a stable LSD radix sort of the keys' bits, after a transform that makes
//! the unsigned order of the bits the order of the values ([`KeyKind`]). Rows that fit in
//! one work-group's local memory are sorted there, four bits per step, in one kernel
//! ([`SortLayout::Local`]); longer rows take one kernel per byte of the key, each tile
//! finding its place through a decoupled look-back per digit ([`SortLayout::Radix`]).

use crate::dtype::DType;
use crate::profile::DeviceProfile;

/// Bits per digit of a radix pass (256 digits: a work-item per digit in a pass's group).
pub(crate) const RADIX_BITS: u32 = 8;
/// Digits of a radix pass.
pub(crate) const RADIX_DIGITS: u32 = 1 << RADIX_BITS;
/// Bits per step of the local sort inside a tile (16 counters per work-item).
pub(crate) const SPLIT_BITS: u32 = 4;
/// Rows longer than this take no radix pass: a tile's counts per digit are published as
/// 30-bit numbers beside two flag bits.
pub(crate) const MAX_RADIX_ROW: usize = (1 << 30) - 1;

/// How a key's bits are made to sort as unsigned numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum KeyKind {
    /// Unsigned integers: as they are.
    Unsigned,
    /// Signed integers: the sign bit flipped.
    Signed,
    /// IEEE floats: the sign bit flipped for positives, every bit for negatives; NaN
    /// (any sign, any payload) becomes all ones, after `+inf`.
    Float,
}

/// Which way the keys are sorted. Descending is the ascending order of the transformed
/// bits inverted, so it is stable too (equal keys keep their order) and puts NaN first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Order {
    Ascending,
    Descending,
}

/// What moves with the keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Payload {
    /// Nothing (`sort`).
    None,
    /// Each key's position in its row, as a `u32` (`argsort`, `topk`).
    Index,
    /// A second array's elements of this many bytes (`sort_by_key`).
    Values { bytes: u32 },
}

impl Payload {
    /// Bytes per element moved beside each key.
    pub(crate) fn bytes(self) -> u32 {
        match self {
            Payload::None => 0,
            Payload::Index => 4,
            Payload::Values { bytes } => bytes,
        }
    }
}

/// The kernels of a sort.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SortKernel {
    /// A row per work-group, sorted in local memory ([`SortLayout::Local`]).
    Local = 1,
    /// Every radix pass's digit counts per row.
    Hist = 2,
    /// One radix pass.
    Pass = 3,
}

/// The kernels' shape: how many work-items per group and keys per work-item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SortLayout {
    /// A row per work-group, `group * items` keys at most, sorted in local memory four
    /// bits at a time (every bit of the key) and written once.
    Local { group: u32, items: u32 },
    /// Tiles of `256 * items` keys, `tiles` per row; one histogram kernel counts every
    /// pass's digits, then a pass per byte sorts each tile by that byte in local memory
    /// and scatters it to its place.
    Radix { items: u32, hist_items: u32 },
}

/// A sort of `rows` rows of `len` keys each (row-major, contiguous).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SortPlan {
    /// The keys' element type.
    pub(crate) dtype: DType,
    pub(crate) kind: KeyKind,
    pub(crate) order: Order,
    pub(crate) payload: Payload,
    /// Whether the sorted keys are stored (not for `argsort`).
    pub(crate) keys_out: bool,
    pub(crate) rows: usize,
    pub(crate) len: usize,
    pub(crate) layout: SortLayout,
}

impl SortPlan {
    /// Bits of a key.
    pub(crate) fn key_bits(&self) -> u32 {
        self.dtype.size() as u32 * 8
    }

    /// Radix passes (one per byte of the key).
    pub(crate) fn passes(&self) -> u32 {
        self.key_bits() / RADIX_BITS
    }

    /// Keys per tile of a radix pass.
    pub(crate) fn tile(&self) -> usize {
        match self.layout {
            SortLayout::Radix { items, .. } => (RADIX_DIGITS * items) as usize,
            SortLayout::Local { group, items } => (group * items) as usize,
        }
    }

    /// Tiles per row of a radix pass.
    pub(crate) fn tiles_per_row(&self) -> usize {
        self.len.div_ceil(self.tile()).max(1)
    }

    /// Keys per tile of the histogram kernel.
    pub(crate) fn hist_tile(&self) -> usize {
        match self.layout {
            SortLayout::Radix { hist_items, .. } => (RADIX_DIGITS * hist_items) as usize,
            SortLayout::Local { .. } => self.tile(),
        }
    }

    /// Histogram tiles per row.
    pub(crate) fn hist_tiles_per_row(&self) -> usize {
        self.len.div_ceil(self.hist_tile()).max(1)
    }
}

/// The bits of a sort kernel's `flags` argument: what varies between sorts of keys of
/// one size, so that they share a program.
pub(crate) mod flag {
    /// The first radix pass (or a local sort): keys are the user's, transformed on load;
    /// an index payload is made, not read.
    pub(crate) const FIRST: u32 = 1;
    /// The last radix pass (or a local sort): keys are transformed back when stored.
    pub(crate) const LAST: u32 = 2;
    /// Signed integer keys.
    pub(crate) const SIGNED: u32 = 4;
    /// Float keys.
    pub(crate) const FLOAT: u32 = 8;
    /// Descending order.
    pub(crate) const DESCENDING: u32 = 16;
    /// The sorted keys are stored.
    pub(crate) const KEYS_OUT: u32 = 32;
    /// The payload is each key's index in its row.
    pub(crate) const INDEX: u32 = 64;
}

impl SortPlan {
    /// The `flags` argument of a launch of this plan's kernels.
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
            | if self.keys_out { flag::KEYS_OUT } else { 0 }
            | if self.payload == Payload::Index {
                flag::INDEX
            } else {
                0
            }
    }
}

/// Why no plan exists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SortLimit {
    /// The key type has no order we sort by (`bool`).
    KeyType(DType),
    /// A row is longer than [`MAX_RADIX_ROW`].
    RowTooLong(usize),
    /// Not even the smallest tile fits the device's local memory.
    LocalMemory(u64),
}

/// Local memory a tile's kernel declares: the keys and payloads with a word of padding
/// per 32, 16 counters per work-item (`ushort`, padded per 16), the scan's sums, and for
/// a radix pass three words per digit.
pub(crate) fn local_bytes(key: u32, payload: u32, group: u32, items: u32, radix: bool) -> u64 {
    let tile = (group * items) as u64;
    let padded = tile + tile / 32;
    let counters = (16 * group + group) as u64 * 2;
    let sums = (group + group / 16 + 16) as u64 * 4 + 64;
    let digits = if radix { RADIX_DIGITS as u64 * 16 } else { 0 };
    padded * (key + payload) as u64 + counters + sums + digits
}

/// The plan of a sort of `rows` rows of `len` keys of `dtype` on `profile`'s device.
pub(crate) fn sort_plan(
    dtype: DType,
    order: Order,
    payload: Payload,
    keys_out: bool,
    rows: usize,
    len: usize,
    profile: &DeviceProfile,
) -> Result<SortPlan, SortLimit> {
    let kind = match dtype {
        DType::U32 | DType::U64 => KeyKind::Unsigned,
        DType::I32 | DType::I64 => KeyKind::Signed,
        DType::F32 | DType::F64 => KeyKind::Float,
        // (Types narrower than 32 bits sort as their compute type: `Array::sort_with`;
        // complex numbers have no order.)
        DType::Bool
        | DType::I8
        | DType::U8
        | DType::I16
        | DType::U16
        | DType::F16
        | DType::BF16
        | DType::C32
        | DType::C64 => return Err(SortLimit::KeyType(dtype)),
    };
    let key = dtype.size() as u32;
    let budget = profile.local_mem_bytes.min(64 * 1024);
    let fits = |group: u32, items: u32, radix: bool| {
        group as usize <= profile.max_group
            && local_bytes(key, payload.bytes(), group, items, radix) <= budget
    };
    // A row in one tile: the smallest of a few tiles that holds it (each tile is a
    // program to build; a row of 300 sorts in 1024 as fast as in 512).
    let local = [(64u32, 1u32), (256, 1), (256, 4), (256, 16)]
        .into_iter()
        .filter(|&(g, i)| fits(g, i, false) && (g * i) as usize >= len)
        .min_by_key(|&(g, i)| (g * i, i));
    let layout = match local {
        Some((group, items)) => SortLayout::Local { group, items },
        None if len > MAX_RADIX_ROW => return Err(SortLimit::RowTooLong(len)),
        None => {
            let items = [16u32, 8, 4, 2]
                .into_iter()
                .find(|&i| fits(RADIX_DIGITS, i, true))
                .ok_or(SortLimit::LocalMemory(profile.local_mem_bytes))?;
            SortLayout::Radix {
                items,
                hist_items: 64,
            }
        }
    };
    Ok(SortPlan {
        dtype,
        kind,
        order,
        payload,
        keys_out,
        rows,
        len,
        layout,
    })
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

    #[test]
    fn short_rows_sort_in_one_tile_and_long_rows_in_passes() {
        let p = sort_plan(
            DType::F32,
            Order::Ascending,
            Payload::None,
            true,
            100,
            700,
            &gpu(),
        )
        .unwrap();
        assert_eq!(p.layout, SortLayout::Local { group: 256, items: 4 });
        let p = sort_plan(DType::I64, Order::Ascending, Payload::None, true, 100, 5, &gpu()).unwrap();
        assert_eq!(p.layout, SortLayout::Local { group: 64, items: 1 });
        let p = sort_plan(
            DType::F32,
            Order::Ascending,
            Payload::Index,
            true,
            1,
            1 << 26,
            &gpu(),
        )
        .unwrap();
        assert_eq!(
            p.layout,
            SortLayout::Radix {
                items: 16,
                hist_items: 64
            }
        );
        assert_eq!(p.tile(), 4096);
        assert_eq!(p.passes(), 4);
        // Eight-byte keys and payloads: a smaller tile fits 48 KiB.
        let p = sort_plan(
            DType::F64,
            Order::Ascending,
            Payload::Values { bytes: 8 },
            true,
            1,
            1 << 20,
            &gpu(),
        );
        let p = p.unwrap();
        assert_eq!(
            p.layout,
            SortLayout::Radix {
                items: 8,
                hist_items: 64
            }
        );
        assert_eq!(p.passes(), 8);
        for items in [16, 8] {
            assert!(local_bytes(4, 4, 256, items, true) <= 48 * 1024);
        }
    }

    #[test]
    fn limits_are_errors() {
        let e = sort_plan(DType::Bool, Order::Ascending, Payload::None, true, 1, 10, &gpu());
        assert_eq!(e, Err(SortLimit::KeyType(DType::Bool)));
        let e = sort_plan(
            DType::U32,
            Order::Ascending,
            Payload::None,
            true,
            1,
            1 << 31,
            &gpu(),
        );
        assert_eq!(e, Err(SortLimit::RowTooLong(1 << 31)));
        let tiny = DeviceProfile {
            local_mem_bytes: 1024,
            private_bytes: 1 << 20,
            ..gpu()
        };
        let e = sort_plan(
            DType::U32,
            Order::Ascending,
            Payload::None,
            true,
            1,
            1 << 20,
            &tiny,
        );
        assert_eq!(e, Err(SortLimit::LocalMemory(1024)));
    }
}
