//! Struct values in kernel bodies: `KernelStruct` locals (`let mut q = Params { dt: 0.5,
//! steps: 3 };`, `let q = p;`), their fields written as places (`q.dt = 1.0`, in
//! `place`) and read as values (`expr`). A struct value is only ever bound to a name.

use super::{strip_parens, Binding, Lowerer};
use crate::diag::Spanned;
use crate::ir::*;
use crate::signature::struct_type_name;

impl Lowerer<'_> {
    /// Whether `ty` names a kernel struct the function knows.
    pub(super) fn names_struct(&self, ty: &syn::Type) -> bool {
        struct_type_name(ty).is_some_and(|id| self.structs.iter().any(|s| *id == s.name))
    }

    /// `let [mut] name[: T] = <struct value>;`: a struct local, where `init` is a struct
    /// literal or a struct's name; `false` (nothing done) for any other value.
    pub(super) fn let_struct(
        &mut self,
        pi: &syn::PatIdent,
        ann: Option<&syn::Type>,
        init: &syn::Expr,
        out: &mut Vec<Stmt>,
    ) -> bool {
        let value_of_struct = match strip_parens(init) {
            syn::Expr::Struct(_) => true,
            syn::Expr::Path(p) => p
                .path
                .get_ident()
                .is_some_and(|id| matches!(self.lookup(&id.to_string()), Some(Binding::Struct { .. }))),
            _ => false,
        };
        if value_of_struct && self.kind != crate::signature::FnKind::Kernel {
            self.errors.add(
                init.span(),
                "struct values work in #[kernel] bodies; a #[device_fn] takes the fields it needs",
            );
            self.bind(&pi.ident.to_string(), Binding::Poison);
            return true;
        }
        let (def, value) = match strip_parens(init) {
            syn::Expr::Struct(s) => match self.struct_literal(s) {
                Some((def, fields)) => (def, StructInit::Fields(fields)),
                None => (None, StructInit::Copy(String::new())),
            },
            syn::Expr::Path(p) => match p.path.get_ident().map(|id| self.lookup(&id.to_string()).cloned()) {
                Some(Some(Binding::Struct { cname, def, .. })) => (Some(*def), StructInit::Copy(cname)),
                _ => return false,
            },
            _ => return false,
        };
        // (After an error in the literal, the name is poisoned: uses report nothing more.)
        let name = pi.ident.to_string();
        let Some(def) = def else {
            self.bind(&name, Binding::Poison);
            return true;
        };
        if let Some(t) = ann {
            if struct_type_name(t).is_none_or(|id| *id != def.name) {
                self.errors.add(
                    t.span(),
                    format!(
                        "mismatched types: expected `{}`, found a value of `{}`",
                        quote_ty(t),
                        def.name
                    ),
                );
            }
        }
        if pi.by_ref.is_some() || pi.subpat.is_some() {
            self.errors
                .add(pi.span(), "a struct binds to a plain name: `let q = ...`");
        }
        let cname = self.fresh(&name);
        out.push(Stmt::StructLocal {
            name: cname.clone(),
            cl_type: def.cl_name(),
            init: value,
        });
        self.bind(
            &name,
            Binding::Struct {
                cname,
                def: Box::new(def),
                mutable: pi.mutability.is_some(),
            },
        );
        true
    }

    /// `Name { a: .., b: .. }` of a kernel struct the function knows: every field once,
    /// typed as declared, in the definition's order; `None` after an error.
    fn struct_literal(&mut self, s: &syn::ExprStruct) -> Option<(Option<StructDef>, Vec<Expr>)> {
        let name = match s.path.get_ident() {
            Some(id) if s.qself.is_none() => id.to_string(),
            _ => {
                self.errors.add(
                    s.path.span(),
                    "a struct literal names a KernelStruct: `Params { dt: 0.5, steps: 3 }`",
                );
                return None;
            }
        };
        let Some(def) = self.structs.iter().find(|d| d.name == name).cloned() else {
            self.errors.add(
                s.path.span(),
                format!("`{name}` is not a KernelStruct; derive it: `#[derive(Clone, Copy, KernelStruct)] #[repr(C)] struct {name} {{ .. }}`, defined before the kernel"),
            );
            return None;
        };
        if let Some(rest) = &s.rest {
            self.errors.add(
                rest.span(),
                "struct update syntax (`..base`) is not supported in kernels; name every field",
            );
        }
        let mut values: Vec<Option<Expr>> = vec![None; def.fields.len()];
        let mut ok = true;
        for fv in &s.fields {
            let member = match &fv.member {
                syn::Member::Named(id) => id.to_string(),
                syn::Member::Unnamed(i) => format!("_{}", i.index),
            };
            let value = self.expr(&fv.expr);
            match def.fields.iter().position(|f| f.name == member) {
                Some(k) if values[k].is_none() => {
                    self.unify(
                        Ty::S(def.fields[k].ty),
                        value.ty,
                        value.span,
                        &format!(" in field `{member}`"),
                    );
                    values[k] = Some(value);
                }
                Some(_) => {
                    self.errors
                        .add(fv.member.span(), format!("field `{member}` is given twice"));
                    ok = false;
                }
                None => {
                    let fields: Vec<&str> = def.fields.iter().map(|f| f.name.as_str()).collect();
                    self.errors.add(
                        fv.member.span(),
                        format!(
                            "`{name}` has no field `{member}`; its fields are {}",
                            fields.join(", ")
                        ),
                    );
                    ok = false;
                }
            }
        }
        let missing: Vec<&str> = def
            .fields
            .iter()
            .zip(&values)
            .filter(|(_, v)| v.is_none())
            .map(|(f, _)| f.name.as_str())
            .collect();
        if !missing.is_empty() && s.rest.is_none() {
            self.errors.add(
                s.path.span(),
                format!("missing fields {} in `{name}`", missing.join(", ")),
            );
            ok = false;
        }
        let values: Vec<Expr> = values.into_iter().flatten().collect();
        Some((ok.then_some(def), values))
    }

    /// `q.field` as a place: a field of a `let mut` struct local.
    pub(super) fn field_place(&mut self, f: &syn::ExprField) -> Option<Place> {
        let id = match strip_parens(&f.base) {
            syn::Expr::Path(p) => p.path.get_ident()?.clone(),
            other => {
                self.errors.add(
                    other.span(),
                    "assign to a field of a struct local (`q.dt = ..`) or to a part of a complex variable \
                     (`z.re = ..`); an element of a slice is assigned whole: `a[i] = c32::new(re, a[i].im)`",
                );
                return None;
            }
        };
        let name = id.to_string();
        let (cname, def, mutable) = match self.lookup(&name).cloned() {
            Some(Binding::Struct { cname, def, mutable }) => (cname, def, mutable),
            Some(Binding::Poison) => return None,
            Some(Binding::Scalar {
                cname, ty, mutable, ..
            }) if self.infer.is_complex(ty) => {
                if !mutable {
                    self.errors.add(
                        id.span(),
                        format!("cannot assign to a part of `{name}`: declare it `let mut {name}`"),
                    );
                }
                return self.complex_part_place(f, &cname, ty);
            }
            Some(_) => {
                self.errors.add(id.span(), format!("`{name}` has no fields"));
                return None;
            }
            None => {
                self.errors
                    .add(id.span(), format!("cannot find value `{name}` in this kernel"));
                return None;
            }
        };
        let member = match &f.member {
            syn::Member::Named(m) => m.to_string(),
            syn::Member::Unnamed(i) => format!("_{}", i.index),
        };
        let Some(field) = def.field(&member) else {
            let fields: Vec<&str> = def.fields.iter().map(|f| f.name.as_str()).collect();
            self.errors.add(
                f.member.span(),
                format!(
                    "`{}` has no field `{member}`; its fields are {}",
                    def.name,
                    fields.join(", ")
                ),
            );
            return None;
        };
        if !mutable {
            self.errors.add(
                id.span(),
                format!(
                    "cannot assign to `{name}.{member}`: `{name}` is not mutable; declare the local `let mut {name}`, \
                     or copy a parameter into one: `let mut q = {name};`"
                ),
            );
        }
        Some(Place::Var(format!("{cname}.{member}"), Ty::S(field.ty)))
    }
}

/// A type as written, for messages.
fn quote_ty(t: &syn::Type) -> String {
    quote::quote!(#t).to_string()
}
