//! The selection kernel ([`SelectPlan`]): the first `k` keys of each row (or part of a
//! row) and their positions, without sorting the row.
//!
//! A work-group reads its keys once, in chunks of `GROUP * ITEMS`; a key travels with
//! its position in the row, and pairs compare by key, then by position (`BEFORE`), so
//! no two pairs of a row are equal and the result is exactly a stable sort's first `k`.
//! The group's buffer of `CAP` pairs in local memory holds the best `k` found so far in
//! its first `k` slots, sorted; its `k`-th pair is the bar. A work-item appends the
//! pairs of its chunk that pass the bar after them (a slot from a local counter); when
//! the buffer overflows, a bitonic sort of the whole buffer keeps the best `k` in front
//! and raises the bar, and the pairs that did not fit and still pass are appended again.
//! At the end of the row a last bitonic sort of the filled slots orders them, and the
//! group writes its first `k`.
//!
//! Keys are read as unsigned bits (`K`) and transformed (`sort`'s `encode`) on a first
//! launch so that the bits' order is the values' (descending inverts them); a last
//! launch transforms them back as it writes. A launch that is both does both; the first
//! launch of a row split into parts writes each part's candidates transformed, with
//! their positions, for the second to read. Empty slots are all ones, key and position,
//! and sort after every pair of a row.

use super::abi::select::select_signature;
use super::sort::CODING;
use super::writer::Src;
use crate::plan::select::{SelectPlan, SELECT_ITEMS};
use crate::plan::sort::flag;

/// The program of the selection kernel for work-groups of `group`.
pub(crate) fn select_source(p: &SelectPlan, group: u32) -> String {
    let mut src = Src::at(0);
    defines(p, group, &mut src);
    src.text(CODING);
    src.text(MERGE);
    src.open(select_signature());
    body(&mut src);
    src.close();
    src.into_string()
}

/// The types and sizes the kernel text is written in.
fn defines(p: &SelectPlan, group: u32, src: &mut Src) {
    let bits = p.key_bits();
    src.line(format_args!(
        "#define K {}",
        if bits == 64 { "ulong" } else { "uint" }
    ));
    src.line(format_args!("#define KBITS {bits}"));
    let inf = if bits == 64 {
        "0x7FF0000000000000UL"
    } else {
        "0x7F800000u"
    };
    src.line(format_args!("#define INF_BITS ((K){inf})"));
    for (name, bit) in [
        ("FIRST", flag::FIRST),
        ("LAST", flag::LAST),
        ("SIGNED", flag::SIGNED),
        ("FLOAT", flag::FLOAT),
        ("DESCENDING", flag::DESCENDING),
    ] {
        src.line(format_args!("#define F_{name} {bit}u"));
    }
    src.line(format_args!("#define GROUP {group}u"));
    src.line(format_args!("#define ITEMS {SELECT_ITEMS}u"));
    src.line(format_args!("#define CAP {}u", p.cap));
}

/// The order of pairs, and the bitonic sort of a buffer's first `n` slots.
const MERGE: &str = r"#define NOWHERE 0xFFFFFFFFu
/* Pair (ka, ia) comes before (kb, ib): a smaller key, or an equal key at a lower position. */
#define BEFORE(ka, ia, kb, ib) ((ka) < (kb) || ((ka) == (kb) && (ia) < (ib)))

/* Sorts the first n (at most CAP) slots of the buffer, the slots up to the next power of
   two filled as empty; every work-item of the group calls it. */
void merge(__local K* bk, __local uint* bi, const uint n, const uint lid) {
    uint p = 2u;
    while (p < n) p <<= 1;
    for (uint i = n + lid; i < p; i += GROUP) { bk[i] = ONES; bi[i] = NOWHERE; }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint size = 2u; size <= p; size <<= 1) {
        for (uint stride = size >> 1; stride > 0u; stride >>= 1) {
            for (uint t = lid; t < (p >> 1); t += GROUP) {
                const uint i = ((t & ~(stride - 1u)) << 1) | (t & (stride - 1u));
                const uint j = i + stride;
                const K ka = bk[i], kb = bk[j];
                const uint ia = bi[i], ib = bi[j];
                const bool swap = (i & size) == 0u ? BEFORE(kb, ib, ka, ia) : BEFORE(ka, ia, kb, ib);
                if (swap) { bk[i] = kb; bk[j] = ka; bi[i] = ib; bi[j] = ia; }
            }
            barrier(CLK_LOCAL_MEM_FENCE);
        }
    }
}

";

/// A group per part of a row: the chunks, the appends and merges, the `k` written.
fn body(src: &mut Src) {
    src.line("__local K bk[CAP];");
    src.line("__local uint bi[CAP];");
    src.line("__local uint fill;");
    src.line("const uint lid = get_local_id(0);");
    src.line("const ulong g = get_group_id(0), row = g / parts, part = g - row * parts;");
    src.line("const ulong base = row * len, start = part * seg, stop = min(len, start + seg);");
    src.line("for (uint i = lid; i < k; i += GROUP) { bk[i] = ONES; bi[i] = NOWHERE; }");
    src.line("if (lid == 0u) fill = k;");
    src.line("barrier(CLK_LOCAL_MEM_FENCE);");
    // The bar: the k-th best pair so far (empty until k pairs are known).
    src.line("K bar = ONES;");
    src.line("uint bar_at = NOWHERE;");
    src.open("for (ulong c = start; c < stop; c += TILE) {");
    src.line("K key[ITEMS];");
    src.line("uint at[ITEMS];");
    src.line("uint pending = 0u;");
    src.open("for (uint j = 0; j < ITEMS; j++) {");
    src.line("const ulong e = c + j * GROUP + lid;");
    src.line("key[j] = ONES;");
    src.line("at[j] = NOWHERE;");
    src.open("if (e < stop) {");
    src.line("const K b = kin[base + e];");
    src.line("key[j] = (flags & F_FIRST) ? encode(b, flags) : b;");
    src.line("at[j] = (flags & F_FIRST) ? (uint)e : vin[base + e];");
    src.line("if (BEFORE(key[j], at[j], bar, bar_at)) pending |= 1u << j;");
    src.close();
    src.close();
    src.open("for (;;) {");
    src.open("for (uint j = 0; j < ITEMS; j++) {");
    src.open("if (pending & (1u << j)) {");
    src.line("const uint s = atomic_inc(&fill);");
    src.line("if (s < CAP) { bk[s] = key[j]; bi[s] = at[j]; pending &= ~(1u << j); }");
    src.close();
    src.close();
    src.line("barrier(CLK_LOCAL_MEM_FENCE);");
    src.line("const uint filled = fill;");
    src.line("barrier(CLK_LOCAL_MEM_FENCE);");
    src.line("if (filled <= CAP) break;");
    // Overflow: keep the best k, raise the bar, drop the pairs that no longer pass.
    src.line("merge(bk, bi, CAP, lid);");
    src.line("if (lid == 0u) fill = k;");
    src.line("bar = bk[k - 1u];");
    src.line("bar_at = bi[k - 1u];");
    src.line("barrier(CLK_LOCAL_MEM_FENCE);");
    src.open("for (uint j = 0; j < ITEMS; j++) {");
    src.line("if (!BEFORE(key[j], at[j], bar, bar_at)) pending &= ~(1u << j);");
    src.close();
    src.close();
    src.close();
    src.line("merge(bk, bi, fill, lid);");
    src.open("for (uint i = lid; i < k; i += GROUP) {");
    src.line("const ulong to = g * k + i;");
    src.line("const K b = bk[i];");
    src.line("kout[to] = (flags & F_LAST) ? decode(b, flags) : b;");
    src.line("vout[to] = bi[i];");
    src.close();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::DType;
    use crate::plan::select::SelectLayout;
    use crate::plan::sort::{KeyKind, Order};

    #[test]
    fn the_kernel_declares_the_parameters_abi_lists_and_its_sizes() {
        let p = SelectPlan {
            dtype: DType::F64,
            kind: KeyKind::Float,
            order: Order::Descending,
            rows: 3,
            len: 100,
            k: 4,
            cap: 1024,
            layout: SelectLayout::Rows { group: 32 },
        };
        let s = select_source(&p, 32);
        assert!(s.contains("__kernel void lazycl_select_rows(__global const K* kin, __global K* kout, __global const uint* vin, __global uint* vout, const ulong len, const ulong parts, const ulong seg, const uint k, const uint flags)"));
        for line in [
            "#define K ulong",
            "#define GROUP 32u",
            "#define CAP 1024u",
            "#define ITEMS 8u",
        ] {
            assert!(s.contains(line), "{line}");
        }
    }
}
