//! The OpenCL C of every `#[kernel]` in the workspace's tests, examples and benches (the
//! compile-fail UI cases aside), recorded in `tests/it/snapshots/kernel_sources.txt`:
//! a change to the translation that changes a program shows here as a diff of the text.
//! `LAZYCL_UPDATE_SNAPSHOTS=1 cargo test -p lazycl-macros snapshot` rewrites the file.
//!
//! Each file is expanded the way rustc would: its `macro_rules!` by a small expander
//! (`rules`), its `#[kernel]`s, `#[device_fn]`s and `#[derive(KernelStruct)]`s by the
//! macros' entry points, the chains through the hidden macros of the device functions and
//! structs (`resolve`) step by step. A kernel's program is what its expansion hands the
//! runtime: the `source` of each `KernelSource` (one per instance of a generic kernel),
//! its `concat!` and `name!(@source ..)` pieces evaluated.

mod rules;

use std::path::{Path, PathBuf};

use proc_macro2::TokenStream;
use quote::ToTokens;
use syn::punctuated::Punctuated;
use syn::visit::Visit;

use crate::function;
use crate::kernel_struct;
use crate::resolve::{Resolved, ResolvedItem};
use crate::signature::FnKind;
use rules::Rules;

/// The snapshot, from the workspace's root.
const SNAPSHOT: &str = "tests/it/snapshots/kernel_sources.txt";

/// The folders scanned, from the workspace's root.
const FOLDERS: &[&str] = &["tests", "examples", "benches"];

/// One file's expansion: the `macro_rules!` seen so far and the kernels' programs.
struct Scan {
    file: String,
    /// The modules around the item visited.
    path: Vec<String>,
    macros: Vec<(String, Rules)>,
    out: String,
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
    fn expand_chain(&self, out: TokenStream) -> syn::File {
        let file: syn::File = syn::parse2(out).expect("an expansion parses as items");
        match &file.items[..] {
            [syn::Item::Macro(m)] if m.ident.is_none() => match self.invoke(&m.mac) {
                Some(next) => self.expand_chain(next),
                None => file,
            },
            _ => file,
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
        match kind {
            FnKind::Kernel => self.record(f, &out),
            FnKind::DeviceFn => self.visit_file(&out),
        }
    }

    /// The programs of a kernel's expansion (or its errors), under a header naming it.
    fn record(&mut self, f: &syn::ItemFn, out: &syn::File) {
        let mut found = Found::default();
        found.visit_file(out);
        let name = self.path.iter().map(|m| format!("{m}::")).collect::<String>() + &f.sig.ident.to_string();
        for e in &found.errors {
            self.out += &format!("==== {}: {name}\nerror: {e}\n", self.file);
        }
        let n = found.sources.len();
        let generic = f.sig.generics.type_params().next().is_some();
        for (k, source) in found.sources.iter().enumerate() {
            let instance = if generic {
                format!(" [{} of {n}]", k + 1)
            } else {
                String::new()
            };
            let text = self.eval(source, &found.consts);
            self.out += &format!("==== {}: {name}{instance}\n{text}\n", self.file);
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
            _ => self.visit_expansion(&m.mac),
        }
    }

    fn visit_stmt_macro(&mut self, m: &'ast syn::StmtMacro) {
        self.visit_expansion(&m.mac);
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
    fn visit_expansion(&mut self, mac: &syn::Macro) {
        let Some(out) = self.invoke(mac) else { return };
        let block: syn::Block = syn::parse2(quote::quote! { { #out } }).unwrap_or_else(|e| {
            panic!(
                "{}: the expansion of `{}!` does not parse: {e}",
                self.file,
                last(&mac.path)
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
        ResolvedItem::Expr(_) => panic!("expr! is not expanded by the snapshot"),
    }
}

/// What a kernel's expansion gives the runtime: the `source` of each `KernelSource`, the
/// consts they may name, and the messages of its `compile_error!`s.
#[derive(Default)]
struct Found {
    sources: Vec<syn::Expr>,
    consts: Vec<(String, syn::Expr)>,
    errors: Vec<String>,
}

impl<'ast> Visit<'ast> for Found {
    fn visit_expr_struct(&mut self, s: &'ast syn::ExprStruct) {
        if last(&s.path) == "KernelSource" {
            let source = s
                .fields
                .iter()
                .find(|f| f.member.to_token_stream().to_string() == "source");
            self.sources
                .push(source.expect("a KernelSource has a source").expr.clone());
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

/// The programs of every kernel of the scanned folders, with their headers.
fn programs(root: &Path) -> String {
    let mut files = Vec::new();
    for folder in FOLDERS {
        rust_files(&root.join(folder), &mut files);
    }
    files.sort();
    let mut all = String::new();
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        if !text.contains("#[kernel") {
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
            out: String::new(),
        };
        scan.visit_file(&ast);
        all += &scan.out;
    }
    all
}

#[test]
fn kernel_programs_match_the_snapshot() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let got = programs(root);
    let path = root.join(SNAPSHOT);
    if std::env::var("LAZYCL_UPDATE_SNAPSHOTS").is_ok_and(|v| v == "1") {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &got).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_default();
    if got != want {
        let actual = std::env::temp_dir().join("lazycl_kernel_sources.txt");
        std::fs::write(&actual, &got).unwrap();
        let line = got.lines().zip(want.lines()).position(|(g, w)| g != w);
        let line = line.unwrap_or(got.lines().count().min(want.lines().count()));
        panic!(
            "the kernels' OpenCL C differs from {SNAPSHOT} from line {}: `{}` (the snapshot has `{}`); \
             the whole text is in {}; rewrite the snapshot with LAZYCL_UPDATE_SNAPSHOTS=1 if the change is meant",
            line + 1,
            got.lines().nth(line).unwrap_or("<end>"),
            want.lines().nth(line).unwrap_or("<end>"),
            actual.display()
        );
    }
}
