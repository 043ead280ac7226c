//! The instances of a generic function: one copy per combination of its type
//! parameters' types, each parameter replaced by its type wherever the function names it
//! (`x: T`, `&[T]`, `as T`, `T::EPSILON`); their names and the note that says which one
//! an error was found in.

use proc_macro2::Ident;
use syn::visit_mut::VisitMut;

use super::TypeParam;
use crate::ir::Scalar;

/// One instance of a generic function: its types (one per type parameter) and the
/// function with them in place of the parameters, without generics.
pub struct Instance {
    pub types: Vec<Scalar>,
    pub f: syn::ItemFn,
}

/// Every combination of the parameters' types (the first parameter's types outermost),
/// with `f` instantiated for each.
pub fn instances(f: &syn::ItemFn, params: &[TypeParam]) -> Vec<Instance> {
    let mut combos: Vec<Vec<Scalar>> = vec![Vec::new()];
    for p in params {
        combos = combos
            .into_iter()
            .flat_map(|c| {
                p.types.iter().map(move |&t| {
                    let mut c = c.clone();
                    c.push(t);
                    c
                })
            })
            .collect();
    }
    combos
        .into_iter()
        .map(|types| {
            let mut g = f.clone();
            g.sig.generics = syn::Generics::default();
            let mut subst = Substitute {
                names: params.iter().map(|p| p.ident.clone()).collect(),
                types: types.clone(),
            };
            subst.visit_signature_mut(&mut g.sig);
            subst.visit_block_mut(&mut g.block);
            Instance { types, f: g }
        })
        .collect()
}

/// `e` with every path that starts with one of `names` starting with its type of `types`
/// instead (`T::EPSILON` → `f32::EPSILON`, `as T` → `as f32`): an `expr!` over type
/// parameters, lowered once per assignment of element types to them.
pub fn substitute_expr(e: &syn::Expr, names: &[Ident], types: &[Scalar]) -> syn::Expr {
    let mut e = e.clone();
    let mut subst = Substitute {
        names: names.to_vec(),
        types: types.to_vec(),
    };
    subst.visit_expr_mut(&mut e);
    e
}

/// Replaces the first segment of every path that names a type parameter by its type,
/// keeping the span of the user's name (so errors point at it).
struct Substitute {
    names: Vec<Ident>,
    types: Vec<Scalar>,
}

impl VisitMut for Substitute {
    /// `x as T`, `T` a 16-bit float: the type in invisible delimiters, which tells it from
    /// an `as f16` written in the function (no Rust: see `signature::spelled_narrow_float`).
    fn visit_expr_cast_mut(&mut self, c: &mut syn::ExprCast) {
        let param = match &*c.ty {
            syn::Type::Path(p) => p
                .path
                .get_ident()
                .and_then(|id| self.names.iter().position(|n| n == id)),
            _ => None,
        };
        syn::visit_mut::visit_expr_cast_mut(self, c);
        if param.is_some_and(|k| self.types[k].is_narrow_float()) {
            let elem = c.ty.clone();
            *c.ty = syn::Type::Group(syn::TypeGroup {
                group_token: Default::default(),
                elem,
            });
        }
    }

    fn visit_path_mut(&mut self, path: &mut syn::Path) {
        if let Some(first) = path.segments.first_mut() {
            if let Some(k) = self.names.iter().position(|n| *n == first.ident) {
                if first.arguments.is_none() {
                    first.ident = Ident::new(self.types[k].rust(), first.ident.span());
                }
            }
        }
        syn::visit_mut::visit_path_mut(self, path);
    }
}

/// An instance's name: its types joined by `_` (`f32`, `f64_i32`).
pub fn instance_name(types: &[Scalar]) -> String {
    types.iter().map(|t| t.rust()).collect::<Vec<_>>().join("_")
}

/// ` (with T = f32)`: which instance an error was found in.
pub fn instance_note(params: &[TypeParam], types: &[Scalar]) -> String {
    let each: Vec<String> = params
        .iter()
        .zip(types)
        .map(|(p, t)| format!("{} = {}", p.ident, t.rust()))
        .collect();
    format!(" (with {})", each.join(", "))
}
