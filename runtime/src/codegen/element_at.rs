//! What the kernels along an axis (scans, transform passes) do at one element of their
//! space, by its flat index: evaluate their operand there (its producers, in the loads),
//! and store a result there (through the consumers that joined their store, the
//! epilogue).

use super::ops::vt;
use super::values::Values;
use super::writer::Src;
use crate::dtype::DType;

/// `dest = ` value `value` (of the loads, which end where `epilogue` starts) at flat
/// element `at`, in a block of its own.
pub(super) fn value_at(
    v: &mut Values,
    value: usize,
    epilogue: Option<usize>,
    at: &str,
    dest: &str,
    src: &mut Src,
) {
    src.open("{");
    src.line(format_args!("const {} gid = {at};", v.ix));
    v.element_indices(src);
    v.upto(epilogue.unwrap_or(v.plan.values.len()), &[], "gid", src);
    src.line(format_args!("{dest} = v{value};"));
    src.close();
}

/// Stores `x` (of type `dtype`, the kernel's own result) at flat element `at`: alone, or
/// through the epilogue starting at value `epilogue` (the consumers that joined the
/// kernel, computed at the element's coordinates, where `x` is `scanned`) and its
/// outputs.
pub(super) fn store_at(
    v: &mut Values,
    dtype: DType,
    epilogue: Option<usize>,
    at: &str,
    x: &str,
    src: &mut Src,
) {
    let Some(start) = epilogue else {
        src.line(format_args!("out0[{at}] = {x};"));
        return;
    };
    let plan = v.plan;
    src.open("{");
    src.line(format_args!("const {} scanned = {x};", vt(dtype)));
    src.line(format_args!("const {} gid = {at};", v.ix));
    v.element_indices(src);
    for i in (start..plan.values.len()).filter(|&i| !plan.values[i].in_branch) {
        let e = v.expr(i, "gid", None);
        src.line(format_args!("const {} v{i} = {e};", vt(plan.values[i].dtype)));
    }
    for (k, output) in plan.outputs.iter().enumerate() {
        let at = match &output.store {
            Some(a) => super::views::store_offset(plan, k, a, None),
            None => "gid".to_string(),
        };
        src.line(super::views::store(plan, k, &at, &format!("v{}", output.value)));
    }
    src.close();
}
