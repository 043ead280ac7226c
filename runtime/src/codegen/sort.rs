//! Sort kernels ([`SortPlan`]): a stable LSD radix sort of the keys' bits.
//!
//! Every kernel works on tiles of `GROUP * ITEMS` keys, each work-item holding a run of
//! `ITEMS` neighbours in registers. One *split* sorts a tile by four bits in local memory,
//! stably: each work-item counts its keys per digit (16 counters per work-item, its rank
//! among its own equal digits kept), the counters are scanned in digit-major order, and
//! each key is written at its digit's offset for its work-item plus its rank.
//!
//! - `lazycl_sort_rows` sorts a row per work-group by every bit of the key, one split
//!   per four bits, and writes the row once.
//! - `lazycl_radix_hist` counts, per row, the digits of every byte of the keys.
//! - `lazycl_radix_pass` sorts by one byte: each tile is split twice (the byte's low and
//!   high four bits), so that its keys are grouped by digit in their old order; the
//!   tile's count per digit is published, and a work-item per digit looks back over the
//!   tiles before it in its row (Merrill and Garland's decoupled look-back, per digit as
//!   in Adinets and Merrill's Onesweep) for the keys of that digit before the tile; each
//!   key goes to its digit's start in the row, plus those, plus its place in the tile.
//!   A tile takes its number from a counter when its group starts, so it only waits on
//!   tiles of groups already running.
//!
//! Keys are read as unsigned bits (`K`) and transformed on the first pass so that the
//! bits' order is the values' (`KeyKind`); the last pass (or the local sort) transforms
//! them back. The key's kind, the order and what is stored are bits of a `flags`
//! argument (`sort::flag`), so sorts of keys and payloads of equal sizes share
//! their programs. Padding past a row's end is all ones, which sorts last and is never written.

use super::abi::sort::{sort_kernel_name, sort_signature};
use super::group_scan::GROUP_SCAN;
use super::writer::Src;
use crate::plan::sort::{flag, Payload, SortKernel, SortLayout, SortPlan, RADIX_DIGITS, SPLIT_BITS};

/// The program of one of a sort's kernels.
pub(crate) fn sort_source(kernel: SortKernel, p: &SortPlan) -> String {
    let mut src = Src::at(0);
    defines(kernel, p, &mut src);
    src.text(CODING);
    src.text(GROUP_SCAN);
    src.open(sort_signature(kernel, p.payload, sort_kernel_name(kernel)));
    match kernel {
        SortKernel::Local => local_body(p, &mut src),
        SortKernel::Hist => hist_body(p, &mut src),
        SortKernel::Pass => pass_body(p, &mut src),
    }
    src.close();
    src.into_string()
}

/// The types and sizes the kernel text is written in.
fn defines(kernel: SortKernel, p: &SortPlan, src: &mut Src) {
    let bits = p.key_bits();
    let (group, items) = match (kernel, p.layout) {
        (_, SortLayout::Local { group, items }) => (group, items),
        (SortKernel::Hist, SortLayout::Radix { hist_items, .. }) => (RADIX_DIGITS, hist_items),
        (_, SortLayout::Radix { items, .. }) => (RADIX_DIGITS, items),
    };
    src.line(format_args!(
        "#define K {}",
        if bits == 64 { "ulong" } else { "uint" }
    ));
    src.line(format_args!("#define KBITS {bits}"));
    // The bits of +inf: anything above them, without the sign, is a NaN.
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
        ("KEYS_OUT", flag::KEYS_OUT),
        ("INDEX", flag::INDEX),
    ] {
        src.line(format_args!("#define F_{name} {bit}u"));
    }
    let v = match p.payload.bytes() {
        1 => "uchar",
        8 => "ulong",
        _ => "uint",
    };
    src.line(format_args!(
        "#define HAS_V {}",
        u32::from(p.payload != Payload::None)
    ));
    src.line(format_args!("#define V {v}"));
    src.line(format_args!("#define GROUP {group}u"));
    src.line(format_args!("#define ITEMS {items}u"));
    src.line(format_args!("#define PASSES {}u", p.passes()));
}

/// What every sort kernel shares: the key transform and the padded local indices.
pub(super) const CODING: &str = r"#define TILE (GROUP * ITEMS)
#define ONES ((K)~(K)0)
#define SIGN ((K)1 << (KBITS - 1))
/* A word of padding per 32 keys, and per 16 counters, so that runs fall in different banks. */
#define P(e) ((e) + ((e) >> 5))
#define C(f) ((f) + ((f) >> 4))

/* The key's bits, made to sort as unsigned numbers (`f`: the flags). */
inline K encode(K b, uint f) {
    if (f & F_FLOAT) {
        if ((b & ~SIGN) > INF_BITS) b = ONES;
        else b = (b & SIGN) ? ~b : (b | SIGN);
    } else if (f & F_SIGNED) {
        b ^= SIGN;
    }
    return (f & F_DESCENDING) ? ~b : b;
}

inline K decode(K b, uint f) {
    if (f & F_DESCENDING) b = ~b;
    if (f & F_FLOAT) b = (b & SIGN) ? (b ^ SIGN) : ~b;
    else if (f & F_SIGNED) b ^= SIGN;
    return b;
}

";

/// Local arrays of a tile: keys, payloads, counters, the scan's words.
fn tile_arrays(src: &mut Src) {
    src.line("__local K keys[P(TILE)];");
    src.line("#if HAS_V");
    src.line("__local V vals[P(TILE)];");
    src.line("#endif");
    src.line("__local ushort cnt[C(16u * GROUP)];");
    src.line("__local uint sums[C(GROUP)];");
    src.line("__local uint part[RAKE];");
    src.line("const uint lid = get_local_id(0);");
}

/// Loads a tile of `count` keys from `kin[base ..]` into local memory, transformed on
/// the first pass, then each work-item's run into registers. An index payload is made
/// on the first pass and read after.
fn load_tile(src: &mut Src) {
    src.open("for (uint j = 0; j < ITEMS; j++) {");
    src.line("const uint e = j * GROUP + lid;");
    src.line("K k = ONES;");
    src.line("#if HAS_V");
    src.line("V v = 0;");
    src.line("#endif");
    src.open("if (e < count) {");
    src.line("k = kin[base + e];");
    src.line("if (flags & F_FIRST) k = encode(k, flags);");
    src.line("#if HAS_V");
    src.line("v = (flags & F_FIRST) && (flags & F_INDEX) ? (V)(index0 + e) : vin[base + e];");
    src.line("#endif");
    src.close();
    src.line("keys[P(e)] = k;");
    src.line("#if HAS_V");
    src.line("vals[P(e)] = v;");
    src.line("#endif");
    src.close();
    src.line("barrier(CLK_LOCAL_MEM_FENCE);");
    src.line("K key[ITEMS];");
    src.line("#if HAS_V");
    src.line("V val[ITEMS];");
    src.line("#endif");
    read_runs(src);
}

/// Each work-item's run of `ITEMS` neighbours, from local memory into registers.
fn read_runs(src: &mut Src) {
    src.open("for (uint j = 0; j < ITEMS; j++) {");
    src.line("key[j] = keys[P(lid * ITEMS + j)];");
    src.line("#if HAS_V");
    src.line("val[j] = vals[P(lid * ITEMS + j)];");
    src.line("#endif");
    src.close();
}

/// One split: the tile, in registers, sorted stably by the four bits at `shift` into
/// local memory; then back into registers if `again`.
fn split(shift: &str, again: &str, src: &mut Src) {
    debug_assert_eq!(SPLIT_BITS, 4);
    src.open("{");
    src.line("ushort rank[ITEMS];");
    src.line("for (uint d = 0; d < 16u; d++) cnt[C(d * GROUP + lid)] = 0;");
    src.open("for (uint j = 0; j < ITEMS; j++) {");
    src.line(format_args!(
        "const uint at = C((uint)((key[j] >> ({shift})) & 15u) * GROUP + lid);"
    ));
    src.line("rank[j] = cnt[at];");
    src.line("cnt[at] = rank[j] + 1;");
    src.close();
    src.line("barrier(CLK_LOCAL_MEM_FENCE);");
    // The counters in digit-major order: each work-item scans 16 in a row of them.
    src.line("uint run = 0;");
    src.line("for (uint i = 0; i < 16u; i++) run += cnt[C(lid * 16u + i)];");
    src.line("run = group_scan(run, lid, sums, part);");
    src.open("for (uint i = 0; i < 16u; i++) {");
    src.line("const uint at = C(lid * 16u + i);");
    src.line("const uint c = cnt[at];");
    src.line("cnt[at] = (ushort)run;");
    src.line("run += c;");
    src.close();
    src.line("barrier(CLK_LOCAL_MEM_FENCE);");
    src.open("for (uint j = 0; j < ITEMS; j++) {");
    src.line(format_args!(
        "const uint to = cnt[C((uint)((key[j] >> ({shift})) & 15u) * GROUP + lid)] + rank[j];"
    ));
    src.line("keys[P(to)] = key[j];");
    src.line("#if HAS_V");
    src.line("vals[P(to)] = val[j];");
    src.line("#endif");
    src.close();
    src.line("barrier(CLK_LOCAL_MEM_FENCE);");
    src.open(format_args!("if ({again}) {{"));
    read_runs(src);
    src.line("barrier(CLK_LOCAL_MEM_FENCE);");
    src.close();
    src.close();
}

/// A row per group, sorted by every bit in local memory.
fn local_body(_p: &SortPlan, src: &mut Src) {
    tile_arrays(src);
    src.line("const ulong row = get_group_id(0), base = row * len;");
    src.line("const uint count = (uint)len;");
    src.line("const ulong index0 = 0;");
    load_tile(src);
    src.line("barrier(CLK_LOCAL_MEM_FENCE);");
    src.open("for (uint shift = 0; shift < KBITS; shift += 4u) {");
    split("shift", "shift + 4u < KBITS", src);
    src.close();
    store_sorted("base + e", src);
}

/// Writes the tile's sorted keys (in local memory) at `to` (of `e`, the key's place in
/// the tile): as they are before the last pass, decoded (if stored at all) by it.
fn store_sorted(to: &str, src: &mut Src) {
    src.open("for (uint j = 0; j < ITEMS; j++) {");
    src.line("const uint e = j * GROUP + lid;");
    src.open("if (e < count) {");
    src.line(format_args!("const ulong to = {to};"));
    src.line("const K k = keys[P(e)];");
    src.line("if (!(flags & F_LAST)) kout[to] = k;");
    src.line("else if (flags & F_KEYS_OUT) kout[to] = decode(k, flags);");
    src.line("#if HAS_V");
    src.line("vout[to] = vals[P(e)];");
    src.line("#endif");
    src.close();
    src.close();
}

/// Every pass's digit counts of a histogram tile, added into its row's (`hist[(row *
/// PASSES + pass) * 256 + digit]`). Neighbouring keys of a work-item often share the high
/// bytes, so runs of one digit are counted before they are added.
fn hist_body(p: &SortPlan, src: &mut Src) {
    let passes = p.passes();
    src.line("__local uint h[PASSES * 256u];");
    src.line("const uint lid = get_local_id(0);");
    src.line("for (uint i = lid; i < PASSES * 256u; i += GROUP) h[i] = 0;");
    src.line("barrier(CLK_LOCAL_MEM_FENCE);");
    src.line("const ulong tn = get_group_id(0), row = tn / tiles_, tr = tn - row * tiles_;");
    src.line("const ulong base = row * len + tr * TILE;");
    src.line("const uint count = (uint)min((ulong)TILE, len - tr * TILE);");
    for q in 0..passes {
        src.line(format_args!("uint d{q} = 0, n{q} = 0;"));
    }
    src.open("for (uint j = 0; j < ITEMS; j++) {");
    src.line("const uint e = j * GROUP + lid;");
    src.line("if (e >= count) break;");
    src.line("const K k = encode(kin[base + e], flags);");
    for q in 0..passes {
        let shift = q * 8;
        src.line(format_args!("const uint x{q} = (uint)(k >> {shift}) & 255u;"));
        src.line(format_args!(
            "if (x{q} != d{q}) {{ if (n{q}) atomic_add(&h[{}u + d{q}], n{q}); d{q} = x{q}; n{q} = 0; }}",
            q * 256
        ));
        src.line(format_args!("n{q}++;"));
    }
    src.close();
    for q in 0..passes {
        src.line(format_args!(
            "if (n{q}) atomic_add(&h[{}u + d{q}], n{q});",
            q * 256
        ));
    }
    src.line("barrier(CLK_LOCAL_MEM_FENCE);");
    src.open("for (uint i = lid; i < PASSES * 256u; i += GROUP) {");
    src.line("if (h[i]) atomic_add(&hist[row * PASSES * 256u + i], h[i]);");
    src.close();
}

/// One radix pass over a tile.
fn pass_body(_p: &SortPlan, src: &mut Src) {
    tile_arrays(src);
    src.line("__local uint start[256], stop[256];");
    src.line("__local long place[256];");
    src.line("__local uint number;");
    src.line("if (lid == 0) number = atomic_inc(&status[0]);");
    src.line("barrier(CLK_LOCAL_MEM_FENCE);");
    src.line("const ulong tn = number, row = tn / tiles_, tr = tn - row * tiles_;");
    src.line("const ulong base = row * len + tr * TILE;");
    src.line("const uint count = (uint)min((ulong)TILE, len - tr * TILE);");
    src.line("const ulong index0 = tr * TILE;");
    src.line("(void)index0;");
    src.line("const uint shift = pass * 8u;");
    load_tile(src);
    src.line("barrier(CLK_LOCAL_MEM_FENCE);");
    split("shift", "1", src);
    split("shift + 4u", "0", src);
    // The tile's keys per digit: where each digit's keys start and stop in the tile.
    src.line("start[lid] = 0;");
    src.line("stop[lid] = 0;");
    src.line("barrier(CLK_LOCAL_MEM_FENCE);");
    src.line("#define DIGIT(e) ((uint)(keys[P(e)] >> shift) & 255u)");
    src.open("for (uint j = 0; j < ITEMS; j++) {");
    src.line("const uint e = j * GROUP + lid;");
    src.open("if (e < count) {");
    src.line("const uint d = DIGIT(e);");
    src.line("if (e == 0 || DIGIT(e - 1) != d) start[d] = e;");
    src.line("if (e + 1 == count || DIGIT(e + 1) != d) stop[d] = e + 1;");
    src.close();
    src.close();
    src.line("barrier(CLK_LOCAL_MEM_FENCE);");
    // Work-item `lid` is digit `lid`: the row's keys of smaller digits, then the look-back.
    src.line("const uint mine = stop[lid] - start[lid];");
    src.line("const uint below = group_scan(hist[(row * PASSES + pass) * 256u + lid], lid, sums, part);");
    src.line("volatile __global uint* st = status + 1;");
    src.line("const uint AGG = 1u << 30, PREFIX = 2u << 30, COUNT = AGG - 1u;");
    src.line("uint before = 0;");
    src.open("if (tr == 0) {");
    src.line("atomic_xchg(&st[tn * 256u + lid], PREFIX | mine);");
    src.reopen("} else {");
    src.line("atomic_xchg(&st[tn * 256u + lid], AGG | mine);");
    src.line("ulong j = tn - 1;");
    src.open("for (;;) {");
    src.line("uint s;");
    src.line("do { s = atomic_or(&st[j * 256u + lid], 0u); } while (s == 0u);");
    src.line("before += s & COUNT;");
    src.line("if (s & PREFIX) break;");
    src.line("j--;");
    src.close();
    src.line("atomic_xchg(&st[tn * 256u + lid], PREFIX | (before + mine));");
    src.close();
    src.line("place[lid] = (long)(row * len) + (long)below + (long)before - (long)start[lid];");
    src.line("barrier(CLK_LOCAL_MEM_FENCE);");
    store_sorted("(ulong)(place[DIGIT(e)] + (long)e)", src);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::DType;
    use crate::plan::sort::{KeyKind, Order};

    fn plan(layout: SortLayout, payload: Payload) -> SortPlan {
        SortPlan {
            dtype: DType::F32,
            kind: KeyKind::Float,
            order: Order::Ascending,
            payload,
            keys_out: true,
            rows: 1,
            len: 10,
            layout,
        }
    }

    #[test]
    fn each_kernel_declares_the_parameters_abi_lists() {
        let radix = plan(
            SortLayout::Radix {
                items: 16,
                hist_items: 64,
            },
            Payload::Index,
        );
        let pass = sort_source(SortKernel::Pass, &radix);
        assert!(pass.contains("__kernel void lazycl_radix_pass(__global const K* kin, __global K* kout, __global const V* vin, __global V* vout, __global uint* hist"));
        let hist = sort_source(SortKernel::Hist, &radix);
        assert!(hist.contains("lazycl_radix_hist(__global const K* kin, __global uint* hist, const ulong len, const ulong tiles_, const uint flags)"));
        let local = sort_source(
            SortKernel::Local,
            &plan(SortLayout::Local { group: 64, items: 2 }, Payload::Index),
        );
        assert!(local.contains("lazycl_sort_rows(__global const K* kin, __global K* kout, __global const V* vin, __global V* vout, const ulong len, const uint flags)"));
        assert!(local.contains("#define GROUP 64u"));
    }
}
