//! Calls: device functions (a slice argument is its pointer and its length), atomics on
//! an element's address, and the builtins: math functions map to OpenCL C's, the
//! intrinsics to `get_global_id` and friends (as `ulong`), and where OpenCL C's builtin
//! differs from Rust (`signum` of NaN, `clamp`, integer `pow`) a helper function.

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

    /// An atomic read-modify-write of `a[idx]`.
    pub(super) fn atomic(
        &mut self,
        op: AtomicOp,
        a: &ArrayRef,
        idx: &Expr,
        vals: &[Expr],
        pre: &mut Vec<String>,
    ) -> String {
        let i = self.expr(idx, pre);
        let mut parts = vec![format!("&{}[{i}]", a.name)];
        for v in vals {
            parts.push(self.expr(v, pre));
        }
        format!("{}({})", op.c(), parts.join(", "))
    }

    /// A builtin of type `ty` applied to `args` (the first argument's type names the
    /// helper functions).
    pub(super) fn builtin(&mut self, b: Builtin, ty: Ty, args: &[Expr], pre: &mut Vec<String>) -> String {
        let t = self.scalar(ty);
        let arg_t = args.first().map(|a| self.scalar(a.ty)).unwrap_or(t);
        let vals: Vec<String> = args.iter().map(|a| self.expr(a, pre)).collect();
        let cl = arg_t.cl();
        match b {
            Builtin::FloatFn(f) => format!("{f}({})", vals.join(", ")),
            Builtin::Signum => {
                let name = format!("lzc_signum_{cl}");
                let def = format!("{cl} {name}({cl} x) {{ return isnan(x) ? x : copysign(({cl})1, x); }}");
                let f = self.helper(name, def);
                format!("{f}({})", vals.join(", "))
            }
            Builtin::IntAbs => format!("(({cl})abs({}))", vals.join(", ")),
            Builtin::IntMinMax(f) => format!("{f}({})", vals.join(", ")),
            Builtin::Clamp => {
                let name = format!("lzc_clamp_{cl}");
                let def = format!(
                    "{cl} {name}({cl} x, {cl} lo, {cl} hi) {{ return x < lo ? lo : (x > hi ? hi : x); }}"
                );
                let f = self.helper(name, def);
                format!("{f}({})", vals.join(", "))
            }
            Builtin::IntPow => {
                let ut = arg_t.cl_unsigned();
                let name = format!("lzc_pow_{cl}");
                let def = format!(
                    "{cl} {name}({cl} b, uint e) {{ {ut} r = 1, x = ({ut})b; while (e) {{ if (e & 1u) r *= x; x *= x; e >>= 1; }} return ({cl})r; }}"
                );
                let f = self.helper(name, def);
                format!("{f}({})", vals.join(", "))
            }
            Builtin::Powi => format!("pown({})", vals.join(", ")),
            Builtin::FloatTest(f) => format!("({f}({}) != 0)", vals.join(", ")),
            Builtin::WorkItem(f) => format!("((ulong){f}({}))", vals.join(", ")),
        }
    }
}
