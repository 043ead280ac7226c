//! Code generation: a fused kernel plan becomes OpenCL C. Only runs on a cache miss.
//!
//! The entry points: [`fused_source`] prints a plan's program by its kind, and
//! [`combine_source`] the combine pass of a split reduction. Below them: the kernels'
//! parameters as data ([`abi`]), the rendering of ops ([`ops`]) and of a plan's values
//! as statements ([`values`]), the statements every reduction shares
//! ([`accumulators`]), and the writer everything prints through ([`writer`]). The
//! element types' OpenCL C names, the snippets and helper functions with Rust's semantics
//! and the pragmas come from `lazycl-clc`, which the macros use too.

pub(crate) mod abi;
mod accumulators;
pub(crate) mod compact;
mod complex;
mod element_at;
mod elementwise;
mod fft;
mod finish_in;
mod from_index;
mod gemm;
mod group_scan;
mod helpers;
mod ops;
mod random;
mod reduce;
mod row_column;
mod row_kernel;
mod scan;
pub(crate) mod select;
pub(crate) mod sort;
mod tiled;
mod values;
mod views;
mod writer;

pub(crate) use abi::{COMBINE_KERNEL_NAME, FUSED_KERNEL_NAME, GEMM_COMBINE_KERNEL_NAME};
pub(crate) use reduce::combine_source;

use crate::plan::{KernelKind, KernelPlan};

/// Generates the complete OpenCL C program of a fused kernel: a GEMM kernel ([`gemm`];
/// `None` until its tile is chosen), a reduction ([`reduce`]), a scan ([`scan`]), an
/// elementwise kernel that finishes the split reduction it reads ([`finish_in`]), or a
/// plain elementwise kernel ([`elementwise`]).
pub(crate) fn fused_source(plan: &KernelPlan) -> Option<String> {
    Some(match &plan.kind {
        KernelKind::Elementwise => elementwise::elementwise_source(plan),
        KernelKind::Tiled => tiled::tiled_source(plan),
        KernelKind::Finishing(f) => finish_in::finish_in_source(plan, f),
        KernelKind::Reduction(r) => reduce::reduce_source(plan, r),
        KernelKind::Scan(s) => scan::scan_source(plan, s),
        KernelKind::Fft(f) => fft::fft_source(plan, f),
        KernelKind::Rows(r) => row_kernel::rows_source(plan, r),
        KernelKind::Gemm(g) => return gemm::gemm_source(plan, g),
    })
}

/// The second kernel of a GEMM split along `k` (`None` for any other plan, or before its
/// tile is chosen).
pub(crate) fn gemm_combine_source(plan: &KernelPlan) -> Option<String> {
    match &plan.kind {
        KernelKind::Gemm(g) => gemm::combine_source(plan, g),
        _ => None,
    }
}
