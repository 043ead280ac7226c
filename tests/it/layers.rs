//! The floor plan, checked: in `runtime/src`, `macros/src` and `clc/src` a module may use
//! only its own layer and those below (ARCHITECTURE.md, "Layers"); the shared OpenCL C
//! crate (`clc/`, lazycl-clc) sits below both and depends on nothing, and each crate
//! reaches it from its lowest layers that write OpenCL C; the cache key is written in one
//! place. A failure names the file and the import; move the code, do not widen the rule.

use std::path::{Path, PathBuf};

/// The runtime's layers, bottom first: a module of layer `i` may use `crate::` paths of
/// layers `0..=i` only. The crate root (`lib.rs`: declarations and re-exports) is above all.
const RUNTIME_LAYERS: &[&[&str]] = &[
    &["dtype", "stats", "layout", "profile"],
    &["error"],
    &["env"],
    &["backend"],
    &["graph"],
    &["plan"],
    &["codegen"],
    &["exec"],
    &["multi"],
    &["api", "expr"],
    &["dist"],
];

/// The macros' layers, bottom first (macros/src/lib.rs states them).
const MACRO_LAYERS: &[&[&str]] = &[
    &["diag"],
    &["ir"],
    &["signature"],
    &["generics"],
    &["lower"],
    &["emit"],
    &["grad"],
    &["resolve"],
    &["kernel_struct"],
    &["expr"],
    &["function"],
];

/// The shared crate's layers, bottom first (clc/src/lib.rs states them).
const CLC_LAYERS: &[&[&str]] = &[
    &["dtype"],
    &["text"],
    &["helpers"],
    &["complex"],
    &["narrow"],
    &["group"],
];

/// The modules of each crate that name the shared crate (`lazycl_clc`): the element types
/// and OpenCL C text; higher layers reach it through them.
const CLC_USERS: &[(&str, &[&str])] = &[
    ("runtime/src", &["dtype", "codegen"]),
    ("macros/src", &["ir", "emit"]),
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The code of a file without comments and without its `#[cfg(test)]` module (tests may
/// reach anywhere).
fn code(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let text = text.split("#[cfg(test)]").next().unwrap_or("");
    text.lines()
        .map(|l| match l.find("//") {
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The first segments of every `crate::a` path in `code`.
fn crate_paths(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find("crate::") {
        rest = &rest[i + "crate::".len()..];
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        out.push(name);
    }
    out
}

fn layer_of(layers: &[&[&str]], module: &str) -> Option<usize> {
    layers.iter().position(|l| l.contains(&module))
}

#[test]
fn runtime_imports_never_go_up_a_layer() {
    check_layers("runtime/src", RUNTIME_LAYERS);
}

#[test]
fn macro_imports_never_go_up_a_layer() {
    check_layers("macros/src", MACRO_LAYERS);
}

#[test]
fn clc_imports_never_go_up_a_layer() {
    check_layers("clc/src", CLC_LAYERS);
}

#[test]
fn the_shared_crate_is_below_everything() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest = std::fs::read_to_string(root.join("clc/Cargo.toml")).unwrap();
    let deps = manifest.split("[dependencies]").nth(1).unwrap_or("");
    let deps = deps.split("\n[").next().unwrap_or("");
    assert!(
        deps.lines().all(|l| l.trim().is_empty()),
        "clc/ (lazycl-clc) depends on nothing: {deps}"
    );
    let mut wrong = Vec::new();
    for (dir, users) in CLC_USERS {
        let mut files = Vec::new();
        rust_files(&root.join(dir), &mut files);
        for file in &files {
            let rel = file.strip_prefix(root.join(dir)).unwrap();
            let top = rel.iter().next().unwrap().to_string_lossy();
            let top = top.trim_end_matches(".rs");
            if code(file).contains("lazycl_clc") && !users.contains(&top) {
                wrong.push(format!("{dir}/{}", rel.display()));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "only {CLC_USERS:?} name lazycl_clc; also: {wrong:?}"
    );
}

/// Every `crate::` path of every file under `dir` (but the crate root) names a module of
/// its own layer or one below.
fn check_layers(dir: &str, layers: &[&[&str]]) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    let mut wrong = Vec::new();
    for file in &files {
        let rel = file.strip_prefix(&root).unwrap();
        let top = rel
            .iter()
            .next()
            .unwrap()
            .to_string_lossy()
            .trim_end_matches(".rs")
            .to_string();
        if top == "lib" {
            continue;
        }
        let Some(mine) = layer_of(layers, &top) else {
            wrong.push(format!(
                "{}: module `{top}` is in no layer of {dir}",
                rel.display()
            ));
            continue;
        };
        for used in crate_paths(&code(file)) {
            // Lower-case names are modules; capitalised ones are the crate root's re-exports.
            if used.starts_with(|c: char| c.is_ascii_uppercase()) {
                wrong.push(format!(
                    "{}: uses crate::{used}, a re-export of the crate root; import it from its module",
                    rel.display()
                ));
                continue;
            }
            match layer_of(layers, &used) {
                Some(theirs) if theirs <= mine => {}
                Some(_) => wrong.push(format!("{}: uses crate::{used}, a higher layer", rel.display())),
                None => wrong.push(format!(
                    "{}: uses crate::{used}, which is in no layer",
                    rel.display()
                )),
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "imports against the layers:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_cache_key_is_written_in_one_place() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("runtime/src");
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    let writers: Vec<String> = files
        .iter()
        .filter(|f| !f.ends_with("plan/key.rs"))
        .filter(|f| {
            let c = code(f);
            c.contains("key.extend(") || c.contains("key.push(") || c.contains("TAG_")
        })
        .map(|f| f.strip_prefix(&root).unwrap().display().to_string())
        .collect();
    assert!(
        writers.is_empty(),
        "only plan/key.rs writes cache-key words; also: {writers:?}"
    );
}

#[test]
fn kernel_parameters_are_listed_in_one_place() {
    // codegen/abi/ lists every generated kernel's parameters; codegen declares them and
    // exec binds a launch's arguments from that list, never by pushing them in order.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("runtime/src");
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    let listers: Vec<String> = files
        .iter()
        .filter(|f| !f.starts_with(root.join("codegen/abi")))
        .filter(|f| {
            let c = code(f);
            c.contains("args.push(") || c.contains("push(KernelArg") || c.contains("params.push(")
        })
        .map(|f| f.strip_prefix(&root).unwrap().display().to_string())
        .collect();
    assert!(
        listers.is_empty(),
        "only codegen/abi/ lists kernel parameters; also: {listers:?}"
    );
}
