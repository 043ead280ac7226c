//! The sort kernels' parameters ([`SortKernel`]): their names, their lists and their
//! signature lines.

use crate::plan::sort::{Payload, SortKernel};

/// The name of each sort kernel.
pub(crate) fn sort_kernel_name(kernel: SortKernel) -> &'static str {
    match kernel {
        SortKernel::Local => "lazycl_sort_rows",
        SortKernel::Hist => "lazycl_radix_hist",
        SortKernel::Pass => "lazycl_radix_pass",
    }
}

/// One parameter of a sort kernel ([`SortKernel`]); the key and payload types are the
/// program's `K` and `V`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SortParam {
    /// The keys read: the user's, or a pass's scratch (`kin`).
    KeysIn,
    /// The keys written (`kout`).
    KeysOut,
    /// The payload read (`vin`).
    ValuesIn,
    /// The payload written (`vout`).
    ValuesOut,
    /// Every pass's digit counts per row (`hist`).
    Hist,
    /// A pass's tile counter and published per-digit counts (`status`).
    Status,
    /// Keys per row (`len`).
    Len,
    /// Tiles per row (`tiles_`).
    Tiles,
    /// The pass, from 0 at the lowest byte (`pass`).
    Pass,
    /// The launch's `sort::flag` bits (`flags`).
    Flags,
}

/// The parameters of a sort kernel, in order: the payload's only where it has one (an
/// index payload, made by the first pass, binds its output as the unread input there).
pub(crate) fn sort_params(kernel: SortKernel, payload: Payload) -> impl Iterator<Item = SortParam> {
    use SortParam::*;
    let values = kernel != SortKernel::Hist && payload != Payload::None;
    let list: &[SortParam] = match kernel {
        SortKernel::Local => &[KeysIn, KeysOut, ValuesIn, ValuesOut, Len, Flags],
        SortKernel::Hist => &[KeysIn, Hist, Len, Tiles, Flags],
        SortKernel::Pass => &[
            KeysIn, KeysOut, ValuesIn, ValuesOut, Hist, Status, Len, Tiles, Pass, Flags,
        ],
    };
    list.iter()
        .copied()
        .filter(move |p| values || !matches!(p, ValuesIn | ValuesOut))
}

/// The signature line of a sort kernel named `name`.
pub(in crate::codegen) fn sort_signature(kernel: SortKernel, payload: Payload, name: &str) -> String {
    let params: Vec<&str> = sort_params(kernel, payload)
        .map(|p| match p {
            SortParam::KeysIn => "__global const K* kin",
            SortParam::KeysOut => "__global K* kout",
            SortParam::ValuesIn => "__global const V* vin",
            SortParam::ValuesOut => "__global V* vout",
            SortParam::Hist => "__global uint* hist",
            SortParam::Status => "volatile __global uint* status",
            SortParam::Len => "const ulong len",
            SortParam::Tiles => "const ulong tiles_",
            SortParam::Pass => "const uint pass",
            SortParam::Flags => "const uint flags",
        })
        .collect();
    format!("__kernel void {name}({}) {{", params.join(", "))
}
