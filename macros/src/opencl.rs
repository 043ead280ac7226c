//! Typed IR → OpenCL C 1.2 text, with Rust's semantics where OpenCL C differs (wrapping
//! signed arithmetic, division by zero, shift widths, saturating float→int casts, ...).

use std::collections::{BTreeMap, HashMap};

use crate::ir::*;

/// Emits OpenCL C for one function.
pub struct Emitter<'a> {
    infer: &'a Infer,
    tmp: u32,
    /// Helper functions the code needs: name → definition.
    pub helpers: BTreeMap<String, String>,
    /// Whether `double` appears (needs the `cl_khr_fp64` pragma).
    pub uses_f64: bool,
    ret_is_value: bool,
    /// Expression mode (`expr!`): `let` bindings are inlined at their uses instead of
    /// declared (OpenCL C has no statement expressions); name → parenthesized value.
    inline: Option<HashMap<String, String>>,
}

fn indent(lines: &mut Vec<String>, inner: Vec<String>) {
    lines.extend(inner.into_iter().map(|l| format!("    {l}")));
}

/// The OpenCL C text of a literal of type `s`.
pub fn int_literal(v: i128, s: Scalar) -> String {
    match s {
        Scalar::I32 if v == i32::MIN as i128 => "(-2147483647 - 1)".into(),
        Scalar::I64 if v == i64::MIN as i128 => "(-9223372036854775807L - 1L)".into(),
        Scalar::I32 => paren_neg(v, ""),
        Scalar::I64 => paren_neg(v, "L"),
        Scalar::U32 => format!("{v}u"),
        Scalar::U64 | Scalar::Usize => format!("{v}ul"),
        Scalar::Bool => (if v != 0 { "true" } else { "false" }).into(),
        Scalar::F32 => float_literal(v as f64, Scalar::F32),
        Scalar::F64 => float_literal(v as f64, Scalar::F64),
    }
}

fn paren_neg(v: i128, suffix: &str) -> String {
    if v < 0 {
        format!("({v}{suffix})")
    } else {
        format!("{v}{suffix}")
    }
}

/// The OpenCL C text of a float literal of type `s` (exact: shortest round-trip form).
pub fn float_literal(v: f64, s: Scalar) -> String {
    let is32 = s == Scalar::F32;
    let cast = if is32 { "" } else { "(double)" };
    if v.is_nan() {
        return format!("{cast}NAN");
    }
    if v.is_infinite() {
        return if v > 0.0 {
            format!("{cast}INFINITY")
        } else {
            format!("(-{cast}INFINITY)")
        };
    }
    let text = if is32 {
        format!("{:?}f", v as f32)
    } else {
        format!("{v:?}")
    };
    if v < 0.0 || (v == 0.0 && v.is_sign_negative()) {
        format!("({text})")
    } else {
        text
    }
}

impl<'a> Emitter<'a> {
    pub fn new(infer: &'a Infer, ret_is_value: bool) -> Self {
        Emitter {
            infer,
            tmp: 0,
            helpers: BTreeMap::new(),
            uses_f64: false,
            ret_is_value,
            inline: None,
        }
    }

    fn scalar(&mut self, t: Ty) -> Scalar {
        let s = self.infer.scalar(t).unwrap_or(Scalar::I32);
        if s == Scalar::F64 {
            self.uses_f64 = true;
        }
        s
    }

    fn temp(&mut self) -> String {
        self.tmp += 1;
        format!("lzc_t{}", self.tmp)
    }

    /// A scalar's OpenCL C type, noting `double`.
    pub fn cl(&mut self, s: Scalar) -> &'static str {
        if s == Scalar::F64 {
            self.uses_f64 = true;
        }
        s.cl()
    }

    pub fn block(&mut self, b: &Block, lines: &mut Vec<String>) {
        for s in &b.stmts {
            self.stmt(s, lines);
        }
        if let Some(t) = &b.tail {
            let mut pre = Vec::new();
            let v = self.expr(t, &mut pre);
            lines.extend(pre);
            if self.ret_is_value && !matches!(self.infer.shallow(t.ty), Ty::Unit | Ty::Never) {
                lines.push(format!("return {v};"));
            } else if !v.is_empty() {
                lines.push(format!("{v};"));
            }
        }
    }

    /// A block's statements and its tail value (not returned).
    fn value_block(&mut self, b: &Block, lines: &mut Vec<String>) -> Option<String> {
        for s in &b.stmts {
            self.stmt(s, lines);
        }
        b.tail.as_ref().map(|t| self.expr(t, lines))
    }

    fn sub_block(&mut self, b: &Block) -> Vec<String> {
        let mut inner = Vec::new();
        for s in &b.stmts {
            self.stmt(s, &mut inner);
        }
        if let Some(t) = &b.tail {
            let v = self.expr(t, &mut inner);
            if !v.is_empty() {
                inner.push(format!("{v};"));
            }
        }
        inner
    }

    fn stmt(&mut self, s: &Stmt, lines: &mut Vec<String>) {
        match s {
            Stmt::Let {
                name, init: Some(e), ..
            } if self.inline.is_some() => {
                let v = self.expr(e, lines);
                if let Some(map) = &mut self.inline {
                    map.insert(name.clone(), format!("({v})"));
                }
            }
            Stmt::Let { name, ty, init } => {
                let t = self.scalar(*ty);
                let cl = t.cl();
                match init {
                    Some(e) => {
                        let v = self.expr(e, lines);
                        lines.push(format!("{cl} {name} = {v};"));
                    }
                    None => lines.push(format!("{cl} {name};")),
                }
            }
            Stmt::LocalArray { name, elem, len } => {
                self.cl(*elem);
                let cl = elem.cl_storage();
                lines.push(format!("__local {cl} {name}[{len}];"));
            }
            Stmt::Assign { place, op, value } => {
                let v = self.expr(value, lines);
                match place {
                    Place::Var(n, ty) => match op {
                        None => lines.push(format!("{n} = {v};")),
                        Some(op) => {
                            let t = self.scalar(*ty);
                            let rhs_t = self.scalar(value.ty);
                            let e = self.binary(*op, t, rhs_t, n.clone(), v);
                            lines.push(format!("{n} = {e};"));
                        }
                    },
                    Place::Index(a, idx) => {
                        let mut i = self.expr(idx, lines);
                        if op.is_some() && !is_simple(idx) {
                            let t = self.temp();
                            lines.push(format!("ulong {t} = {i};"));
                            i = t;
                        }
                        let cur = self.read(a, &i);
                        let v = match op {
                            None => v,
                            Some(op) => {
                                let rhs_t = self.scalar(value.ty);
                                self.binary(*op, a.elem, rhs_t, cur, v)
                            }
                        };
                        if a.elem == Scalar::Bool {
                            lines.push(format!("{}[{i}] = (uchar)({v});", a.name));
                        } else {
                            lines.push(format!("{}[{i}] = {v};", a.name));
                        }
                    }
                }
            }
            Stmt::Expr(e) => {
                let v = self.expr(e, lines);
                if !v.is_empty() && !is_simple(e) {
                    lines.push(format!("{v};"));
                }
            }
            Stmt::If { cond, then, els } => {
                let c = strip_outer(self.expr(cond, lines));
                lines.push(format!("if ({c}) {{"));
                let inner = self.sub_block(then);
                indent(lines, inner);
                if let Some(els) = els {
                    lines.push("} else {".into());
                    let inner = self.sub_block(els);
                    indent(lines, inner);
                }
                lines.push("}".into());
            }
            Stmt::While { cond, body, label } => {
                let mut pre = Vec::new();
                let c = strip_outer(self.expr(cond, &mut pre));
                if pre.is_empty() {
                    lines.push(format!("while ({c}) {{"));
                    let inner = self.loop_body(body, label);
                    indent(lines, inner);
                } else {
                    lines.push("for (;;) {".into());
                    let mut inner = pre;
                    inner.push(format!("if (!({c})) break;"));
                    inner.extend(self.loop_body(body, label));
                    indent(lines, inner);
                }
                lines.push("}".into());
                break_target(lines, label);
            }
            Stmt::Loop { body, label } => {
                lines.push("for (;;) {".into());
                let inner = self.loop_body(body, label);
                indent(lines, inner);
                lines.push("}".into());
                break_target(lines, label);
            }
            Stmt::Block(b) => {
                lines.push("{".into());
                let inner = self.sub_block(b);
                indent(lines, inner);
                lines.push("}".into());
            }
            Stmt::For(ForLoop {
                var,
                ty,
                start,
                end,
                inclusive,
                step,
                body,
                label,
            }) => {
                let t = self.scalar(*ty);
                let cl = t.cl();
                let s = self.expr(start, lines);
                let e = self.expr(end, lines);
                let it = self.temp();
                let end_v = self.temp();
                lines.push("{".into());
                let mut inner = vec![format!("const {cl} {end_v} = {e};")];
                let ut = t.cl_unsigned();
                match step {
                    // `a..=b`: a flag decides the end, so `b == MAX` does not overflow, and the
                    // advance is in the `for` increment, so `continue` works.
                    _ if *inclusive => {
                        let done = self.temp();
                        let step_v = self.temp();
                        let sv = match step {
                            Some(st) => self.expr(st, &mut inner),
                            None => "1ul".into(),
                        };
                        inner.push(format!("const ulong {step_v} = max({sv}, 1ul);"));
                        inner.push(format!("{cl} {it} = {s};"));
                        inner.push(format!("bool {done} = !({it} <= {end_v});"));
                        inner.push(format!(
                            "for (; !{done}; {done} = ((ulong)(({ut}){end_v} - ({ut}){it}) < {step_v}), {it} = {done} ? {it} : ({cl})(({ut}){it} + ({ut}){step_v})) {{"
                        ));
                    }
                    None => inner.push(format!("for ({cl} {it} = {s}; {it} < {end_v}; {it}++) {{")),
                    Some(st) => {
                        let sv = self.expr(st, &mut inner);
                        let step_v = self.temp();
                        inner.push(format!("const ulong {step_v} = max({sv}, 1ul);"));
                        // Advance without overflowing: stop once the remaining distance is <= step.
                        inner.push(format!(
                            "for ({cl} {it} = {s}; {it} < {end_v}; {it} = ((ulong)(({ut}){end_v} - ({ut}){it}) > {step_v}) ? ({cl})(({ut}){it} + ({ut}){step_v}) : {end_v}) {{"
                        ));
                    }
                }
                let mut body_lines = vec![format!("{cl} {var} = {it};")];
                body_lines.extend(self.loop_body(body, label));
                indent(&mut inner, body_lines);
                inner.push("}".into());
                indent(lines, inner);
                lines.push("}".into());
                break_target(lines, label);
            }
            Stmt::Break(None) => lines.push("break;".into()),
            Stmt::Continue(None) => lines.push("continue;".into()),
            Stmt::Break(Some(l)) => lines.push(format!("goto {l}_break;")),
            Stmt::Continue(Some(l)) => lines.push(format!("goto {l}_continue;")),
            Stmt::Return(v) => match v {
                Some(v) => {
                    let v = self.expr(v, lines);
                    lines.push(format!("return {v};"));
                }
                None => lines.push("return;".into()),
            },
            Stmt::Barrier => lines.push("barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);".into()),
        }
    }

    /// A loop body; a labelled loop ends it with the target of `continue 'label`.
    fn loop_body(&mut self, body: &Block, label: &Option<String>) -> Vec<String> {
        let mut inner = self.sub_block(body);
        if let Some(l) = label {
            inner.push(format!("{l}_continue: ;"));
        }
        inner
    }

    fn read(&self, a: &ArrayRef, i: &str) -> String {
        if a.elem == Scalar::Bool {
            format!("({}[{i}] != 0)", a.name)
        } else {
            format!("{}[{i}]", a.name)
        }
    }

    fn helper(&mut self, name: String, def: String) -> String {
        self.helpers.entry(name.clone()).or_insert(def);
        name
    }

    /// A binary operation on operands of type `t` (the right one of type `rt` for shifts).
    fn binary(&mut self, op: BinOp, t: Scalar, rt: Scalar, a: String, b: String) -> String {
        let cl = t.cl();
        match op {
            BinOp::Add | BinOp::Sub | BinOp::Mul if t.is_signed_int() => {
                let ut = t.cl_unsigned();
                format!("(({cl})(({ut})({a}) {} ({ut})({b})))", op.c())
            }
            BinOp::Div | BinOp::Rem if t.is_int() => {
                let ut = t.cl_unsigned();
                let (name, body) = match (op, t.is_signed_int()) {
                    (BinOp::Div, true) => (
                        format!("lzc_div_{cl}"),
                        format!("return b == 0 ? ({cl})0 : (b == -1 ? ({cl})(({ut})0 - ({ut})a) : a / b);"),
                    ),
                    (BinOp::Div, false) => (
                        format!("lzc_div_{cl}"),
                        format!("return b == 0 ? ({cl})0 : a / b;"),
                    ),
                    (_, true) => (
                        format!("lzc_rem_{cl}"),
                        format!("return (b == 0 || b == -1) ? ({cl})0 : a % b;"),
                    ),
                    (_, false) => (
                        format!("lzc_rem_{cl}"),
                        format!("return b == 0 ? ({cl})0 : a % b;"),
                    ),
                };
                let def = format!("{cl} {name}({cl} a, {cl} b) {{ {body} }}");
                let f = self.helper(name, def);
                format!("{f}({a}, {b})")
            }
            BinOp::Rem if t.is_float() => format!("fmod({a}, {b})"),
            BinOp::Shl | BinOp::Shr => {
                let mask = t.bits() - 1;
                let sh = if rt.is_int() {
                    format!("(({b}) & {mask})")
                } else {
                    b
                };
                if op == BinOp::Shl && t.is_signed_int() {
                    let ut = t.cl_unsigned();
                    format!("(({cl})(({ut})({a}) << {sh}))")
                } else {
                    format!("(({a}) {} {sh})", op.c())
                }
            }
            _ => format!("({a} {} {b})", op.c()),
        }
    }

    /// An expression's value; statements it needs first go to `pre`. Unit expressions
    /// return an empty string.
    pub fn expr(&mut self, e: &Expr, pre: &mut Vec<String>) -> String {
        match &e.kind {
            ExprKind::Int(v) => {
                let s = self.scalar(e.ty);
                int_literal(*v, s)
            }
            ExprKind::Float(v) => {
                let s = self.scalar(e.ty);
                float_literal(*v, s)
            }
            ExprKind::Bool(b) => (if *b { "true" } else { "false" }).into(),
            ExprKind::Var(n) => match self.inline.as_ref().and_then(|m| m.get(n)) {
                Some(v) => v.clone(),
                None => n.clone(),
            },
            ExprKind::Len(n) => n.clone(),
            ExprKind::Index(a, idx) => {
                let i = self.expr(idx, pre);
                self.read(a, &i)
            }
            ExprKind::Unary(op, v) => {
                let t = self.scalar(e.ty);
                let x = self.expr(v, pre);
                match op {
                    UnOp::Neg if t.is_int() => {
                        let ut = t.cl_unsigned();
                        format!("(({})(({ut})0 - ({ut})({x})))", t.cl())
                    }
                    UnOp::Neg => format!("(-{x})"),
                    UnOp::Not if t == Scalar::Bool => format!("(!{x})"),
                    UnOp::Not => format!("(~{x})"),
                }
            }
            ExprKind::Binary(op @ (BinOp::And | BinOp::Or), a, b) => {
                let x = self.expr(a, pre);
                let mut rpre = Vec::new();
                let y = self.expr(b, &mut rpre);
                if rpre.is_empty() {
                    return format!("({x} {} {y})", op.c());
                }
                let t = self.temp();
                pre.push(format!("bool {t} = {x};"));
                pre.push(format!("if ({}{t}) {{", if *op == BinOp::And { "" } else { "!" }));
                rpre.push(format!("{t} = {y};"));
                indent(pre, rpre);
                pre.push("}".into());
                t
            }
            ExprKind::Binary(op, a, b) => {
                let t = self.scalar(a.ty);
                let rt = self.scalar(b.ty);
                let x = self.expr(a, pre);
                let y = self.expr(b, pre);
                self.binary(*op, t, rt, x, y)
            }
            ExprKind::Cast(v) => {
                let from = self.scalar(v.ty);
                let to = self.scalar(e.ty);
                let x = self.expr(v, pre);
                if from == to || (from.cl() == to.cl() && from != Scalar::Bool) {
                    x
                } else if from.is_float() && to.is_int() {
                    // Saturating, NaN → 0 (some drivers' convert_*_sat map NaN elsewhere).
                    let (f, t) = (from.cl(), to.cl());
                    let name = format!("lzc_{t}_from_{f}");
                    let def =
                        format!("{t} {name}({f} x) {{ return isnan(x) ? ({t})0 : convert_{t}_sat(x); }}");
                    let h = self.helper(name, def);
                    format!("{h}({x})")
                } else {
                    format!("(({})({x}))", to.cl())
                }
            }
            ExprKind::Builtin(b, args) => self.builtin(*b, e.ty, args, pre),
            ExprKind::Call(name, args) => {
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
            ExprKind::Atomic(op, a, idx, vals) => {
                let i = self.expr(idx, pre);
                let mut parts = vec![format!("&{}[{i}]", a.name)];
                for v in vals {
                    parts.push(self.expr(v, pre));
                }
                format!("{}({})", op.c(), parts.join(", "))
            }
            ExprKind::If(c, then, els) => {
                let cond = strip_outer(self.expr(c, pre));
                let mut tl = Vec::new();
                let tv = self.value_block(then, &mut tl);
                let mut el = Vec::new();
                let ev = self.value_block(els, &mut el);
                let ty = self.infer.shallow(e.ty);
                if let (true, true, Some(tv), Some(ev)) = (tl.is_empty(), el.is_empty(), &tv, &ev) {
                    return format!("({cond} ? {tv} : {ev})");
                }
                let t = self.temp();
                let unit = matches!(ty, Ty::Unit | Ty::Never);
                if !unit {
                    let s = self.scalar(e.ty);
                    pre.push(format!("{} {t};", s.cl()));
                }
                pre.push(format!("if ({cond}) {{"));
                if let (Some(v), false) = (tv, unit) {
                    tl.push(format!("{t} = {v};"));
                }
                indent(pre, tl);
                pre.push("} else {".into());
                if let (Some(v), false) = (ev, unit) {
                    el.push(format!("{t} = {v};"));
                }
                indent(pre, el);
                pre.push("}".into());
                if unit {
                    String::new()
                } else {
                    t
                }
            }
            ExprKind::Block(b) => {
                let unit = matches!(self.infer.shallow(e.ty), Ty::Unit | Ty::Never);
                if b.stmts.is_empty() || self.inline.is_some() {
                    for s in &b.stmts {
                        self.stmt(s, pre);
                    }
                    return match &b.tail {
                        Some(t) => self.expr(t, pre),
                        None => String::new(),
                    };
                }
                if unit {
                    let mut inner = Vec::new();
                    self.block(b, &mut inner);
                    pre.push("{".into());
                    indent(pre, inner);
                    pre.push("}".into());
                    return String::new();
                }
                let s = self.scalar(e.ty);
                let t = self.temp();
                pre.push(format!("{} {t};", s.cl()));
                let mut inner = Vec::new();
                if let Some(v) = self.value_block(b, &mut inner) {
                    inner.push(format!("{t} = {v};"));
                }
                pre.push("{".into());
                indent(pre, inner);
                pre.push("}".into());
                t
            }
        }
    }

    fn builtin(&mut self, b: Builtin, ty: Ty, args: &[Expr], pre: &mut Vec<String>) -> String {
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

/// `(a == b)` → `a == b`, for conditions (avoids clang's `-Wparentheses-equality`).
fn strip_outer(s: String) -> String {
    let b = s.as_bytes();
    if b.first() != Some(&b'(') || b.last() != Some(&b')') {
        return s;
    }
    let mut depth = 0i32;
    for (i, c) in b.iter().enumerate() {
        match c {
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 && i + 1 != b.len() {
                    return s;
                }
            }
            _ => {}
        }
    }
    s[1..s.len() - 1].to_string()
}

/// After a labelled loop: the target of `break 'label`.
fn break_target(lines: &mut Vec<String>, label: &Option<String>) {
    if let Some(l) = label {
        lines.push(format!("{l}_break: ;"));
    }
}

fn is_simple(e: &Expr) -> bool {
    matches!(
        e.kind,
        ExprKind::Int(_) | ExprKind::Float(_) | ExprKind::Bool(_) | ExprKind::Var(_) | ExprKind::Len(_)
    )
}

/// The pieces of a translated function.
pub struct FnText {
    /// Helper definitions, each guarded so that several functions of one program can
    /// include them.
    pub helpers: String,
    /// The function itself.
    pub text: String,
    pub uses_f64: bool,
}

/// Emits a kernel (`ret == None` and `kernel`) or a device function.
pub fn function(
    kernel: bool,
    cl_name: &str,
    params: &[Param],
    cnames: &[(String, Option<String>)],
    ret: Option<Scalar>,
    body: &Block,
    infer: &Infer,
) -> FnText {
    let mut em = Emitter::new(infer, ret.is_some());
    let mut decls = Vec::new();
    let mut prologue = Vec::new();
    for (p, (cname, len)) in params.iter().zip(cnames) {
        match p.ty {
            ParamTy::Scalar(Scalar::Bool) if kernel => {
                let raw = format!("lzc_arg_{cname}");
                decls.push(format!("uint {raw}"));
                prologue.push(format!("bool {cname} = {raw} != 0u;"));
            }
            ParamTy::Scalar(s) => {
                let cl = em.cl(s);
                decls.push(format!("{cl} {cname}"));
            }
            ParamTy::Slice { elem, mutable } => {
                em.cl(elem);
                let cl = elem.cl_storage();
                let konst = if mutable { "" } else { "const " };
                let restrict = if kernel { " restrict" } else { "" };
                decls.push(format!("__global {konst}{cl}*{restrict} {cname}"));
                decls.push(format!("ulong {}", len.clone().unwrap_or_default()));
            }
        }
    }
    let mut lines = prologue;
    em.block(body, &mut lines);
    let head = if kernel {
        format!("__kernel void {cl_name}({})", decls.join(", "))
    } else {
        let r = ret.map(|r| em.cl(r)).unwrap_or("void");
        format!(
            "{r} {cl_name}({})",
            if decls.is_empty() {
                "void".to_string()
            } else {
                decls.join(", ")
            }
        )
    };
    let mut text = format!("{head} {{\n");
    for l in lines {
        text.push_str("    ");
        text.push_str(&l);
        text.push('\n');
    }
    text.push_str("}\n");
    let mut helpers = String::new();
    for (name, def) in &em.helpers {
        helpers.push_str(&guarded(&format!("LZC_HELPER_{name}"), def));
    }
    FnText {
        helpers,
        text,
        uses_f64: em.uses_f64,
    }
}

/// The OpenCL C text of an `expr!` expression (one C expression: `let` bindings are
/// inlined), the definitions of the helpers it calls, and whether it uses `double`.
/// `Err` if the expression needs statements (the `expr!` checks rule those out first).
pub fn expression(e: &Expr, infer: &Infer) -> Result<FnText, String> {
    let mut em = Emitter::new(infer, false);
    em.inline = Some(HashMap::new());
    let mut pre = Vec::new();
    let text = em.expr(e, &mut pre);
    if !pre.is_empty() || text.is_empty() {
        return Err(format!(
            "lazycl internal error: this expression needs statements in OpenCL C: {}",
            pre.join(" ")
        ));
    }
    let mut helpers = String::new();
    for (name, def) in &em.helpers {
        helpers.push_str(&guarded(&format!("LZC_HELPER_{name}"), def));
    }
    Ok(FnText {
        helpers,
        text,
        uses_f64: em.uses_f64,
    })
}

/// `#ifndef guard / #define guard / text / #endif`.
pub fn guarded(guard: &str, text: &str) -> String {
    format!("#ifndef {guard}\n#define {guard}\n{}\n#endif\n", text.trim_end())
}

/// Rust never fuses `a * b + c` into one rounding; neither do the kernels.
pub const NO_CONTRACT_PRAGMA: &str = "#pragma OPENCL FP_CONTRACT OFF\n";

pub const FP64_PRAGMA: &str = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_are_exact_and_typed() {
        assert_eq!(int_literal(i32::MIN as i128, Scalar::I32), "(-2147483647 - 1)");
        assert_eq!(int_literal(-5, Scalar::I64), "(-5L)");
        assert_eq!(int_literal(7, Scalar::Usize), "7ul");
        assert_eq!(int_literal(7, Scalar::U32), "7u");
        assert_eq!(float_literal(0.1, Scalar::F32), "0.1f");
        assert_eq!(float_literal(0.1, Scalar::F64), "0.1");
        assert_eq!(float_literal(-2.5, Scalar::F64), "(-2.5)");
        assert_eq!(float_literal(-0.0, Scalar::F32), "(-0.0f)");
        assert_eq!(
            float_literal(f64::NEG_INFINITY, Scalar::F64),
            "(-(double)INFINITY)"
        );
        assert_eq!(float_literal(f64::NAN, Scalar::F32), "NAN");
        assert_eq!(float_literal(std::f64::consts::PI, Scalar::F32), "3.1415927f");
    }

    #[test]
    fn outer_parentheses() {
        assert_eq!(strip_outer("(a == b)".into()), "a == b");
        assert_eq!(strip_outer("(a) == (b)".into()), "(a) == (b)");
        assert_eq!(strip_outer("x".into()), "x");
    }
}
