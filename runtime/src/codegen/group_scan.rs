//! The exclusive scan over a work-group's work-items that the sort and compaction
//! kernels share, as OpenCL C. It needs `GROUP` (a multiple of 16) and `C(f)`, the
//! padded index of counter `f`, defined before it.

/// `group_scan(x, lid, sums, part)`: the sum of `x` over the work-items before `lid`.
pub(super) const GROUP_SCAN: &str = r"#define RAKE 16u
#define PER_RAKE (GROUP / RAKE)
/* The exclusive prefix of `x` over the group's work-items, in work-item order: sixteen
   work-items each sum a run of the others, one sums those runs. `sums` holds
   C(GROUP) words, `part` RAKE. */
inline uint group_scan(uint x, uint lid, __local uint* sums, __local uint* part) {
    sums[C(lid)] = x;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < RAKE) {
        uint run = 0;
        for (uint i = 0; i < PER_RAKE; i++) {
            const uint at = C(lid * PER_RAKE + i);
            const uint v = sums[at];
            sums[at] = run;
            run += v;
        }
        part[lid] = run;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {
        uint run = 0;
        for (uint i = 0; i < RAKE; i++) {
            const uint v = part[i];
            part[i] = run;
            run += v;
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint r = sums[C(lid)] + part[lid / PER_RAKE];
    barrier(CLK_LOCAL_MEM_FENCE);
    return r;
}
";
