//! The compaction kernel ([`CompactPlan`]): the elements (or positions) where a mask is
//! true, in order, in one pass. Each work-group takes the next tile from a counter, counts
//! its work-items' `true`s and scans the counts, gathers its picked elements in local
//! memory, finds the picked elements of the tiles before it by a decoupled look-back (a
//! tile's state is one 64-bit word: flag and number together), and
//! writes its own run with neighbouring work-items on neighbouring elements. The last
//! tile writes the count, so the result's length is known on the device.

use super::abi::compact::compact_signature;
use super::group_scan::GROUP_SCAN;
use super::writer::Src;
use crate::plan::compact::{CompactPlan, Picked, COMPACT_GROUP};

/// The program of a compaction plan.
pub(crate) fn compact_source(p: &CompactPlan) -> String {
    let mut src = Src::at(0);
    let t = match p.picked.bytes() {
        1 => "uchar",
        2 => "ushort",
        8 => "ulong",
        _ => "uint",
    };
    src.line(format_args!("#define T {t}"));
    src.line(format_args!("#define GROUP {COMPACT_GROUP}u"));
    src.line(format_args!("#define ITEMS {}u", p.items));
    src.line(format_args!(
        "#define POSITIONS {}",
        u32::from(p.picked == Picked::Positions)
    ));
    src.line("#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable");
    src.text(BODY_DEFINES);
    src.text(GROUP_SCAN);
    src.open(compact_signature(p.picked));
    src.text(BODY);
    src.close();
    src.into_string()
}

const BODY_DEFINES: &str = r"#define TILE (GROUP * ITEMS)
#define P(e) ((e) + ((e) >> 5))
#define C(f) ((f) + ((f) >> 4))
";

const BODY: &str = r"__local uchar m[TILE];
#if !POSITIONS
__local T vals[P(TILE)];
#endif
__local T picked[P(TILE)];
__local uint sums[C(GROUP)];
__local uint part[RAKE];
__local uint number, total;
__local ulong prefix;
const uint lid = get_local_id(0);
volatile __global ulong* state = status + 1;
if (lid == 0) number = atomic_inc((volatile __global uint*)status);
barrier(CLK_LOCAL_MEM_FENCE);
const ulong tn = number, base = tn * TILE;
const uint cnt = (uint)min((ulong)TILE, n - base);
/* The tile's mask (and the elements it picks), neighbouring work-items on neighbours. */
for (uint j = 0; j < ITEMS; j++) {
    const uint e = j * GROUP + lid;
    uchar f = 0;
    if (e < cnt) {
        f = mask[base + e] != 0;
#if !POSITIONS
        if (f) vals[P(e)] = vin[base + e];
#endif
    }
    m[e] = f;
}
barrier(CLK_LOCAL_MEM_FENCE);
/* Each work-item's run of ITEMS neighbours: its count, scanned over the group. */
uint c = 0;
for (uint j = 0; j < ITEMS; j++) c += m[lid * ITEMS + j];
const uint excl = group_scan(c, lid, sums, part);
if (lid == GROUP - 1) total = excl + c;
uint at = excl;
for (uint j = 0; j < ITEMS; j++) {
    const uint e = lid * ITEMS + j;
    if (m[e]) {
#if POSITIONS
        picked[P(at)] = (T)(base + e);
#else
        picked[P(at)] = vals[P(e)];
#endif
        at++;
    }
}
barrier(CLK_LOCAL_MEM_FENCE);
/* The tiles before: work-item 0 publishes this tile's count, adds up the earlier tiles'
   back to one that has published its prefix, then publishes its own. A tile's state is
   one 64-bit word, its flag in the top bits and its number below, written and read
   atomically: no fence orders a number and its flag. */
if (lid == 0) {
    const ulong AGG = 1UL << 62, PREFIX = 2UL << 62, COUNT = AGG - 1UL;
    ulong before = 0;
    if (tn > 0) {
        atom_xchg(&state[tn], AGG | total);
        ulong j = tn;
        for (;;) {
            j--;
            ulong s;
            do { s = atom_or(&state[j], 0UL); } while (s == 0UL);
            before += s & COUNT;
            if (s & PREFIX) break;
        }
    }
    atom_xchg(&state[tn], PREFIX | (before + total));
    prefix = before;
    if (base + cnt == n) count[0] = before + total;
}
barrier(CLK_LOCAL_MEM_FENCE);
for (uint j = 0; j < ITEMS; j++) {
    const uint k = j * GROUP + lid;
    if (k < total) vout[prefix + k] = picked[P(k)];
}
";
