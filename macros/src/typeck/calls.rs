//! Method calls, intrinsic calls, atomics and device-function calls.

use super::*;

impl Lowerer<'_> {
    pub(super) fn method_call(&mut self, m: &syn::ExprMethodCall) -> Expr {
        let span = m.span();
        if let Some(t) = &m.turbofish {
            self.errors.add(
                t.span(),
                "generic arguments (turbofish) are not supported in kernels",
            );
        }
        let name = m.method.to_string();
        // `.len()` on arrays.
        if let syn::Expr::Path(p) = strip_parens(&m.receiver) {
            if let Some(id) = p.path.get_ident() {
                if let Some(Binding::Array { len, .. }) = self.lookup(&id.to_string()).cloned() {
                    if name == "len" && m.args.is_empty() {
                        let kind = match len {
                            ArrLen::Param(n) => ExprKind::Len(n),
                            ArrLen::Local(n) => ExprKind::Int(n as i128),
                        };
                        return Expr {
                            kind,
                            ty: Ty::S(Scalar::Usize),
                            span,
                        };
                    }
                    self.errors.add(
                        m.method.span(),
                        format!(
                            "unsupported method `{name}` on an array; arrays support `.len()` and indexing"
                        ),
                    );
                    return err_expr(span);
                }
            }
        }
        let recv = self.expr(&m.receiver);
        let args: Vec<Expr> = m.args.iter().map(|a| self.expr(a)).collect();
        self.scalar_method(recv, &name, m.method.span().into(), args, span)
    }

    pub(super) fn scalar_method(
        &mut self,
        recv: Expr,
        name: &str,
        name_span: Sp,
        args: Vec<Expr>,
        span: Sp,
    ) -> Expr {
        let t = self.infer.shallow(recv.ty);
        if t == Ty::Never {
            return err_expr(span);
        }
        let arity = |this: &mut Self, n: usize| -> bool {
            if args.len() != n {
                let plural = if n == 1 { "" } else { "s" };
                this.errors.add(
                    span,
                    format!("`{name}` takes {n} argument{plural}, {} given", args.len()),
                );
                false
            } else {
                true
            }
        };
        if self.infer.is_float(t) {
            if let Some(&(_, cl, n)) = FLOAT_METHODS.iter().find(|(r, _, _)| *r == name) {
                if !arity(self, n) {
                    return err_expr(span);
                }
                for a in &args {
                    self.unify(t, a.ty, a.span, &format!(" in argument of `{name}`"));
                }
                let mut all = vec![recv];
                all.extend(args);
                return Expr {
                    kind: ExprKind::Builtin(Builtin::FloatFn(cl), all),
                    ty: t,
                    span,
                };
            }
            let (b, n, ret) = match name {
                "signum" => (Builtin::Signum, 0, t),
                "clamp" => (Builtin::Clamp, 2, t),
                "powi" => (Builtin::Powi, 1, t),
                "is_nan" => (Builtin::FloatTest("isnan"), 0, Ty::S(Scalar::Bool)),
                "is_finite" => (Builtin::FloatTest("isfinite"), 0, Ty::S(Scalar::Bool)),
                "is_infinite" => (Builtin::FloatTest("isinf"), 0, Ty::S(Scalar::Bool)),
                _ => {
                    let d = self.infer.describe(t);
                    self.errors.add(
                        name_span,
                        format!("unsupported method `{name}` on `{d}`; float methods: {FLOAT_METHOD_LIST}"),
                    );
                    return err_expr(span);
                }
            };
            if !arity(self, n) {
                return err_expr(span);
            }
            for a in &args {
                let want = if b == Builtin::Powi { Ty::S(Scalar::I32) } else { t };
                self.unify(want, a.ty, a.span, &format!(" in argument of `{name}`"));
            }
            let mut all = vec![recv];
            all.extend(args);
            return Expr {
                kind: ExprKind::Builtin(b, all),
                ty: ret,
                span,
            };
        }
        if self.infer.is_int(t) {
            let signed = match t {
                Ty::S(s) => s.is_signed_int(),
                _ => true,
            };
            let (n, kind) = match name {
                "min" | "max" => (1, None),
                "clamp" => (2, None),
                "abs" if signed => (0, None),
                "pow" => (1, None),
                "wrapping_add" => (1, Some(BinOp::Add)),
                "wrapping_sub" => (1, Some(BinOp::Sub)),
                "wrapping_mul" => (1, Some(BinOp::Mul)),
                "wrapping_neg" => (0, None),
                _ => {
                    let d = self.infer.describe(t);
                    self.errors.add(
                        name_span,
                        format!("unsupported method `{name}` on `{d}`; integer methods: {INT_METHOD_LIST}"),
                    );
                    return err_expr(span);
                }
            };
            if !arity(self, n) {
                return err_expr(span);
            }
            for a in &args {
                let want = if name == "pow" { Ty::S(Scalar::U32) } else { t };
                self.unify(want, a.ty, a.span, &format!(" in argument of `{name}`"));
            }
            let mut all = vec![recv];
            all.extend(args);
            if let Some(op) = kind {
                let mut it = all.into_iter();
                let (Some(a), Some(b)) = (it.next(), it.next()) else {
                    return err_expr(span);
                };
                return Expr {
                    kind: ExprKind::Binary(op, Box::new(a), Box::new(b)),
                    ty: t,
                    span,
                };
            }
            let b = match name {
                "min" => Builtin::IntMinMax("min"),
                "max" => Builtin::IntMinMax("max"),
                "clamp" => Builtin::Clamp,
                "abs" => Builtin::IntAbs,
                "pow" => Builtin::IntPow,
                _ => {
                    // wrapping_neg
                    let Some(a) = all.into_iter().next() else {
                        return err_expr(span);
                    };
                    return Expr {
                        kind: ExprKind::Unary(UnOp::Neg, Box::new(a)),
                        ty: t,
                        span,
                    };
                }
            };
            return Expr {
                kind: ExprKind::Builtin(b, all),
                ty: t,
                span,
            };
        }
        let d = self.infer.describe(t);
        self.errors
            .add(name_span, format!("unsupported method `{name}` on `{d}`"));
        err_expr(span)
    }

    pub(super) fn call(&mut self, c: &syn::ExprCall) -> Expr {
        let span = c.span();
        let syn::Expr::Path(p) = strip_parens(&c.func) else {
            self.errors
                .add(c.func.span(), "only named functions can be called in kernels");
            return err_expr(span);
        };
        // `f32::sqrt(x)`-style calls.
        let segs: Vec<String> = p.path.segments.iter().map(|s| s.ident.to_string()).collect();
        if segs.len() == 2 {
            if let Some(t) = Scalar::from_rust(&segs[0]) {
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
                return self.scalar_method(recv, &segs[1], name_span, args, span);
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
            if c.args.len() != 1 {
                self.errors.add(
                    span,
                    format!(
                        "`{name}` takes 1 argument, the dimension (0, 1 or 2), but {} given",
                        given(c.args.len())
                    ),
                );
                return err_expr(span);
            }
            let d = self.expr(&c.args[0]);
            self.unify(
                Ty::S(Scalar::U32),
                d.ty,
                d.span,
                &format!(" in the dimension of `{name}` (a `u32`)"),
            );
            if let ExprKind::Int(v) = d.kind {
                if !(0..=2).contains(&v) {
                    self.errors
                        .add(d.span, format!("the dimension of `{name}` must be 0, 1 or 2"));
                }
            }
            return Expr {
                kind: ExprKind::Builtin(Builtin::WorkItem(cl), vec![d]),
                ty: Ty::S(Scalar::Usize),
                span,
            };
        }
        if name == "barrier" {
            self.errors
                .add(span, "`barrier()` is a statement; write `barrier();`");
            return err_expr(span);
        }
        if let Some(op) = AtomicOp::from_name(&name) {
            return self.atomic(op, &name, c);
        }
        match self.lookup(&name) {
            Some(Binding::Poison) => return err_expr(span),
            Some(_) => {
                self.errors
                    .add(id.span(), format!("`{name}` is a variable, not a function"));
                return err_expr(span);
            }
            None => {}
        }
        if let Some(sig) = self.sigs.iter().find(|s| s.name == name).cloned() {
            return self.device_call(&sig, c);
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

    pub(super) fn atomic(&mut self, op: AtomicOp, name: &str, c: &syn::ExprCall) -> Expr {
        let span = c.span();
        let n = if op == AtomicOp::Cmpxchg { 3 } else { 2 };
        if c.args.len() != n {
            let what = if n == 3 {
                "(&mut a[i], expected, new)"
            } else {
                "(&mut a[i], value)"
            };
            self.errors.add(
                span,
                format!(
                    "`{name}` takes {n} arguments {what}, but {} given",
                    given(c.args.len())
                ),
            );
            return err_expr(span);
        }
        let target = strip_parens(&c.args[0]);
        let ix = match target {
            syn::Expr::Reference(r) if r.mutability.is_some() => match strip_parens(&r.expr) {
                syn::Expr::Index(ix) => Some(ix),
                _ => None,
            },
            _ => None,
        };
        let Some(ix) = ix else {
            self.errors.add(
                target.span(),
                format!("the first argument of `{name}` must be `&mut a[i]`"),
            );
            return err_expr(span);
        };
        let Some((aref, idx)) = self.index_parts(ix, true) else {
            return err_expr(span);
        };
        if !matches!(aref.elem, Scalar::I32 | Scalar::U32) {
            self.errors.add(
                target.span(),
                format!(
                    "atomics work on `i32` and `u32` elements (OpenCL C 1.2), not `{}`",
                    aref.elem.rust()
                ),
            );
        }
        let ty = Ty::S(aref.elem);
        let vals: Vec<Expr> = c.args.iter().skip(1).map(|a| self.expr(a)).collect();
        for v in &vals {
            self.unify(ty, v.ty, v.span, &format!(" in argument of `{name}`"));
        }
        Expr {
            kind: ExprKind::Atomic(op, aref, Box::new(idx), vals),
            ty,
            span,
        }
    }

    pub(super) fn device_call(&mut self, sig: &DevSig, c: &syn::ExprCall) -> Expr {
        let span = c.span();
        if !self.callees.contains(&sig.name) {
            self.callees.push(sig.name.clone());
        }
        if c.args.len() != sig.params.len() {
            self.errors.add(
                span,
                format!(
                    "`{}` takes {} arguments, but {} given",
                    sig.name,
                    sig.params.len(),
                    given(c.args.len())
                ),
            );
            return err_expr(span);
        }
        let mut args = Vec::new();
        for (a, p) in c.args.iter().zip(&sig.params) {
            match *p {
                ParamTy::Scalar(s) => {
                    let v = self.expr(a);
                    self.unify(Ty::S(s), v.ty, v.span, &format!(" in argument of `{}`", sig.name));
                    args.push(CallArg::Value(v));
                }
                ParamTy::Slice { elem, mutable } => {
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
                            args.push(CallArg::Slice(aref.name, len));
                        }
                        Some(Binding::Array {
                            len: ArrLen::Local(_),
                            ..
                        }) => self.errors.add(
                            a.span(),
                            "local arrays cannot be passed to device functions (different address space)",
                        ),
                        Some(Binding::Poison) => {}
                        _ => self.errors.add(
                            a.span(),
                            format!("expected a slice parameter of type `{want}` (pass it by name)"),
                        ),
                    }
                }
            }
        }
        let ty = sig.ret.map(Ty::S).unwrap_or(Ty::Unit);
        Expr {
            kind: ExprKind::Call(device_fn_cl_name(&sig.name), args),
            ty,
            span,
        }
    }
}
