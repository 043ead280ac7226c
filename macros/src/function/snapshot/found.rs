//! What an expansion hands the runtime, found in its syntax: the `source` of each
//! `KernelSource` (a kernel's program, one per instance), the `text` and `helpers` of each
//! `ExprTemplate` (an `expr!` variant, a device function's `map`), the consts they may
//! name, and the messages of its `compile_error!`s.

use quote::ToTokens;
use syn::visit::Visit;

use super::last;

/// An `ExprTemplate`: its OpenCL C expression, the helpers and device functions it
/// needs, and the Rust it was written as.
pub(super) struct Template {
    pub(super) text: syn::Expr,
    pub(super) helpers: syn::Expr,
    pub(super) rust: syn::Expr,
}

#[derive(Default)]
pub(super) struct Found {
    pub(super) sources: Vec<syn::Expr>,
    pub(super) templates: Vec<Template>,
    pub(super) consts: Vec<(String, syn::Expr)>,
    pub(super) errors: Vec<String>,
}

/// The field `name` of a struct literal.
fn field(s: &syn::ExprStruct, name: &str) -> syn::Expr {
    let f = s
        .fields
        .iter()
        .find(|f| f.member.to_token_stream().to_string() == name);
    f.unwrap_or_else(|| panic!("`{}` has a field `{name}`", last(&s.path)))
        .expr
        .clone()
}

impl<'ast> Visit<'ast> for Found {
    fn visit_expr_struct(&mut self, s: &'ast syn::ExprStruct) {
        match last(&s.path).as_str() {
            "KernelSource" => self.sources.push(field(s, "source")),
            "ExprTemplate" => self.templates.push(Template {
                text: field(s, "text"),
                helpers: field(s, "helpers"),
                rust: field(s, "rust"),
            }),
            _ => {}
        }
        syn::visit::visit_expr_struct(self, s);
    }

    fn visit_item_const(&mut self, c: &'ast syn::ItemConst) {
        self.consts.push((c.ident.to_string(), (*c.expr).clone()));
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        if last(&m.path) == "compile_error" {
            let msg: syn::LitStr = m.parse_body().expect("compile_error!'s message");
            self.errors.push(msg.value());
        }
    }
}
