//! Calls: device functions (a slice argument is its pointer and its length) and the
//! builtins: math functions map to OpenCL C's, the work-item intrinsics to
//! `get_global_id` and friends (as `ulong`), and where OpenCL C's builtin differs from
//! Rust (`signum` of NaN, `clamp`, integer `pow`) a helper function. Atomics and
//! collectives are in `intrinsics`.

use lazycl_clc as clc;

use super::Emitter;
use crate::ir::*;

impl Emitter<'_> {
    /// A `#[device_fn]` call.
    pub(super) fn call(&mut self, name: &str, args: &[CallArg], pre: &mut Vec<String>) -> String {
        let mut parts = Vec::new();
        for a in args {
            match a {
                CallArg::Value(v) => parts.push(self.expr(v, pre)),
                CallArg::Slice(p, l) => {
                    parts.push(p.clone());
                    parts.push(l.clone());
                }
            }
        }
        format!("{name}({})", parts.join(", "))
    }

    /// A builtin of type `ty` applied to `args` (the first argument's type names the
    /// helper functions).
    pub(super) fn builtin(&mut self, b: Builtin, ty: Ty, args: &[Expr], pre: &mut Vec<String>) -> String {
        let t = self.scalar(ty);
        let arg_t = args.first().map(|a| self.scalar(a.ty)).unwrap_or(t);
        let vals: Vec<String> = args.iter().map(|a| self.expr(a, pre)).collect();
        let refs: Vec<&str> = vals.iter().map(String::as_str).collect();
        let elem = arg_t.elem();
        match b {
            Builtin::FloatFn(f) => format!("{f}({})", vals.join(", ")),
            Builtin::Signum => self.call_helper(clc::signum(elem), &refs),
            Builtin::IntAbs => format!("({})", clc::wrapping_abs(elem, &vals.join(", "))),
            Builtin::IntMinMax(f) => format!("{f}({})", vals.join(", ")),
            Builtin::Clamp => self.call_helper(clc::clamp(elem), &refs),
            Builtin::IntPow => self.call_helper(clc::pow(elem), &refs),
            Builtin::Powi => format!("pown({})", vals.join(", ")),
            Builtin::FloatTest(f) => format!("({f}({}) != 0)", vals.join(", ")),
            Builtin::WorkItem(f) => format!("((ulong){f}({}))", vals.join(", ")),
            Builtin::Complex(f) => self.complex_fn(f, t, arg_t, &vals),
        }
    }
}
