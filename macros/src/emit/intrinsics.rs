//! Atomics on an element's address (OpenCL C's integer atomics, `atom_*` under their
//! extension for 64-bit integers, a compare-and-swap helper for float additions) and
//! work-group collectives (helpers over the kernel's scratch array).

use lazycl_clc as clc;

use super::Emitter;
use crate::ir::*;

impl Emitter<'_> {
    /// An atomic read-modify-write of `a[idx]` (`__local` memory where `local`): OpenCL C's
    /// integer atomics, and for `f32` additions a compare-and-swap helper.
    pub(super) fn atomic(
        &mut self,
        op: AtomicOp,
        a: &ArrayRef,
        local: bool,
        idx: &Expr,
        vals: &[Expr],
        pre: &mut Vec<String>,
    ) -> String {
        let i = self.expr(idx, pre);
        let mut parts = vec![format!("&{}[{i}]", a.name)];
        for v in vals {
            parts.push(self.expr(v, pre));
        }
        match (a.elem, op) {
            (Scalar::F32 | Scalar::F64, AtomicOp::Add | AtomicOp::Sub) => {
                if op == AtomicOp::Sub {
                    parts[1] = format!("-({})", parts[1]);
                }
                let refs: Vec<&str> = parts.iter().map(String::as_str).collect();
                self.call_helper(
                    clc::atomic_add_float(a.elem.dtype().unwrap_or(DType::F32), local),
                    &refs,
                )
            }
            // 64-bit integers: OpenCL C 1.2's `atom_*`, under their extension's pragma.
            (Scalar::I64 | Scalar::U64, _) => {
                let extended = matches!(
                    op,
                    AtomicOp::Min | AtomicOp::Max | AtomicOp::And | AtomicOp::Or | AtomicOp::Xor
                );
                let ext = clc::extension(clc::int64_atomics(extended));
                self.helpers.entry(ext.name.clone()).or_insert(ext);
                let name = op.c().replacen("atomic_", "atom_", 1);
                format!("{name}({})", parts.join(", "))
            }
            _ => format!("{}({})", op.c(), parts.join(", ")),
        }
    }

    /// A work-group collective of type `ty`: its helper over the kernel's scratch array
    /// for that type (declared at the top of the kernel's body).
    pub(super) fn collective(
        &mut self,
        op: clc::Collective,
        ty: Ty,
        args: &[Expr],
        pre: &mut Vec<String>,
    ) -> String {
        let t = self.scalar(ty).dtype().unwrap_or(DType::I32);
        let mut vals: Vec<String> = args.iter().map(|a| self.expr(a, pre)).collect();
        let scratch = clc::scratch_name(t);
        self.scratch.insert(scratch.clone(), t);
        vals.push(scratch);
        let refs: Vec<&str> = vals.iter().map(String::as_str).collect();
        self.call_helper(clc::collective(op, t), &refs)
    }
}
