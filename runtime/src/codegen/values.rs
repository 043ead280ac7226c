//! A plan's values printed as statements (`const T v{i} = ...;`): per element or per
//! lane of a vector step, with the index decompositions they read; and the prelude that
//! declares the helpers they call.

use super::ops::{helpers_of, load_index, value_expr, vt, Helpers};
use super::writer::Src;
use crate::dtype::DType;
use crate::plan::{KernelKind, KernelPlan, ReducePlan, Value};
use lazycl_clc::VectorAt;

/// The pragmas every program starts with (`lazycl-clc`, which the macros' kernels share):
/// Rust never contracts `a * b + c` into an fma; neither do we (`mul_add` does,
/// explicitly). `double` needs its extension.
pub(super) use lazycl_clc::pragmas;

/// The values of one kernel plan, printed where a kernel's loops need them.
pub(super) struct Values<'a> {
    pub(super) plan: &'a KernelPlan,
    /// The index type: `uint` when element indices fit in 32 bits (cheaper arithmetic).
    pub(super) ix: &'static str,
    helpers: Helpers,
}

impl<'a> Values<'a> {
    pub(super) fn new(plan: &'a KernelPlan) -> Self {
        Values {
            plan,
            ix: if plan.narrow_index { "uint" } else { "ulong" },
            helpers: helpers_of(plan),
        }
    }

    /// Pragmas and helper functions: what the program declares before its kernel.
    pub(super) fn prelude(&self) -> String {
        let mut src = pragmas(self.plan.values.iter().any(|v| v.dtype.real() == DType::F64));
        // (64-bit adds through an index; a tiled scan's published words.)
        let tiled_scan = matches!(
            &self.plan.kind,
            KernelKind::Scan(s) if s.layout != crate::plan::ScanLayout::Serial
        );
        if tiled_scan
            || self
                .plan
                .outputs
                .iter()
                .any(|o| o.scatter.is_some() && o.dtype.size() == 8)
        {
            src.push_str("#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable\n");
        }
        for h in self.helpers.iter() {
            src.push_str(h);
            src.push('\n');
        }
        src
    }

    /// Expression text of value `i` (see [`value_expr`]).
    pub(super) fn expr(&mut self, i: usize, full: &str, lane: Option<usize>) -> String {
        value_expr(self.plan, i, full, lane, &mut self.helpers)
    }

    /// Every value as `v{i}`; `full` is the linear index of a load with no broadcast.
    pub(super) fn all(&mut self, full: &str, src: &mut Src) {
        self.upto(self.plan.values.len(), &[], full, src);
    }

    /// The values before index `upto` as `v{i}`; those in `given` are already in scope as
    /// `h{i}` (computed once per row by the layouts with a row reduction inside).
    pub(super) fn upto(&mut self, upto: usize, given: &[usize], full: &str, src: &mut Src) {
        for i in (0..upto).filter(|&i| !self.plan.values[i].in_branch) {
            let e = if given.contains(&i) {
                format!("h{i}")
            } else {
                self.expr(i, full, None)
            };
            src.line(format_args!(
                "const {} v{i} = {e};",
                vt(self.plan.values[i].dtype)
            ));
        }
    }

    /// The indices `i0, i1, ...` of flat element `gid` of an elementwise plan, where a
    /// load needs them (a broadcast input of a plan of several dims).
    pub(super) fn element_indices(&self, src: &mut Src) {
        let (plan, ix) = (self.plan, self.ix);
        let rank = plan.dims.len();
        let views = plan.reads_views();
        if views && rank == 1 {
            src.line(format_args!("const {ix} i0 = gid;"));
        } else if views || (plan.inputs.iter().any(|i| i.broadcast_mask != 0) && rank > 1) {
            src.line(format_args!("{ix} r = gid;"));
            for k in (1..rank).rev() {
                src.line(format_args!("const {ix} i{k} = r % ({ix})d{k}; r /= ({ix})d{k};"));
            }
            src.line(format_args!("const {ix} i0 = r;"));
        }
    }

    /// Index decomposition of `(o, k)` into the collapsed dims `i0..`, kept dims from `o`
    /// and reduced dims from `k`, then the full linear index `fidx`.
    pub(super) fn reduce_indices(&self, r: &ReducePlan, src: &mut Src) {
        let (rank, ix) = (self.plan.dims.len(), self.ix);
        for (var, reduced) in [("o", false), ("k", true)] {
            let dims: Vec<usize> = (0..rank)
                .filter(|&d| (r.red_mask & (1 << d) != 0) == reduced)
                .collect();
            if dims.is_empty() {
                continue;
            }
            src.line(format_args!("{ix} q{var} = {var};"));
            for (n, &d) in dims.iter().enumerate().rev() {
                if n == 0 {
                    src.line(format_args!("const {ix} i{d} = q{var};"));
                } else {
                    src.line(format_args!("const {ix} i{d} = q{var} % d{d}; q{var} /= d{d};"));
                }
            }
        }
        src.line(format_args!("const {ix} fidx = {};", load_index(0, rank)));
    }

    /// The reduced element `k` of output `o`: its indices, then the values before `upto`
    /// as `v{i}` (those in `given` are in scope as `h{i}`).
    pub(super) fn at_element(&mut self, r: &ReducePlan, upto: usize, given: &[usize], src: &mut Src) {
        self.reduce_indices(r, src);
        self.upto(upto, given, "fidx", src);
    }

    /// The start of a loop body that handles `w` neighbouring elements along
    /// the innermost dim: the indices of the first, one vector load per input that varies
    /// along that dim (others are single loads, shared by the lanes), and the values before
    /// `upto` per lane as `v{i}_{lane}` (those in `given` are in scope as `h{i}`, the same
    /// in every lane). Aligned loads go through a vector pointer (buffers are aligned far
    /// beyond the vector size), so that the compiler emits one wide load: `vload` is much
    /// slower on NVIDIA.
    pub(super) fn lanes(
        &mut self,
        r: &ReducePlan,
        upto: usize,
        given: &[usize],
        w: usize,
        aligned: bool,
        src: &mut Src,
    ) {
        self.reduce_indices(r, src);
        self.lane_values(upto, given, w, aligned, &[], src);
    }

    /// [`lanes`](Values::lanes) with the indices `i{k}` of the first lane and its full
    /// index `fidx` in scope (`aligned`: a multiple of four); the inputs `tiled` marks are
    /// read from a tile in local memory, lane `l` at `t{slot}[tc + l][tr]` (tiled kernels).
    pub(super) fn lane_values(
        &mut self,
        upto: usize,
        given: &[usize],
        w: usize,
        aligned: bool,
        tiled: &[bool],
        src: &mut Src,
    ) {
        let plan = self.plan;
        let rank = plan.dims.len();
        let last = 1u32 << (rank - 1);
        // (A strided load reads each lane's element on its own, but with a unit
        // innermost stride and no guard.)
        let vec_slots: Vec<bool> = plan
            .inputs
            .iter()
            .enumerate()
            .map(|(s, i)| {
                i.broadcast_mask & last == 0
                    && i.strided.as_ref().is_none_or(|a| a.vectorizable())
                    && !tiled.get(s).copied().unwrap_or(false)
            })
            .collect();
        for (slot, input) in plan.inputs.iter().enumerate() {
            if let (true, Some(a)) = (vec_slots[slot], &input.strided) {
                let load = super::views::vector_load(plan, slot, a, w);
                src.line(format_args!("const {} L{slot} = {load};", input.dtype.vector(w)));
            } else if vec_slots[slot] {
                let idx = if input.broadcast_mask == 0 {
                    "fidx".to_string()
                } else {
                    load_index(input.broadcast_mask, rank)
                };
                let v = input.dtype.vector(w);
                let load = if aligned {
                    super::views::input_vector(plan, slot, w, VectorAt::Vector(&format!("({idx}) / {w}u")))
                } else {
                    super::views::input_vector(plan, slot, w, VectorAt::Element(&idx))
                };
                src.line(format_args!("const {v} L{slot} = {load};"));
            }
        }
        // Values from the kernel's own index: one Philox call per counter (one base
        // position) for the lanes where the first lane's index is a multiple of four, else
        // one per lane.
        if aligned {
            let wanted = |i: usize| i < upto && !given.contains(&i);
            super::from_index::blocks(plan, "fidx", w, wanted, src);
        }
        for lane in 0..w {
            for i in (0..upto).filter(|&i| !plan.values[i].in_branch) {
                let e = if given.contains(&i) {
                    format!("h{i}")
                } else {
                    self.lane_expr(i, lane, &vec_slots, tiled, aligned)
                };
                src.line(format_args!(
                    "const {} v{i}_{lane} = {e};",
                    vt(plan.values[i].dtype)
                ));
            }
        }
    }

    /// Lane `lane` of value `i` in a vectorized reduction step: slots in `vec_slots` were
    /// loaded as vectors `L{slot}`; other loads are the same element for every lane.
    fn lane_expr(
        &mut self,
        i: usize,
        lane: usize,
        vec_slots: &[bool],
        tiled: &[bool],
        aligned: bool,
    ) -> String {
        let plan = self.plan;
        match plan.values[i].value {
            Value::FromIndex { .. } if !aligned && super::from_index::plain(plan, i) => {
                let at = format!("fidx + {lane}u");
                super::from_index::at_index(plan, i, &at, &format!("_{lane}"), &mut self.helpers)
            }
            Value::Load { slot } if vec_slots[slot] => {
                plan.inputs[slot].dtype.lane(&format!("L{slot}"), lane)
            }
            Value::Load { slot } if tiled.get(slot).copied().unwrap_or(false) => {
                format!("t{slot}[tc + {lane}u][tr]")
            }
            Value::Load { slot } if plan.inputs[slot].strided.is_none() => lazycl_clc::load(
                plan.inputs[slot].dtype,
                &format!("in{slot}"),
                &load_index(plan.inputs[slot].broadcast_mask, plan.dims.len()),
            ),
            _ => self.expr(i, "", Some(lane)),
        }
    }
}
