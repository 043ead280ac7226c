//! The compaction kernel's parameters: its name, its list and its signature line.

use crate::plan::compact::Picked;

/// The name of the compaction kernel.
pub(crate) const COMPACT_KERNEL_NAME: &str = "lazycl_compact";

/// One parameter of the compaction kernel; the picked type is the program's `T`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CompactParam {
    /// The mask, one byte per element (`mask`).
    Mask,
    /// The elements picked from (`vin`; not when positions are picked).
    ValuesIn,
    /// The picked elements, in order (`vout`).
    ValuesOut,
    /// How many were picked, written by the last tile (`count`).
    Count,
    /// The tile counter (the first word), then each tile's state: a flag and its count,
    /// or its count with the tiles' before it (`status`).
    State,
    /// Elements in all (`n`).
    Len,
}

/// The parameters of the compaction kernel, in order.
pub(crate) fn compact_params(picked: Picked) -> impl Iterator<Item = CompactParam> {
    use CompactParam::*;
    [Mask, ValuesIn, ValuesOut, Count, State, Len]
        .into_iter()
        .filter(move |p| *p != ValuesIn || picked != Picked::Positions)
}

/// The signature line of the compaction kernel.
pub(in crate::codegen) fn compact_signature(picked: Picked) -> String {
    let params: Vec<&str> = compact_params(picked)
        .map(|p| match p {
            CompactParam::Mask => "__global const uchar* mask",
            CompactParam::ValuesIn => "__global const T* vin",
            CompactParam::ValuesOut => "__global T* vout",
            CompactParam::Count => "__global ulong* count",
            CompactParam::State => "volatile __global ulong* status",
            CompactParam::Len => "const ulong n",
        })
        .collect();
    format!("__kernel void {COMPACT_KERNEL_NAME}({}) {{", params.join(", "))
}
