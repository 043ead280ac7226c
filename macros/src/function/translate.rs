//! The translation of a function: its attributes and signature checked, its body
//! lowered to the IR and, without errors, emitted as OpenCL C; what the expansions need
//! of it (parameters, callees, `double`).

use proc_macro2::TokenStream;

use crate::diag::{Errors, Spanned};
use crate::emit::{self, FnText};
use crate::generics::ConstParam;
use crate::grad::Why;
use crate::ir::{device_fn_cl_name, DevSig, Param, Scalar, StructDef, Ty};
use crate::lower::names::is_reserved;
use crate::lower::Lowerer;
use crate::resolve::{callee_sources, Deps};
use crate::signature::{self, FnKind};

/// Translated pieces of a function, or the errors that prevented it.
pub(super) struct Translation {
    pub params: Vec<Param>,
    pub ret: Option<Scalar>,
    pub text: Option<FnText>,
    /// Device functions (instances) called, in first-call order.
    pub callees: Vec<DevSig>,
    /// The kernel structs `ParamTy::Struct` indexes.
    pub structs: Vec<StructDef>,
    pub errors: Option<syn::Error>,
}

/// The partial derivatives of one instance of a device function (see `partials`), one
/// per float parameter in order, or why it has none.
pub(super) type Partials = Result<Vec<Partial>, Why>;

/// One partial derivative: its Rust name (`f__grad0`, `f__grad0__f32`) and translation.
pub(super) struct Partial {
    pub name: String,
    pub translation: Translation,
}

/// One instance of a function, translated: its types (one per type parameter; none for a
/// function that is not generic) and the translation.
pub(super) struct Translated {
    pub types: Vec<Scalar>,
    pub translation: Translation,
    /// A device function's partial derivatives (`None` for a kernel).
    pub partials: Option<Partials>,
}

/// Attributes a translated function may carry: the others would be lost (or mean
/// nothing) in OpenCL C.
fn check_attrs(kind: FnKind, f: &syn::ItemFn, errors: &mut Errors) {
    for a in &f.attrs {
        let ok = ["doc", "cfg", "allow", "warn", "deny", "expect"]
            .iter()
            .any(|n| a.path().is_ident(n));
        if !ok {
            errors.add(
                a.span(),
                format!(
                    "unsupported attribute on a {} function (allowed: doc comments, cfg, lint levels)",
                    kind.attr()
                ),
            );
        }
    }
}

pub(super) fn translate_fn(
    kind: FnKind,
    f: &syn::ItemFn,
    consts: &[ConstParam],
    deps: &Deps,
    mut errors: Errors,
) -> Translation {
    check_attrs(kind, f, &mut errors);
    // The kernel structs: those fetched, and a definition per tuple parameter type.
    let mut structs = deps.structs.clone();
    for input in &f.sig.inputs {
        if let syn::FnArg::Typed(pt) = input {
            match signature::tuple_def(&pt.ty) {
                Some(d) if kind == FnKind::Kernel && !structs.contains(&d) => structs.push(d),
                _ => {}
            }
        }
    }
    let sig = signature::signature(f, kind, &structs, &mut errors);
    let mut low = Lowerer::new(kind, sig.ret, &deps.sigs);
    let cnames = low.params(&sig.params, &structs, &sig.rejected);
    // Const parameters: constants the program is built with (`#define`d at bind).
    for c in consts {
        low.declare_operand(&c.ident.to_string(), Ty::S(c.ty), c.cl_name());
    }
    let body = low.body(&f.block);
    low.finish();
    let callees = std::mem::take(&mut low.callees);
    let body_errors = std::mem::take(&mut low.errors);
    if let Some(e) = body_errors.into_error() {
        errors.push(e);
    }
    let text = if errors.is_empty() {
        let cl_name = match kind {
            FnKind::Kernel => kernel_cl_name(&f.sig.ident.to_string()),
            FnKind::DeviceFn => device_fn_cl_name(&f.sig.ident.to_string()),
        };
        let header = emit::Header {
            kernel: kind == FnKind::Kernel,
            cl_name: &cl_name,
            params: &sig.params,
            structs: &structs,
            cnames: &cnames,
            ret: sig.ret,
        };
        Some(emit::function(&header, &body, &low.infer))
    } else {
        None
    };
    Translation {
        params: sig.params,
        ret: sig.ret,
        text,
        callees,
        structs,
        errors: errors.into_error(),
    }
}

/// The OpenCL C name of a kernel: its Rust name unless that is reserved in OpenCL C.
pub(super) fn kernel_cl_name(name: &str) -> String {
    let name = name.trim_start_matches("r#");
    if is_reserved(name) {
        format!("{name}_kernel")
    } else {
        name.to_string()
    }
}

impl Translation {
    /// The `typedef` of each kernel struct the function names (parameters, literals,
    /// tuple parameters).
    pub fn struct_sources(&self) -> Vec<String> {
        self.structs.iter().map(StructDef::typedef).collect()
    }

    /// `callee!(@source)` for each device function called: their OpenCL C sources.
    pub fn callee_sources(&self) -> Vec<TokenStream> {
        callee_sources(self.callees.iter())
    }

    /// Whether the program uses `double`: the function itself or one it calls.
    pub fn uses_f64(&self) -> bool {
        self.text.as_ref().is_some_and(|x| x.uses_f64) || self.callees.iter().any(|c| c.uses_f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::ParamTy;

    /// The OpenCL C text of a kernel, or its error messages.
    pub fn cl_of(src: &str, sigs: &[DevSig]) -> Result<String, Vec<String>> {
        let f: syn::ItemFn = syn::parse_str(src).map_err(|e| vec![e.to_string()])?;
        let kind = if src.contains("-> ") {
            FnKind::DeviceFn
        } else {
            FnKind::Kernel
        };
        let deps = Deps {
            sigs: sigs.to_vec(),
            structs: Vec::new(),
        };
        let t = translate_fn(kind, &f, &[], &deps, Errors::default());
        match (t.errors, t.text) {
            (None, Some(text)) => Ok(format!("{}{}", text.helpers, text.text)),
            (Some(e), _) => Err(e.into_iter().map(|e| e.to_string()).collect()),
            (None, None) => Err(vec!["no text".into()]),
        }
    }

    #[test]
    fn saxpy() {
        let cl = cl_of(
            "fn saxpy(a: f32, x: &[f32], y: &mut [f32]) { let i = global_id(0); if i < y.len() { y[i] = a * x[i] + y[i]; } }",
            &[],
        )
        .unwrap();
        println!("{cl}");
        assert!(cl.contains("__kernel void saxpy(float a, __global const float* restrict x, ulong x_len"));
        assert!(cl.contains("y[i] = ((a * x[i]) + y[i]);"));
    }

    #[test]
    fn literal_inference_follows_use() {
        let cl = cl_of(
            "fn k(y: &mut [f32]) { let mut s = 0.0; s += y[0]; let n = 3; y[n] = s; }",
            &[],
        )
        .unwrap();
        println!("{cl}");
        assert!(cl.contains("float s = 0.0f;"), "{cl}");
        assert!(cl.contains("ulong n = 3ul;"), "{cl}");
    }

    #[test]
    fn value_if_and_blocks_lift() {
        let cl = cl_of(
            "fn k(y: &mut [i32]) { let i = global_id(0); let v = if i > 2 { let t = y[i]; t * 2 } else { 7 }; \
             let w = { let q = v + 1; q * q }; y[i] = if v > w && { let z = 3; z > v } { v } else { w / v }; \
             for j in (0..10).step_by(3) { y[j] %= 5; } while y[0] > 0 { y[0] -= 1; } loop { break; } }",
            &[],
        )
        .unwrap();
        println!("{cl}");
        assert!(cl.contains("lzc_div_int"));
    }

    #[test]
    fn errors_are_collected() {
        let e = cl_of(
            "fn k(x: &[f32], n: i32) { let a = x[0] + 1; let b: f32 = n; x[0] = 2.0; foo(1); }",
            &[],
        )
        .unwrap_err();
        println!("{e:#?}");
        assert_eq!(e.len(), 4, "{e:?}");
    }

    #[test]
    fn device_fn_call() {
        let sig = DevSig {
            name: "sq".into(),
            params: vec![ParamTy::Scalar(Scalar::F32)],
            ret: Some(Scalar::F32),
            uses_f64: false,
            instance: String::new(),
            no_derivative: None,
        };
        let cl = cl_of("fn k(x: &mut [f32]) { x[0] = sq(x[1]) + 1.0; }", &[sig]).unwrap();
        assert!(cl.contains("lzc_fn_sq(x[1ul])"), "{cl}");
        let d = cl_of("fn sq(x: f32) -> f32 { if x > 0.0 { return x * x; } -x }", &[]).unwrap();
        println!("{d}");
        assert!(d.contains("float lzc_fn_sq(float x)"));
    }

    #[test]
    fn a_call_picks_the_instance_of_its_arguments_types() {
        let inst = |s: Scalar| DevSig {
            name: "sq".into(),
            params: vec![ParamTy::Scalar(s)],
            ret: Some(s),
            uses_f64: s == Scalar::F64,
            instance: s.rust().into(),
            no_derivative: None,
        };
        let sigs = [inst(Scalar::F32), inst(Scalar::F64)];
        let cl = cl_of("fn k(x: &mut [f64]) { x[0] = sq(x[1]); }", &sigs).unwrap();
        assert!(cl.contains("lzc_fn_sq__f64(x[1ul])"), "{cl}");
        let cl = cl_of("fn k(x: &mut [f32]) { x[0] = sq(x[1]) * sq(2.0); }", &sigs).unwrap();
        assert!(cl.contains("lzc_fn_sq__f32(x[1ul])"), "{cl}");
        let e = cl_of("fn k(x: &mut [i32]) { x[0] = sq(x[1]); }", &sigs).unwrap_err();
        assert!(
            e[0].contains("no instance of the generic device function `sq` takes (i32)"),
            "{e:?}"
        );
    }

    #[test]
    fn names_are_renamed_for_shadowing_and_opencl_keywords() {
        let cl = cl_of(
            "fn k(y: &mut [f32]) { let x = 1; let x = x as f32; let float = x; let lzc_t1 = float; y[0] = lzc_t1; }",
            &[],
        )
        .unwrap();
        assert!(cl.contains("int x = 1;"), "{cl}");
        assert!(cl.contains("float x_1 = ((float)(x));"), "{cl}");
        assert!(cl.contains("float float_ = x_1;"), "{cl}");
        assert!(cl.contains("float lzc_t1_ = float_;"), "{cl}");
        assert_eq!(kernel_cl_name("dot"), "dot_kernel");
        assert_eq!(kernel_cl_name("float4"), "float4_kernel");
        assert_eq!(kernel_cl_name("saxpy"), "saxpy");
        let cl = cl_of(
            "fn k(y: &mut [f32]) { let length = 1.0; let uint2 = length; y[0] = uint2; }",
            &[],
        )
        .unwrap();
        assert!(cl.contains("float uint2_ = length_;"), "{cl}");
    }

    #[test]
    fn unsuffixed_float_defaults_to_f64() {
        let f =
            syn::parse_str::<syn::ItemFn>("fn k(y: &mut [f32]) { let a = 1.5; y[0] = a as f32; }").unwrap();
        let t = translate_fn(FnKind::Kernel, &f, &[], &Deps::default(), Errors::default());
        assert!(t.text.is_some_and(|t| t.uses_f64));
        let f = syn::parse_str::<syn::ItemFn>("fn k(y: &mut [f32]) { let a = 1.5; y[0] = a; }").unwrap();
        let t = translate_fn(FnKind::Kernel, &f, &[], &Deps::default(), Errors::default());
        assert!(t.text.is_some_and(|t| !t.uses_f64));
    }

    #[test]
    fn suggestions() {
        use crate::lower::names::suggest;
        assert_eq!(
            suggest("global_idx").as_deref(),
            Some("did you mean `global_id`?")
        );
        assert!(suggest("get_group_id").is_some_and(|s| s.contains("group_id(d)")));
        assert!(suggest("exp").is_some_and(|s| s.contains("x.exp(")));
        assert_eq!(suggest("my_helper"), None);
    }
}
