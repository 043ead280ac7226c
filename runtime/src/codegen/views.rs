//! The text of what views add to a kernel: a strided load (`in{s}[ob{s} + i0 * os{s}_0
//! + ...]`, guarded by a box where it reads one source of a region), a box test, and a
//! store into a region. Offsets, strides and bounds are kernel arguments
//! (`abi::Param::LoadOffset` and the rest) of the plan's offset type (`int` where every
//! offset the kernel computes fits, else `long`: [`KernelPlan::narrow_offsets`]); the
//! coordinates are the kernel's collapsed indices `i{k}`, or `i{k} + l` along the innermost
//! dim in lane `l` of a vector step.

use lazycl_clc::{Helper, VectorAt};

use super::helpers::Helpers;
use crate::dtype::DType;
use crate::graph::SearchSide;
use crate::plan::access::{Affine, Bound};
use crate::plan::{KernelPlan, ScatterCombine};

/// The type views' offsets are computed in.
pub(super) fn offset_type(plan: &KernelPlan) -> &'static str {
    if plan.narrow_offsets {
        "int"
    } else {
        "long"
    }
}

/// The coordinate of collapsed dim `k` (of `rank`), in lane `lane` of a vector step when
/// there is one, in offset type `ot`.
fn coord(k: usize, rank: usize, lane: Option<usize>, ot: &str) -> String {
    match lane {
        Some(l) if k + 1 == rank => format!("({ot})(i{k} + {l}u)"),
        _ => format!("({ot})i{k}"),
    }
}

/// `base + Σ stride_k * i_k` over the dims `a` moves along; `off` and `stride` name the
/// arguments (`{off}`, `{stride}{k}`).
fn offset(a: &Affine, off: &str, stride: &str, lane: Option<usize>, ot: &str) -> String {
    let rank = a.stride.len();
    let mut text = off.to_string();
    for k in a.stride_args() {
        text.push_str(&format!(" + {} * {stride}{k}", coord(k, rank, lane, ot)));
    }
    if a.unit_innermost() {
        text.push_str(&format!(" + {}", coord(rank - 1, rank, lane, ot)));
    }
    text
}

/// The row-major index values computed from it ([`KernelPlan::index_reads`] `slot`) are
/// read at, from the coordinates `i{k}` (lane `lane` of a vector step where there is
/// one): `rb{slot} + Σ i_k * rs{slot}_{k}`.
pub(super) fn read_index(plan: &KernelPlan, slot: usize, a: &Affine, lane: Option<usize>) -> String {
    offset(
        a,
        &format!("rb{slot}"),
        &format!("rs{slot}_"),
        lane,
        offset_type(plan),
    )
}

/// The element offset strided input `slot` reads at the coordinates `i{k}`.
pub(super) fn offset_text(plan: &KernelPlan, slot: usize, a: &Affine) -> String {
    offset(
        a,
        &format!("ob{slot}"),
        &format!("os{slot}_"),
        None,
        offset_type(plan),
    )
}

/// The vector of `w` neighbours that strided input `slot` (unit innermost stride,
/// unguarded) reads from the element at `i{k}` on: the lanes of a vector step take its
/// components.
///
/// Through a vector pointer where the run starts aligned (NVIDIA's compiler turns that
/// into one wide load, and splits a `vload`), else with `vload`, which needs no more
/// alignment than an element's. A run's first element has an innermost coordinate that
/// is a multiple of the width, so it starts aligned when the offset and every other
/// stride are multiples of it: kernel arguments, so the kernel tests them as it runs (the
/// same way in every work-item) and a window at a new offset still builds nothing.
pub(super) fn vector_load(plan: &KernelPlan, slot: usize, a: &Affine, w: usize) -> String {
    let at = offset(
        a,
        &format!("ob{slot}"),
        &format!("os{slot}_"),
        None,
        offset_type(plan),
    );
    if plan.inputs[slot].dtype.is_stored_narrow() {
        // (One `vload` whatever the alignment: a test and a vector pointer made row
        // kernels over 16-bit floats slower on NVIDIA, 0.84 of torch's softmax
        // against 0.92.)
        return input_vector(plan, slot, w, VectorAt::Element(&at));
    }
    let mut moved = vec![format!("ob{slot}")];
    moved.extend(a.stride_args().map(|k| format!("os{slot}_{k}")));
    let moved = moved.join(" | ");
    let mask = w - 1;
    let d = plan.inputs[slot].dtype;
    format!(
        "((({moved}) & {mask}) == 0 ? *((__global const {}*)(in{slot} + {at})) : {})",
        d.vector(w),
        lazycl_clc::vector_load(d, w, &format!("in{slot}"), lazycl_clc::VectorAt::Element(&at)),
    )
}

/// `lo <= i_k < hi` for every bound, the bounds named `{lo}{b}` and `{hi}{b}`.
fn test(bounds: &[Bound], rank: usize, lo: &str, hi: &str, lane: Option<usize>, ot: &str) -> String {
    let terms: Vec<String> = bounds
        .iter()
        .enumerate()
        .map(|(b, bound)| {
            let c = coord(bound.axis, rank, lane, ot);
            format!("{c} >= {lo}{b} && {c} < {hi}{b}")
        })
        .collect();
    terms.join(" && ")
}

/// The load of strided input `slot` (element type `t`): 0 outside its guard.
pub(super) fn load(plan: &KernelPlan, slot: usize, a: &Affine, t: &str, lane: Option<usize>) -> String {
    if let (Some(l), true) = (lane, a.vectorizable()) {
        // The vector step loaded the lanes' neighbours at once.
        return plan.inputs[slot].dtype.lane(&format!("L{slot}"), l);
    }
    guarded(plan, slot, a, t, lane, "")
}

/// The load of strided input `slot` (element type `t`) read through an index (`take`):
/// its offset plus `index` (the index value's text), clamped into `0..gn{slot}`, times
/// `gs{slot}`; 0 outside its guard.
pub(super) fn gather(
    plan: &KernelPlan,
    slot: usize,
    a: &Affine,
    t: &str,
    lane: Option<usize>,
    index: &str,
    index_type: DType,
) -> String {
    let ot = offset_type(plan);
    let at = clamped(index, index_type, &format!("gn{slot}"));
    let plus = format!(" + ({ot})({at}) * ({ot})gs{slot}");
    guarded(plan, slot, a, t, lane, &plus)
}

/// The position (a `uint`) a binary search along strided input `slot` finds for the
/// value `value` (`searchsorted`): over the `gn{slot}` elements from its offset, `gs{slot}`
/// apart, the first that `value` goes before (`side` left: the first not less than it;
/// right: the first greater). Floats compare in numpy's sort order, NaN last. 0 outside
/// the load's guard.
pub(super) fn search(
    plan: &KernelPlan,
    slot: usize,
    a: &Affine,
    lane: Option<usize>,
    value: &str,
    side: SearchSide,
    helpers: &mut Helpers,
) -> String {
    let ot = offset_type(plan);
    let at = offset(a, &format!("ob{slot}"), &format!("os{slot}_"), lane, ot);
    let helper = search_helper(plan.inputs[slot].dtype, side);
    let call = helpers.call(
        helper,
        &[
            &format!("in{slot}"),
            &format!("(long)({at})"),
            &format!("gn{slot}"),
            &format!("gs{slot}"),
            value,
        ],
    );
    if a.bounds.is_empty() {
        return call;
    }
    let guard = test(
        &a.bounds,
        plan.dims.len(),
        &format!("lb{slot}_"),
        &format!("ub{slot}_"),
        lane,
        ot,
    );
    format!("(({guard}) ? {call} : 0u)")
}

/// `uint lzc_search_<side>_<type>(p, at, n, s, x)`: the binary search of [`search`].
fn search_helper(d: DType, side: SearchSide) -> Helper {
    let (c, m) = (d.cl_name(), d.cl_memory());
    let y = lazycl_clc::load(d, "p", "at + mid * s");
    // `lt(a, b)`: `a` sorts before `b` (floats: NaN after every number).
    let lt = |a: &str, b: &str| match d.is_float() {
        false => format!("({a} < {b})"),
        true => format!("({a} < {b} || (isnan({b}) && !isnan({a})))"),
    };
    let (name, right_of_mid) = match side {
        SearchSide::Left => ("left", lt("y", "x")),
        SearchSide::Right => ("right", format!("!{}", lt("x", "y"))),
    };
    // (Named by the type in memory too: `f16` and `bf16` compute in `float`.)
    let name = match d.is_stored_narrow() {
        true => format!("lzc_search_{name}_{}", d.rust_name()),
        false => format!("lzc_search_{name}_{c}"),
    };
    let definition = format!(
        "uint {name}(__global const {m}* p, long at, long n, long s, {c} x) {{ \
         long lo = 0, hi = n; \
         while (lo < hi) {{ const long mid = lo + (hi - lo) / 2; const {c} y = {y}; \
         if ({right_of_mid}) lo = mid + 1; else hi = mid; }} \
         return (uint)lo; }}"
    );
    Helper { name, definition }
}

/// `index` (the text of a value of integer type `index_type`) clamped into `0..len` (a
/// `long` text, at least 1), as a `long`. An unsigned index is clamped as unsigned: a
/// `ulong` past `LONG_MAX` is past the end, not negative.
fn clamped(index: &str, index_type: DType, len: &str) -> String {
    if index_type.is_signed() || !index_type.is_int() {
        format!("clamp((long){index}, 0L, {len} - 1L)")
    } else {
        format!("(long)min((ulong){index}, (ulong)({len} - 1L))")
    }
}

/// `in{slot}` at its offset (plus `plus`), 0 outside the load's guard where it has one.
fn guarded(plan: &KernelPlan, slot: usize, a: &Affine, t: &str, lane: Option<usize>, plus: &str) -> String {
    let ot = offset_type(plan);
    let at = offset(a, &format!("ob{slot}"), &format!("os{slot}_"), lane, ot);
    let load = lazycl_clc::load(
        plan.inputs[slot].dtype,
        &format!("in{slot}"),
        &format!("{at}{plus}"),
    );
    if a.bounds.is_empty() {
        return load;
    }
    let guard = test(
        &a.bounds,
        plan.dims.len(),
        &format!("lb{slot}_"),
        &format!("ub{slot}_"),
        lane,
        ot,
    );
    format!("(({guard}) ? {load} : ({t})0)")
}

/// Box test `slot`, a `uchar` 0 or 1.
pub(super) fn inside(plan: &KernelPlan, slot: usize, lane: Option<usize>) -> String {
    let bounds = &plan.insides[slot].bounds;
    let t = test(
        bounds,
        plan.dims.len(),
        &format!("rl{slot}_"),
        &format!("rh{slot}_"),
        lane,
        offset_type(plan),
    );
    format!("(uchar)({t})")
}

/// The element of output `k` stored into a region at offsets `a`.
/// The statement that combines `v` (of type `d`) into output `k` through an index
/// (`scatter_add`: adds; `scatter`'s positions: keeps the larger): at the store's offset
/// plus the index value (`index`'s text) times `ss{k}`, atomically, unless the index is
/// outside `0..sn{k}`; into the group's private copy `acc{k}` in local memory when the
/// output has one.
pub(super) fn scatter_add(
    plan: &KernelPlan,
    k: usize,
    a: &Affine,
    d: crate::dtype::DType,
    index: &str,
    v: &str,
) -> String {
    let at = offset(a, &format!("oo{k}"), &format!("oos{k}_"), None, offset_type(plan));
    let private = plan.outputs[k].scatter.is_some_and(|s| s.private.is_some());
    let (array, space) = if private {
        (format!("acc{k}"), "__local")
    } else {
        (format!("out{k}"), "__global")
    };
    let target = format!("&{array}[{at} + (long)i * ss{k}]");
    let add = match plan.outputs[k].scatter.map(|s| s.combine) {
        Some(ScatterCombine::Max) => atomic_max(d, &target, v),
        _ => atomic_add(d, &target, space, v),
    };
    format!("{{ const long i = (long){index}; if (i >= 0 && i < sn{k}) {{ {add} }} }}")
}

/// The statement that adds `v` into the element of type `d` at `target` (a pointer into
/// `space`) atomically: integers with the atomic add; floats by a compare-and-swap loop on
/// their bits (OpenCL 1.2 has no float atomics).
pub(super) fn atomic_add(d: crate::dtype::DType, target: &str, space: &str, v: &str) -> String {
    use crate::dtype::DType;
    match d {
        DType::I32 | DType::U32 => format!("atomic_add({target}, {v});"),
        DType::I64 => format!("atom_add((volatile {space} long*){target}, {v});"),
        DType::U64 => format!("atom_add((volatile {space} ulong*){target}, {v});"),
        DType::F32 => format!(
            "volatile {space} uint* p = (volatile {space} uint*){target}; \
             uint seen = *p, was; \
             do {{ was = seen; seen = atomic_cmpxchg(p, was, as_uint(as_float(was) + {v})); }} while (seen != was);"
        ),
        DType::F64 => format!(
            "volatile {space} ulong* p = (volatile {space} ulong*){target}; \
             ulong seen = *p, was; \
             do {{ was = seen; seen = atom_cmpxchg(p, was, as_ulong(as_double(was) + {v})); }} while (seen != was);"
        ),
        DType::Bool => format!("/* no sum of bools */ (void){v};"),
        // (Scatters into types narrower than 32 bits add in their compute type: OpenCL's
        // atomics are 32 and 64 bits wide.)
        DType::I8 | DType::U8 | DType::I16 | DType::U16 | DType::F16 | DType::BF16 => {
            format!("/* no atomic add of {d} */ (void){v};")
        }
        // A complex number: each part added on its own (the sum of a part is the part of
        // the sum).
        DType::C32 | DType::C64 => {
            let part = d.real();
            let p = part.cl_name();
            let re = atomic_add(part, &format!("&(({space} {p}*){target})[0]"), space, &format!("({v}).x"));
            let im = atomic_add(part, &format!("&(({space} {p}*){target})[1]"), space, &format!("({v}).y"));
            format!("{{ {re} }} {{ {im} }}")
        }
    }
}

/// The statement that keeps the larger of `v` and the 32-bit integer of type `d` at
/// `target`, atomically (OpenCL 1.1's core `atomic_max`; wider types have none there).
fn atomic_max(d: DType, target: &str, v: &str) -> String {
    match d {
        DType::I32 | DType::U32 => format!("atomic_max({target}, {v});"),
        _ => format!("/* no atomic maximum of {} */ (void){v};", d.cl_name()),
    }
}

pub(super) fn store_offset(plan: &KernelPlan, k: usize, a: &Affine, lane: Option<usize>) -> String {
    offset(a, &format!("oo{k}"), &format!("oos{k}_"), lane, offset_type(plan))
}

/// The statement that stores value `v` as element `at` of output `k`: rounded to 16 bits
/// for a 16-bit float (the helper it calls is among the plan's, [`helpers_of`]).
///
/// [`helpers_of`]: super::ops::helpers_of
pub(super) fn store(plan: &KernelPlan, k: usize, at: &str, v: &str) -> String {
    let d = plan.outputs[k].dtype;
    lazycl_clc::store(d, &format!("out{k}"), at, v, &mut Helpers::default())
}

/// The statement that stores vector value `v` (`w` lanes) as the `w` elements of output
/// `k` at `at`: rounded to 16 bits for a 16-bit float, through a vector pointer where the
/// address is aligned.
pub(super) fn vector_store(plan: &KernelPlan, k: usize, w: usize, at: VectorAt, v: &str) -> String {
    let d = plan.outputs[k].dtype;
    lazycl_clc::vector_store(d, w, &format!("out{k}"), at, v, &mut Helpers::default())
}

/// The `w` elements of input `slot` at `at` as a vector value (`float{w}` for a 16-bit
/// float), through a vector pointer where the address is aligned.
pub(super) fn input_vector(plan: &KernelPlan, slot: usize, w: usize, at: VectorAt) -> String {
    lazycl_clc::vector_load(plan.inputs[slot].dtype, w, &format!("in{slot}"), at)
}
