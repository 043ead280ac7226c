//! Function calls: dispatch to the intrinsics (lowered in `intrinsics`), `T::from(v)`,
//! complex numbers' constructors (lowered in `complex`) and `#[device_fn]`s, whose
//! signatures the expansion fetched before lowering; `f32::sqrt(x)`-style calls are
//! methods. (The scan that finds the device functions a
//! body calls before it is lowered is in `scan`.)

use super::names::{suggest, WORK_ITEM};
use super::{err_expr, given, strip_parens, ArrLen, Binding, Lowerer};
use crate::diag::{Sp, Spanned};
use crate::ir::*;
use crate::signature::{complex_type_args, is_complex_name};

impl Lowerer<'_> {
    pub(super) fn call(&mut self, c: &syn::ExprCall) -> Expr {
        let span = c.span();
        let syn::Expr::Path(p) = strip_parens(&c.func) else {
            self.errors
                .add(c.func.span(), "only named functions can be called in kernels");
            return err_expr(span);
        };
        // `f32::sqrt(x)`-style calls.
        let mut segs: Vec<String> = p.path.segments.iter().map(|s| s.ident.to_string()).collect();
        // `half::f16::from_f32(x)`, `lazycl::bf16::from_f32(x)`.
        if segs.len() == 3 && ["half", "lazycl"].contains(&&*segs[0]) && ["f16", "bf16"].contains(&&*segs[1])
        {
            segs.remove(0);
        }
        // `num_complex::Complex32::new(..)`, `lazycl::c32::new(..)`.
        if segs.len() == 3 && ["num_complex", "lazycl"].contains(&&*segs[0]) && is_complex_name(&segs[1]) {
            segs.remove(0);
        }
        // `Complex::new(re, im)`, `Complex::<f32>::new(re, im)`: of the parts' type.
        if segs.len() == 2 && segs[0] == "Complex" {
            let of = p
                .path
                .segments
                .iter()
                .rev()
                .nth(1)
                .and_then(|s| complex_type_args(&s.arguments));
            return self.complex_constructor(of, &segs[1], c, span);
        }
        if segs.len() == 2 {
            if let Some(t) = Scalar::from_rust(&segs[0]) {
                return self.type_method_call(t, &segs, p, c, span);
            }
        }
        let Some(id) = p.path.get_ident() else {
            self.errors.add(
                p.span(),
                "unsupported function path; call intrinsics and `#[device_fn]`s by name",
            );
            return err_expr(span);
        };
        let name = id.to_string();
        if let Some(&(_, cl)) = WORK_ITEM.iter().find(|(n, _)| *n == name) {
            return self.work_item(&name, cl, c, span);
        }
        if name == "barrier" {
            self.errors
                .add(span, "`barrier()` is a statement; write `barrier();`");
            return err_expr(span);
        }
        if let Some(op) = AtomicOp::from_name(&name) {
            return self.atomic(op, &name, c);
        }
        if let Some(op) = Collective::from_name(&name) {
            return self.collective(op, c);
        }
        match self.lookup(&name) {
            Some(Binding::Poison) => return err_expr(span),
            Some(Binding::Closure(closure)) => {
                let closure = closure.clone();
                return self.closure_call(&closure, c);
            }
            Some(_) => {
                self.errors
                    .add(id.span(), format!("`{name}` is a variable, not a function"));
                return err_expr(span);
            }
            None => {}
        }
        let instances: Vec<DevSig> = self.sigs.iter().filter(|s| s.name == name).cloned().collect();
        if !instances.is_empty() {
            return self.device_call(&instances, c);
        }
        let msg = match suggest(&name) {
            Some(hint) => format!("cannot find function `{name}`: {hint}"),
            None => format!(
                "cannot find function `{name}`; kernels can call the intrinsics global_id, local_id, \
                 group_id, global_size, local_size, num_groups, barrier and atomic_*, and `#[device_fn]` \
                 functions defined before the kernel"
            ),
        };
        self.errors.add(id.span(), msg);
        err_expr(span)
    }

    /// `T::method(recv, args..)` (`segs` = `[T, method]`): the method of `recv`, which
    /// must have type `t`.
    fn type_method_call(
        &mut self,
        t: Scalar,
        segs: &[String],
        p: &syn::ExprPath,
        c: &syn::ExprCall,
        span: Sp,
    ) -> Expr {
        if t.is_complex() && ["new", "from_polar", "from"].contains(&&*segs[1]) {
            return self.complex_constructor(Some(t), &segs[1], c, span);
        }
        // `T::from(v)`: Rust's lossless `From` (a literal takes type `T`, as through the
        // reflexive `From<T> for T`), for code generic over `T`.
        if segs[1] == "from" {
            return self.conversion_call(t, c, span);
        }
        // `f16::from_f32(x)`: rounds to the nearest, like `as` to the other floats.
        if t.is_narrow_float() && (segs[1] == "from_f32" || segs[1] == "from_f64") {
            return self.narrow_from_call(t, &segs[1], c, span);
        }
        let mut args: Vec<Expr> = c.args.iter().map(|a| self.expr(a)).collect();
        if args.is_empty() {
            self.errors.add(
                span,
                format!("`{}::{}` needs a receiver argument", segs[0], segs[1]),
            );
            return err_expr(span);
        }
        let recv = args.remove(0);
        self.unify(Ty::S(t), recv.ty, recv.span, "");
        let name_span = p
            .path
            .segments
            .last()
            .map(|s| Sp::from(s.ident.span()))
            .unwrap_or(span);
        self.scalar_method(recv, &segs[1], name_span, args, span)
    }

    /// `t::from(v)`: `v` converted to `t` where Rust has `From` for it (a literal, or a
    /// lossless conversion: `i32`/`u32` to 64 bits, `f32` to `f64`, `bool` to numbers).
    fn conversion_call(&mut self, t: Scalar, c: &syn::ExprCall, span: Sp) -> Expr {
        if c.args.len() != 1 {
            self.errors.add(
                span,
                format!(
                    "`{}::from` takes one value, but {} given",
                    t.rust(),
                    given(c.args.len())
                ),
            );
            return err_expr(span);
        }
        let v = self.expr(&c.args[0]);
        let from = self.infer.shallow(v.ty);
        let lossless = |f: Scalar| lossless(f, t);
        match from {
            Ty::Var(_) | Ty::Never => {
                self.unify(Ty::S(t), v.ty, v.span, &format!(" in `{}::from`", t.rust()));
                v
            }
            Ty::S(f) if f.is_complex() => {
                self.complex_cast_error(from, t, span);
                err_expr(span)
            }
            Ty::S(f) if lossless(f) => Expr {
                kind: ExprKind::Cast(Box::new(v)),
                ty: Ty::S(t),
                span,
            },
            _ => {
                let d = self.infer.describe(from);
                self.errors.add(
                    span,
                    format!(
                        "`{}::from` converts losslessly, like Rust's `From`, and `{d}` does not convert so; \
                         write `as {}` for a conversion that may round or wrap",
                        t.rust(),
                        t.rust()
                    ),
                );
                err_expr(span)
            }
        }
    }

    /// `f16::from_f32(x)` / `from_f64(x)` (`name`): `x`, of that float type, rounded to
    /// the nearest value of the 16-bit float type `t`.
    fn narrow_from_call(&mut self, t: Scalar, name: &str, c: &syn::ExprCall, span: Sp) -> Expr {
        let (rust, want) = (
            t.rust(),
            if name == "from_f32" {
                Scalar::F32
            } else {
                Scalar::F64
            },
        );
        if c.args.len() != 1 {
            let given = given(c.args.len());
            self.errors.add(
                span,
                format!("`{rust}::{name}` takes one value, but {given} given"),
            );
            return err_expr(span);
        }
        let v = self.expr(&c.args[0]);
        self.unify(Ty::S(want), v.ty, v.span, &format!(" in `{rust}::{name}`"));
        Expr {
            kind: ExprKind::Cast(Box::new(v)),
            ty: Ty::S(t),
            span,
        }
    }

    /// A call of a device function, or of the instance of a generic one whose parameter
    /// types the arguments have (the first such, in the order the bound lists them).
    fn device_call(&mut self, instances: &[DevSig], c: &syn::ExprCall) -> Expr {
        let span = c.span();
        let first = &instances[0];
        if c.args.len() != first.params.len() {
            self.errors.add(
                span,
                format!(
                    "`{}` takes {} arguments, but {} given",
                    first.name,
                    first.params.len(),
                    given(c.args.len())
                ),
            );
            return err_expr(span);
        }
        // The scalar arguments first (an instance is chosen by their types).
        let mut values: Vec<Option<Expr>> = c
            .args
            .iter()
            .zip(&first.params)
            .map(|(a, p)| matches!(p, ParamTy::Scalar(_)).then(|| self.expr(a)))
            .collect();
        // An argument of no known type yet (an `expr!` operand while its possible types
        // are being found): any instance may be called, so nothing is decided here.
        let open = values
            .iter()
            .flatten()
            .any(|v| self.infer.kind(v.ty) == Some(VarKind::Any));
        if instances.len() > 1 && open {
            let ty = self.infer.fresh(VarKind::Any);
            return Expr {
                kind: ExprKind::Call(first.cl_name(), Vec::new()),
                ty,
                span,
            };
        }
        let Some(sig) = self.pick_instance(instances, c, &values) else {
            return err_expr(span);
        };
        if !self.callees.contains(&sig) {
            self.callees.push(sig.clone());
        }
        let mut args = Vec::new();
        for ((a, p), v) in c.args.iter().zip(&sig.params).zip(values.iter_mut()) {
            match *p {
                ParamTy::Scalar(s) => {
                    let Some(v) = v.take() else { continue };
                    self.unify(Ty::S(s), v.ty, v.span, &format!(" in argument of `{}`", sig.name));
                    args.push(CallArg::Value(v));
                }
                // (Device functions take no structs.)
                ParamTy::Struct(_) => {}
                ParamTy::Slice { elem, mutable } => args.extend(self.slice_arg(a, elem, mutable)),
            }
        }
        let ty = sig.ret.map(Ty::S).unwrap_or(Ty::Unit);
        Expr {
            kind: ExprKind::Call(sig.cl_name(), args),
            ty,
            span,
        }
    }

    /// The instance a call takes: the only one, or the first whose parameters the
    /// arguments fit (`values`: the scalar arguments, lowered); when none does, an error
    /// with the arguments' types.
    fn pick_instance(
        &mut self,
        instances: &[DevSig],
        c: &syn::ExprCall,
        values: &[Option<Expr>],
    ) -> Option<DevSig> {
        if let [only] = instances {
            return Some(only.clone());
        }
        if let Some(sig) = instances.iter().find(|sig| self.takes(sig, c, values)) {
            return Some(sig.clone());
        }
        let found: Vec<String> = c
            .args
            .iter()
            .zip(values)
            .map(|(a, v)| match v {
                Some(v) => self.infer.describe(v.ty),
                None => self.slice_type(a).unwrap_or_else(|| "?".into()),
            })
            .collect();
        let listed: Vec<&str> = instances.iter().map(|i| i.instance.as_str()).collect();
        self.errors.add(
            c.span(),
            format!(
                "no instance of the generic device function `{}` takes ({}); it is generated for {}",
                instances[0].name,
                found.join(", "),
                listed.join(", ").replace('_', " ")
            ),
        );
        None
    }

    /// A slice argument of a device function: a slice parameter of the caller, passed by
    /// name, of the element type `elem` (and mutable if `mutable`).
    fn slice_arg(&mut self, a: &syn::Expr, elem: Scalar, mutable: bool) -> Option<CallArg> {
        let want = format!("{}[{}]", if mutable { "&mut " } else { "&" }, elem.rust());
        let binding = match strip_parens(a) {
            syn::Expr::Path(p) => p
                .path
                .get_ident()
                .and_then(|id| self.lookup(&id.to_string()).cloned()),
            _ => None,
        };
        match binding {
            Some(Binding::Array {
                aref,
                mutable: m,
                len: ArrLen::Param(len),
            }) => {
                if aref.elem != elem || (mutable && !m) {
                    let have = format!("{}[{}]", if m { "&mut " } else { "&" }, aref.elem.rust());
                    self.errors.add(
                        a.span(),
                        format!("mismatched types: expected `{want}`, found `{have}`"),
                    );
                }
                return Some(CallArg::Slice(aref.name, len));
            }
            Some(Binding::Array {
                len: ArrLen::Local(_),
                ..
            }) => self.errors.add(
                a.span(),
                "local arrays cannot be passed to device functions (different address space)",
            ),
            Some(Binding::Array {
                len: ArrLen::Const(_),
                ..
            }) => self.errors.add(
                a.span(),
                "`const` arrays cannot be passed to device functions (different address space); index them where they are defined",
            ),
            Some(Binding::Poison) => {}
            _ => self.errors.add(
                a.span(),
                format!("expected a slice parameter of type `{want}` (pass it by name)"),
            ),
        }
        None
    }

    /// Whether instance `sig` takes the arguments: each scalar's type is its parameter's
    /// (or a literal that can be), each slice's element type its parameter's.
    fn takes(&self, sig: &DevSig, c: &syn::ExprCall, values: &[Option<Expr>]) -> bool {
        sig.params
            .iter()
            .zip(values)
            .zip(&c.args)
            .all(|((p, v), a)| match (p, v) {
                (ParamTy::Scalar(s), Some(v)) => match self.infer.shallow(v.ty) {
                    Ty::S(t) => t == *s,
                    Ty::Var(_) => match self.infer.kind(v.ty) {
                        Some(VarKind::Float) => s.is_float(),
                        Some(VarKind::Int) => s.is_int(),
                        _ => true,
                    },
                    Ty::Unit | Ty::Never => false,
                },
                (ParamTy::Slice { elem, .. }, None) => match strip_parens(a) {
                    syn::Expr::Path(p) => {
                        match p.path.get_ident().and_then(|id| self.lookup(&id.to_string())) {
                            Some(Binding::Array { aref, .. }) => aref.elem == *elem,
                            _ => true,
                        }
                    }
                    _ => true,
                },
                _ => false,
            })
    }

    /// `&[f32]` or `&mut [f32]`: the type of a slice argument passed by name.
    fn slice_type(&self, a: &syn::Expr) -> Option<String> {
        let syn::Expr::Path(p) = strip_parens(a) else {
            return None;
        };
        match self.lookup(&p.path.get_ident()?.to_string())? {
            Binding::Array { aref, mutable, .. } => Some(format!(
                "{}[{}]",
                if *mutable { "&mut " } else { "&" },
                aref.elem.rust()
            )),
            _ => None,
        }
    }
}

/// Whether Rust has `From<f> for t` (a conversion that never rounds or wraps): a type to
/// itself, an integer to a wider one that holds all its values, an integer to a float
/// whose significand holds it (`half` has `From<i8>`/`From<u8>` for the 16-bit floats), a
/// float to a wider one, and `bool` to the integers, `f32` and `f64`.
fn lossless(f: Scalar, t: Scalar) -> bool {
    let magnitude = |s: Scalar| s.bits() - s.is_signed_int() as u32;
    let digits = |s: Scalar| match s {
        Scalar::F16 => 11,
        Scalar::BF16 => 8,
        Scalar::F32 => 24,
        _ => 53,
    };
    if f == t {
        return true;
    }
    if f == Scalar::Bool {
        return t != Scalar::Usize && (t.is_int() || matches!(t, Scalar::F32 | Scalar::F64));
    }
    match (f.is_int(), t.is_int()) {
        (true, true) => {
            t != Scalar::Usize
                && f != Scalar::Usize
                && t.bits() > f.bits()
                && (t.is_signed_int() || !f.is_signed_int())
        }
        (true, false) => t.is_float() && f != Scalar::Usize && magnitude(f) <= digits(t),
        (false, false) => f.is_float() && matches!(t, Scalar::F32 | Scalar::F64) && digits(t) > digits(f),
        (false, true) => false,
    }
}
