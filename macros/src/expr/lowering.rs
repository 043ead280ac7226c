//! Lowering an `expr!` body (or one of its derivatives) with the `#[kernel]` translator,
//! its operands declared as the placeholders `$0`, `$1`, ... of a template.

use proc_macro2::Ident;

use super::input::Input;
use crate::diag::Errors;
use crate::ir::{DevSig, Expr, Infer, Ty};
use crate::lower::Lowerer;
use crate::signature::FnKind;

/// What lowering the body gives: the typed IR, the inference table, the errors and the
/// device functions called.
pub(super) struct Lowered {
    pub e: Expr,
    pub infer: Infer,
    pub errors: Errors,
    pub callees: Vec<DevSig>,
}

/// Lowers `body` (the input's, its type parameters replaced) with the operands declared
/// as `types`.
pub(super) fn lower(
    input: &Input,
    body: &syn::Expr,
    operands: &[Ident],
    types: &[Ty],
    sigs: &[DevSig],
) -> Lowered {
    let mut low = Lowerer::new(FnKind::DeviceFn, None, sigs);
    for (i, (name, ty)) in operands.iter().zip(types).enumerate() {
        low.declare_operand(&name.to_string(), *ty, format!("${i}"));
    }
    let e = low.expr(body);
    if let Some((r, span)) = input.ret {
        if let Err(m) = low.infer.unify(Ty::S(r), e.ty) {
            low.errors.add(
                span,
                format!("mismatched types in the closure's return value: {m}"),
            );
        }
    }
    low.finish();
    Lowered {
        e,
        infer: std::mem::take(&mut low.infer),
        errors: std::mem::take(&mut low.errors),
        callees: std::mem::take(&mut low.callees),
    }
}
