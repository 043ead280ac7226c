//! How a boolean compaction (`compress`, `nonzero`) is laid out ([`CompactPlan`]): plain
//! data that codegen prints and exec launches, like `sort`. A compaction is one pass
//! with a decoupled look-back over tiles of the mask (`codegen::compact`).

use crate::profile::DeviceProfile;

/// Work-items per group of the compaction kernel (its scan over the group is written for
/// a multiple of 16).
pub(crate) const COMPACT_GROUP: u32 = 256;

/// What is written for each `true` of the mask.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Picked {
    /// The element of the values beside it, of this many bytes (`compress`).
    Elements { bytes: u32 },
    /// Its position, as a `u32` (`crate::dtype::Index`; `nonzero`, which refuses masks
    /// of more than `u32::MAX` elements).
    Positions,
}

impl Picked {
    /// Bytes written per picked element.
    pub(crate) fn bytes(self) -> u32 {
        match self {
            Picked::Elements { bytes } => bytes,
            Picked::Positions => 4,
        }
    }
}

/// A compaction of `n` elements in tiles of `COMPACT_GROUP * items`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CompactPlan {
    pub(crate) picked: Picked,
    pub(crate) n: usize,
    pub(crate) items: u32,
}

impl CompactPlan {
    /// Elements per tile.
    pub(crate) fn tile(&self) -> usize {
        (COMPACT_GROUP * self.items) as usize
    }

    /// Tiles in all.
    pub(crate) fn tiles(&self) -> usize {
        self.n.div_ceil(self.tile()).max(1)
    }
}

/// Local memory of a tile: the mask's bytes, the elements and the picked ones (a word of
/// padding per 32), and the scan's words.
pub(crate) fn local_bytes(bytes: u32, items: u32) -> u64 {
    let tile = (COMPACT_GROUP * items) as u64;
    tile + 2 * (tile + tile / 32) * bytes as u64 + (COMPACT_GROUP as u64 + 64) * 4
}

/// The plan of a compaction of `n` elements: the largest tile (16, 8, 4 or 1 elements per
/// work-item) that fits the device's local memory.
pub(crate) fn compact_plan(picked: Picked, n: usize, profile: &DeviceProfile) -> Option<CompactPlan> {
    let budget = profile.local_mem_bytes.min(48 * 1024);
    let items = [16u32, 8, 4, 1]
        .into_iter()
        .find(|&i| local_bytes(picked.bytes(), i) <= budget && COMPACT_GROUP as usize <= profile.max_group)?;
    Some(CompactPlan { picked, n, items })
}
