//! A plan's values printed as statements (`const T v{i} = ...;`): per element or per
//! lane of a vector step, with the index decompositions they read; and the prelude that
//! declares the helpers they call.

use super::ops::{value_expr, vt, Helpers};
use super::writer::Src;
use crate::dtype::DType;
use crate::fuse::KernelPlan;

/// The pragmas every program starts with. Rust never contracts `a * b + c` into an fma;
/// neither do we (`mul_add` does, explicitly).
pub(super) fn pragmas(fp64: bool) -> String {
    let mut src = String::from("#pragma OPENCL FP_CONTRACT OFF\n");
    if fp64 {
        src.push_str("#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n");
    }
    src
}

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
            helpers: Helpers::of(plan),
        }
    }

    /// Pragmas and helper functions: what the program declares before its kernel.
    pub(super) fn prelude(&self) -> String {
        let mut src = pragmas(self.plan.values.iter().any(|(_, d)| *d == DType::F64));
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
        for i in 0..upto {
            let e = if given.contains(&i) {
                format!("h{i}")
            } else {
                self.expr(i, full, None)
            };
            src.line(format_args!("const {} v{i} = {e};", vt(self.plan.values[i].1)));
        }
    }

    /// The indices `i0, i1, ...` of flat element `gid` of an elementwise plan, where a
    /// load needs them (a broadcast input of a plan of several dims).
    pub(super) fn element_indices(&self, src: &mut Src) {
        let (plan, ix) = (self.plan, self.ix);
        let rank = plan.dims.len();
        if plan.inputs.iter().any(|i| i.1 != 0) && rank > 1 {
            src.line(format_args!("{ix} r = gid;"));
            for k in (1..rank).rev() {
                src.line(format_args!("const {ix} i{k} = r % ({ix})d{k}; r /= ({ix})d{k};"));
            }
            src.line(format_args!("const {ix} i0 = r;"));
        }
    }
}
