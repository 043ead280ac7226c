//! The selection kernel's parameters: its name, its list and its signature line.

/// The name of the selection kernel.
pub(crate) const SELECT_KERNEL_NAME: &str = "lazycl_select_rows";

/// One parameter of the selection kernel; the key type is the program's `K`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SelectParam {
    /// The keys read: the user's, or a first launch's candidates (`kin`).
    KeysIn,
    /// The `k` keys selected per group (`kout`).
    KeysOut,
    /// The candidates' positions in their row, read after a first launch (`vin`; the
    /// first binds its output there, unread).
    IndicesIn,
    /// The selected keys' positions in their row (`vout`).
    IndicesOut,
    /// Keys per row of the input (`len`).
    Len,
    /// Work-groups per row (`parts`).
    Parts,
    /// Keys of a row per work-group (`seg`).
    PartLen,
    /// Keys selected per group (`k`).
    K,
    /// The launch's `sort::flag` bits (`flags`).
    Flags,
}

/// The parameters of the selection kernel, in order.
pub(crate) fn select_params() -> impl Iterator<Item = SelectParam> {
    use SelectParam::*;
    [
        KeysIn, KeysOut, IndicesIn, IndicesOut, Len, Parts, PartLen, K, Flags,
    ]
    .into_iter()
}

/// The signature line of the selection kernel.
pub(in crate::codegen) fn select_signature() -> String {
    let params: Vec<&str> = select_params()
        .map(|p| match p {
            SelectParam::KeysIn => "__global const K* kin",
            SelectParam::KeysOut => "__global K* kout",
            SelectParam::IndicesIn => "__global const uint* vin",
            SelectParam::IndicesOut => "__global uint* vout",
            SelectParam::Len => "const ulong len",
            SelectParam::Parts => "const ulong parts",
            SelectParam::PartLen => "const ulong seg",
            SelectParam::K => "const uint k",
            SelectParam::Flags => "const uint flags",
        })
        .collect();
    format!("__kernel void {SELECT_KERNEL_NAME}({}) {{", params.join(", "))
}
