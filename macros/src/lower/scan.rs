//! Syntactic scans of a body before it is lowered: the device functions it calls and
//! the kernel structs it names, whose signatures and definitions the expansion fetches
//! first (see `resolve`).

use std::collections::HashSet;

use super::names::{is_intrinsic, suggest};
use super::{pattern_idents, strip_parens};

/// Device functions a body calls that are not intrinsics (found syntactically, before
/// type checking, so that their signatures can be fetched first).
pub fn called_functions(body: &syn::Block) -> Vec<syn::Ident> {
    use syn::visit::Visit;
    #[derive(Default)]
    struct V {
        calls: Vec<syn::Ident>,
        locals: HashSet<String>,
    }
    impl<'ast> Visit<'ast> for V {
        fn visit_expr_call(&mut self, c: &'ast syn::ExprCall) {
            if let syn::Expr::Path(p) = strip_parens(&c.func) {
                if let Some(id) = p.path.get_ident() {
                    let n = id.to_string();
                    if !is_intrinsic(&n) && suggest(&n).is_none() && !self.calls.iter().any(|i| *i == n) {
                        self.calls.push(id.clone());
                    }
                }
            }
            syn::visit::visit_expr_call(self, c);
        }
        fn visit_local(&mut self, l: &'ast syn::Local) {
            self.locals.extend(pattern_idents(&l.pat));
            syn::visit::visit_local(self, l);
        }
        fn visit_item(&mut self, i: &'ast syn::Item) {
            if let syn::Item::Fn(f) = i {
                self.locals.insert(f.sig.ident.to_string());
            }
        }
    }
    let mut v = V::default();
    v.visit_block(body);
    let locals = v.locals;
    v.calls
        .into_iter()
        .filter(|c| !locals.contains(&c.to_string()))
        .collect()
}

/// The struct names a body writes literals of (`Params { .. }`) or annotates locals with
/// (`let q: Params = ..`), in first-use order: kernel structs to fetch, like device
/// functions, before translating.
pub fn named_structs(body: &syn::Block) -> Vec<syn::Ident> {
    use syn::visit::Visit;
    #[derive(Default)]
    struct V {
        names: Vec<syn::Ident>,
    }
    impl V {
        fn note(&mut self, id: &syn::Ident) {
            if !self.names.contains(id) {
                self.names.push(id.clone());
            }
        }
    }
    impl<'ast> Visit<'ast> for V {
        fn visit_expr_struct(&mut self, s: &'ast syn::ExprStruct) {
            if let (Some(id), None) = (s.path.get_ident(), &s.qself) {
                self.note(id);
            }
            syn::visit::visit_expr_struct(self, s);
        }
        fn visit_local(&mut self, l: &'ast syn::Local) {
            if let syn::Pat::Type(pt) = &l.pat {
                if let Some(id) = crate::signature::struct_type_name(&pt.ty) {
                    self.note(id);
                }
            }
            syn::visit::visit_local(self, l);
        }
    }
    let mut v = V::default();
    v.visit_block(body);
    v.names
}
