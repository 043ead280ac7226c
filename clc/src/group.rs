//! Work-group collectives for `#[kernel]` bodies (`work_group_reduce_add(v)`, ...):
//! OpenCL C 1.2 has none, and OpenCL 3.0 makes them optional (NVIDIA's driver does not
//! offer them), so each is a helper over a `__local` scratch array of [`GROUP_SCRATCH`]
//! elements that the kernel declares once per element type ([`scratch_name`]). Every
//! work-item of the group must call a collective, in the same order, like `barrier()`;
//! each returns the same value to all of them.

use crate::dtype::DType;
use crate::helpers::Helper;
use crate::text::wrapping;

/// Elements of a kernel's scratch array per element type: groups larger than this fold
/// into it in chunks.
pub const GROUP_SCRATCH: usize = 256;

/// A work-group collective.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Collective {
    /// The sum of every work-item's value (wrapping for integers).
    ReduceAdd,
    /// The least value (floats: NaN ignored, like `f32::min`).
    ReduceMin,
    /// The greatest value (floats: NaN ignored, like `f32::max`).
    ReduceMax,
    /// The value of the work-item whose linear local id is the second argument.
    Broadcast,
}

impl Collective {
    /// Every collective, in declaration order.
    pub const ALL: [Collective; 4] = [
        Collective::ReduceAdd,
        Collective::ReduceMin,
        Collective::ReduceMax,
        Collective::Broadcast,
    ];

    /// Its name in `#[kernel]` bodies (OpenCL 2.0's).
    pub fn name(self) -> &'static str {
        match self {
            Collective::ReduceAdd => "work_group_reduce_add",
            Collective::ReduceMin => "work_group_reduce_min",
            Collective::ReduceMax => "work_group_reduce_max",
            Collective::Broadcast => "work_group_broadcast",
        }
    }

    /// The collective a `#[kernel]` body calls by `name`, if any.
    pub fn from_name(name: &str) -> Option<Collective> {
        Collective::ALL.into_iter().find(|c| c.name() == name)
    }

    /// `a ⊕ b` of a reduction in type `t` (a broadcast combines nothing: `collective`
    /// never asks).
    fn combine(self, t: DType, a: &str, b: &str) -> String {
        match (self, t.is_float()) {
            (Collective::ReduceAdd, true) => format!("({a} + {b})"),
            (Collective::ReduceAdd, false) => wrapping(t, "+", a, b),
            (Collective::ReduceMin, true) => format!("fmin({a}, {b})"),
            (Collective::ReduceMax, true) => format!("fmax({a}, {b})"),
            (Collective::ReduceMin, false) => format!("min({a}, {b})"),
            (Collective::ReduceMax, false) | (Collective::Broadcast, _) => format!("max({a}, {b})"),
        }
    }
}

/// The kernel-scope scratch array of element type `t`.
pub fn scratch_name(t: DType) -> String {
    format!("lzc_wg_{}", t.cl_name())
}

/// The helper of collective `c` on values of type `t`: `(v, scratch)` for reductions,
/// `(v, from, scratch)` for a broadcast.
pub fn collective(c: Collective, t: DType) -> Helper {
    let ty = t.cl_name();
    let n = GROUP_SCRATCH;
    // The group's size and this work-item's linear id in it, over three dims.
    let ids = "const uint n = (uint)(get_local_size(0) * get_local_size(1) * get_local_size(2)); \
               const uint l = (uint)((get_local_id(2) * get_local_size(1) + get_local_id(1)) \
               * get_local_size(0) + get_local_id(0));";
    let body = match c {
        Collective::Broadcast => format!(
            "{ids} if ((ulong)l == from) s[0] = v; barrier(CLK_LOCAL_MEM_FENCE); \
             const {ty} r = s[0]; barrier(CLK_LOCAL_MEM_FENCE); return r;"
        ),
        _ => format!(
            "{ids} for (uint b = 0u; b < n; b += {n}u) {{ \
             if (l >= b && l - b < {n}u) s[l - b] = b == 0u ? v : {fold}; \
             barrier(CLK_LOCAL_MEM_FENCE); }} \
             for (uint w = min(n, {n}u); w > 1u; ) {{ const uint h = (w + 1u) / 2u; \
             if (l < w - h) s[l] = {pair}; barrier(CLK_LOCAL_MEM_FENCE); w = h; }} \
             const {ty} r = s[0]; barrier(CLK_LOCAL_MEM_FENCE); return r;",
            fold = c.combine(t, "s[l - b]", "v"),
            pair = c.combine(t, "s[l]", "s[l + h]"),
        ),
    };
    let params = match c {
        Collective::Broadcast => format!("{ty} v, ulong from, __local {ty}* s"),
        _ => format!("{ty} v, __local {ty}* s"),
    };
    let name = format!("lzc_{}_{ty}", c.name());
    Helper::new(name, &params, ty, &body)
}
