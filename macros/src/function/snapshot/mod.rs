//! The OpenCL C of every `#[kernel]` in the workspace's tests, examples and benches (the
//! compile-fail UI cases aside), recorded in `tests/it/snapshots/kernel_sources.txt`, and
//! that of every `expr!` and device function `map` there, in
//! `tests/it/snapshots/expr_templates.txt`: a change to the translation that changes a
//! program shows here as a diff of the text. `LAZYCL_UPDATE_SNAPSHOTS=1 cargo test -p
//! lazycl-macros snapshot` rewrites the files.
//!
//! Each file is expanded the way rustc would: its `macro_rules!` by a small expander
//! (`rules`), its `#[kernel]`s, `#[device_fn]`s, `#[derive(KernelStruct)]`s and `expr!`s
//! by the macros' entry points, the chains through the hidden macros of the device
//! functions and structs (`resolve`) step by step. A program is what the expansion hands
//! the runtime (`found`): the `source` of each `KernelSource` (one per instance of a
//! generic kernel) or the `text` and `helpers` of each `ExprTemplate` (one per variant of
//! an `expr!`), their `concat!` and `name!(@source ..)` pieces evaluated.

mod found;
mod rules;

use std::path::{Path, PathBuf};

use proc_macro2::TokenStream;
use quote::ToTokens;
use syn::punctuated::Punctuated;
use syn::visit::Visit;

use crate::expr;
use crate::function;
use crate::kernel_struct;
use crate::resolve::{Resolved, ResolvedItem};
use crate::signature::FnKind;
use found::Found;
use rules::Rules;

/// The snapshots, from the workspace's root.
const KERNELS: &str = "tests/it/snapshots/kernel_sources.txt";
const EXPRS: &str = "tests/it/snapshots/expr_templates.txt";

/// The folders scanned, from the workspace's root.
const FOLDERS: &[&str] = &["tests", "examples", "benches"];

/// One file's expansion: the `macro_rules!` seen so far, the kernels' programs and the
/// templates of the `expr!`s and device functions.
struct Scan {
    file: String,
    /// The modules around the item visited.
    path: Vec<String>,
    macros: Vec<(String, Rules)>,
    kernels: String,
    exprs: String,
    /// The `expr!`s seen so far.
    count: usize,
}

/// The last segment of a path, as text.
fn last(path: &syn::Path) -> String {
    path.segments
        .last()
        .map(|s| s.ident.to_string())
        .unwrap_or_default()
}

impl Scan {
    /// The expansion of a call of a macro this scan knows (`macro_rules!` seen above, or
    /// `__lazycl_resolved!`); `None` for any other macro.
    fn invoke(&self, mac: &syn::Macro) -> Option<TokenStream> {
        let name = last(&mac.path);
        if name == "__lazycl_resolved" {
            return Some(resolved(mac.tokens.clone()));
        }
        let (_, rules) = self.macros.iter().rev().find(|(n, _)| *n == name)?;
        let out = rules.expand(mac.tokens.clone());
        Some(out.unwrap_or_else(|| panic!("{}: no arm of `{name}!` matches {}", self.file, mac.tokens)))
    }

    /// `out` with the chain of hidden macros it starts (a lone call) expanded to its end.
    fn expand_chain(&self, out: TokenStream) -> TokenStream {
        match syn::parse2::<syn::Macro>(out.clone())
            .ok()
            .and_then(|m| self.invoke(&m))
        {
            Some(next) => self.expand_chain(next),
            None => out,
        }
    }

    /// A function with `#[kernel]` or `#[device_fn]`, expanded; a kernel's programs are
    /// recorded, a device function's hidden macro learnt.
    fn function(&mut self, f: &syn::ItemFn, kind: FnKind, attr: usize) {
        let mut item = f.clone();
        let attr = item.attrs.remove(attr);
        let args = match attr.meta {
            syn::Meta::List(l) => l.tokens,
            _ => TokenStream::new(),
        };
        let out = self.expand_chain(function::entry(kind, args, item.to_token_stream()));
        let out: syn::File = syn::parse2(out).expect("an expansion parses as items");
        let name = self.name(&f.sig.ident.to_string());
        let mut found = Found::default();
        found.visit_file(&out);
        match kind {
            FnKind::Kernel => self.record_kernel(f, &name, &found),
            FnKind::DeviceFn => {
                self.record_templates(&format!("#[device_fn] {name}"), &found);
                self.visit_file(&out);
            }
        }
    }

    /// `item` with the modules around it: `mod_a::mod_b::item`.
    fn name(&self, item: &str) -> String {
        self.path.iter().map(|m| format!("{m}::")).collect::<String>() + item
    }

    /// The programs of a kernel's expansion (or its errors), under a header naming it.
    fn record_kernel(&mut self, f: &syn::ItemFn, name: &str, found: &Found) {
        for e in &found.errors {
            self.kernels += &format!("==== {}: {name}\nerror: {e}\n", self.file);
        }
        let n = found.sources.len();
        let generic = f.sig.generics.type_params().next().is_some();
        for (k, source) in found.sources.iter().enumerate() {
            let instance = match generic {
                true => format!(" [{} of {n}]", k + 1),
                false => String::new(),
            };
            let text = self.eval(source, &found.consts);
            self.kernels += &format!("==== {}: {name}{instance}\n{text}\n", self.file);
        }
    }

    /// The templates of an expansion (or its errors), under headers naming it `what`.
    fn record_templates(&mut self, what: &str, found: &Found) {
        for e in &found.errors {
            self.exprs += &format!("==== {}: {what}\nerror: {e}\n", self.file);
        }
        let n = found.templates.len();
        for (k, t) in found.templates.iter().enumerate() {
            let (rust, text) = (self.eval(&t.rust, &[]), self.eval(&t.text, &[]));
            let helpers = self.eval(&t.helpers, &[]);
            self.exprs += &format!(
                "==== {}: {what} [{} of {n}]\nrust: {rust}\ntext: {text}\n{helpers}\n",
                self.file,
                k + 1
            );
        }
    }

    /// An `expr!`: its templates recorded.
    fn expr_macro(&mut self, mac: &syn::Macro) {
        self.count += 1;
        let out = self.expand_chain(expr::entry(mac.tokens.clone()));
        let out: syn::Expr = syn::parse2(out).expect("an expr! expansion parses as an expression");
        let mut found = Found::default();
        found.visit_expr(&out);
        let what = self.name(&format!("expr! {}", self.count));
        self.record_templates(&what, &found);
    }

    /// A macro call: an `expr!` recorded, one of this file's `macro_rules!` expanded and
    /// visited, any other visited in its arguments where they are expressions
    /// (`assert_eq!(a, b)`).
    fn visit_call(&mut self, mac: &syn::Macro) {
        if last(&mac.path) == "expr" {
            return self.expr_macro(mac);
        }
        if let Some(out) = self.invoke(mac) {
            return self.visit_expansion(&mac.path, out);
        }
        let args = mac.parse_body_with(Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated);
        for e in args.iter().flatten() {
            self.visit_expr(e);
        }
    }

    /// The text of a program's expression: string literals, `concat!`, consts of the
    /// kernel's module and calls of the hidden macros' `@source`.
    fn eval(&self, e: &syn::Expr, consts: &[(String, syn::Expr)]) -> String {
        match e {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) => s.value(),
            syn::Expr::Path(p) => {
                let name = last(&p.path);
                let (_, value) = consts
                    .iter()
                    .find(|(n, _)| *n == name)
                    .expect("a const of the module");
                self.eval(value, consts)
            }
            syn::Expr::Group(g) => self.eval(&g.expr, consts),
            syn::Expr::Block(b) => match &b.block.stmts[..] {
                [syn::Stmt::Expr(e, None)] => self.eval(e, consts),
                [syn::Stmt::Macro(m)] => self.eval_macro(&m.mac, consts),
                other => panic!("unexpected block in a program: {}", other.len()),
            },
            syn::Expr::Macro(m) => self.eval_macro(&m.mac, consts),
            other => panic!("unexpected program piece: {}", other.to_token_stream()),
        }
    }

    fn eval_macro(&self, mac: &syn::Macro, consts: &[(String, syn::Expr)]) -> String {
        if last(&mac.path) == "concat" {
            let parts = mac
                .parse_body_with(Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated)
                .expect("concat!'s arguments");
            return parts.iter().map(|p| self.eval(p, consts)).collect();
        }
        let out = self
            .invoke(mac)
            .unwrap_or_else(|| panic!("unknown macro `{}!`", last(&mac.path)));
        self.eval(&syn::parse2(out).expect("an expression"), consts)
    }
}

impl<'ast> Visit<'ast> for Scan {
    fn visit_item_macro(&mut self, m: &'ast syn::ItemMacro) {
        match &m.ident {
            Some(name) if m.mac.path.is_ident("macro_rules") => {
                self.macros
                    .push((name.to_string(), Rules::parse(m.mac.tokens.clone())));
            }
            _ => self.visit_call(&m.mac),
        }
    }

    fn visit_stmt_macro(&mut self, m: &'ast syn::StmtMacro) {
        self.visit_call(&m.mac);
    }

    fn visit_expr_macro(&mut self, m: &'ast syn::ExprMacro) {
        self.visit_call(&m.mac);
    }

    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        for (k, a) in f.attrs.iter().enumerate() {
            match last(a.path()).as_str() {
                "kernel" => return self.function(f, FnKind::Kernel, k),
                "device_fn" => return self.function(f, FnKind::DeviceFn, k),
                _ => {}
            }
        }
        syn::visit::visit_item_fn(self, f);
    }

    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        self.path.push(m.ident.to_string());
        syn::visit::visit_item_mod(self, m);
        self.path.pop();
    }

    fn visit_item_struct(&mut self, s: &'ast syn::ItemStruct) {
        let derives = s.attrs.iter().filter(|a| a.path().is_ident("derive"));
        if derives
            .into_iter()
            .any(|a| a.meta.to_token_stream().to_string().contains("KernelStruct"))
        {
            let out: syn::File = syn::parse2(kernel_struct::derive(s.to_token_stream())).unwrap();
            self.visit_file(&out);
        }
    }
}

impl Scan {
    /// The items or statements a macro call expands to, visited in its place.
    fn visit_expansion(&mut self, mac: &syn::Path, out: TokenStream) {
        let block: syn::Block = syn::parse2(quote::quote! { { #out } }).unwrap_or_else(|e| {
            panic!(
                "{}: the expansion of `{}!` does not parse: {e}",
                self.file,
                last(mac)
            )
        });
        for stmt in &block.stmts {
            self.visit_stmt(stmt);
        }
    }
}

/// `__lazycl_resolved!` (the end of a chain), as the crate's entry point runs it.
fn resolved(input: TokenStream) -> TokenStream {
    let r: Resolved = syn::parse2(input).expect("the input of __lazycl_resolved!");
    let deps = r.deps().expect("the signatures of a chain");
    match r.item {
        ResolvedItem::Fn(kind, attr, item) => function::resolved(kind, attr, &item, &deps),
        ResolvedItem::Expr(input) => expr::resolved(input, &deps.sigs),
    }
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path.is_dir() {
            rust_files(&path, out);
        } else if name.ends_with(".rs")
            && !(path.components().any(|c| c.as_os_str() == "ui") && name.starts_with("fail_"))
        {
            out.push(path);
        }
    }
}

/// The snapshots' texts: the kernels' programs and the templates, each under a header
/// naming it, file by file.
struct Texts {
    kernels: String,
    exprs: String,
}

/// Every file of the scanned folders, expanded.
fn scan_all(root: &Path) -> Texts {
    let mut files = Vec::new();
    for folder in FOLDERS {
        rust_files(&root.join(folder), &mut files);
    }
    files.sort();
    let mut all = Texts {
        kernels: String::new(),
        exprs: String::new(),
    };
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        if !["#[kernel", "#[device_fn", "expr!"]
            .iter()
            .any(|m| text.contains(m))
        {
            continue;
        }
        let file = path
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let ast = syn::parse_file(&text).unwrap_or_else(|e| panic!("{file}: {e}"));
        let mut scan = Scan {
            file,
            path: Vec::new(),
            macros: Vec::new(),
            kernels: String::new(),
            exprs: String::new(),
            count: 0,
        };
        scan.visit_file(&ast);
        all.kernels += &scan.kernels;
        all.exprs += &scan.exprs;
    }
    all
}

/// Compares `got` with the snapshot `name` (or rewrites it, with
/// `LAZYCL_UPDATE_SNAPSHOTS=1`).
fn check_snapshot(name: &str, got: &str) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let path = root.join(name);
    if std::env::var("LAZYCL_UPDATE_SNAPSHOTS").is_ok_and(|v| v == "1") {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, got).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_default();
    if got != want {
        let file = Path::new(name).file_name().unwrap();
        let actual = std::env::temp_dir().join(format!("lazycl_{}", file.to_string_lossy()));
        std::fs::write(&actual, got).unwrap();
        let line = got.lines().zip(want.lines()).position(|(g, w)| g != w);
        let line = line.unwrap_or(got.lines().count().min(want.lines().count()));
        panic!(
            "the OpenCL C differs from {name} from line {}: `{}` (the snapshot has `{}`); \
             the whole text is in {}; rewrite the snapshot with LAZYCL_UPDATE_SNAPSHOTS=1 if the change is meant",
            line + 1,
            got.lines().nth(line).unwrap_or("<end>"),
            want.lines().nth(line).unwrap_or("<end>"),
            actual.display()
        );
    }
}

#[test]
fn kernel_programs_match_the_snapshot() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    check_snapshot(KERNELS, &scan_all(root).kernels);
}

#[test]
fn expr_templates_match_the_snapshot() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    check_snapshot(EXPRS, &scan_all(root).exprs);
}
