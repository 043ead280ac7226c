//! Kernels and device functions with complex numbers (`c32`, `c64`), translated: the
//! OpenCL C of their operators, constructors, parts and methods, and the errors for what
//! Rust rejects. (Their results against `num-complex` are checked on a device by
//! `tests/it/kernel_complex.rs`.)

use super::translate::translate_fn;
use crate::diag::Errors;
use crate::resolve::Deps;
use crate::signature::FnKind;

/// The OpenCL C text (helpers, then the function) of a kernel, or its error messages.
fn cl_of(src: &str) -> Result<String, Vec<String>> {
    let f: syn::ItemFn = syn::parse_str(src).map_err(|e| vec![e.to_string()])?;
    let kind = match src.contains("-> ") {
        true => FnKind::DeviceFn,
        false => FnKind::Kernel,
    };
    let t = translate_fn(kind, &f, &[], &Deps::default(), Errors::default());
    match (t.errors, t.text) {
        (None, Some(text)) => Ok(format!("{}{}", text.helpers, text.text)),
        (Some(e), _) => Err(e.into_iter().map(|e| e.to_string()).collect()),
        (None, None) => Err(vec!["no text".into()]),
    }
}

#[test]
fn products_and_quotients_call_the_helpers() {
    let cl = cl_of(
        "fn k(a: &[c32], b: &[Complex32], out: &mut [c32]) { let i = global_id(0); \
         out[i] = a[i] * b[i] + a[i] / b[i] - a[i]; }",
    )
    .unwrap();
    assert!(
        cl.contains("__kernel void k(__global const float2* restrict a, ulong a_len, __global const float2* restrict b"),
        "{cl}"
    );
    assert!(
        cl.contains("out[i] = ((lzc_cmul_float2(a[i], b[i]) + lzc_cdiv_float2(a[i], b[i])) - a[i]);"),
        "{cl}"
    );
    assert!(cl.contains("#ifndef LZC_HELPER_lzc_cmul_float2"), "{cl}");
}

#[test]
fn reals_beside_complex_numbers_follow_num_complex() {
    let cl = cl_of(
        "fn k(z: c64, x: f64, out: &mut [c64]) { out[0] = z * x + x * z; out[1] = z + x; out[2] = x + z; \
         out[3] = z - x; out[4] = x - z; out[5] = z / x; out[6] = x / z; out[7] = z * 2.0 - 1.5; }",
    )
    .unwrap();
    assert!(cl.contains("out[0ul] = ((z * x) + (x * z));"), "{cl}");
    assert!(cl.contains("out[1ul] = lzc_caddr_double2(z, x);"), "{cl}");
    assert!(cl.contains("out[2ul] = lzc_caddr_double2(z, x);"), "{cl}");
    assert!(cl.contains("out[3ul] = lzc_csubr_double2(z, x);"), "{cl}");
    assert!(cl.contains("out[4ul] = lzc_crsub_double2(x, z);"), "{cl}");
    assert!(cl.contains("out[5ul] = (z / x);"), "{cl}");
    assert!(cl.contains("out[6ul] = lzc_crdiv_double2(x, z);"), "{cl}");
    // A float literal beside a complex number is a real of its parts' type.
    assert!(
        cl.contains("out[7ul] = lzc_csubr_double2((z * 2.0), 1.5);"),
        "{cl}"
    );
}

#[test]
fn constructors_parts_and_methods() {
    let cl = cl_of(
        "fn k(x: &[f32], out: &mut [c32], r: &mut [f32]) { let i = global_id(0); \
         let mut z = c32::new(x[i], 1.0); let w = Complex::new(2.0f32, x[i]); \
         let p = Complex32::from_polar(x[i], 0.5); z.im = z.re + w.im; z *= 2.0; \
         out[i] = z.conj() + w.exp() + p.powf(2.0) + p.powc(w) + z.inv() + w.scale(3.0); \
         r[i] = z.norm() + w.norm_sqr() + p.arg() + (z.ln() - w.sqrt()).re; }",
    )
    .unwrap();
    assert!(cl.contains("float2 z = ((float2)(x[i], 1.0f));"), "{cl}");
    assert!(cl.contains("float2 w = ((float2)(2.0f, x[i]));"), "{cl}");
    assert!(cl.contains("float2 p = lzc_cpolar_float2(x[i], 0.5f);"), "{cl}");
    assert!(cl.contains("z.y = (z.x + w.y);"), "{cl}");
    assert!(cl.contains("z = (z * 2.0f);"), "{cl}");
    assert!(
        cl.contains("(lzc_cln_float2(z) - lzc_csqrt_float2(w))).x"),
        "{cl}"
    );
    for h in [
        "cconj", "cexp", "cpowf", "cpowc", "cinv", "cnorm", "cnormsqr", "carg",
    ] {
        assert!(cl.contains(&format!("lzc_{h}_float2(")), "{h}: {cl}");
    }
    assert!(cl.contains("(w * 3.0f)"), "{cl}");
}

#[test]
fn complex_parts_default_to_f64_like_their_literals() {
    let cl = cl_of("fn k(out: &mut [c64]) { let z = Complex::new(1.0, 2.0); out[0] = z; }").unwrap();
    assert!(cl.contains("double2 z = ((double2)(1.0, 2.0));"), "{cl}");
    let cl = cl_of("fn k(out: &mut [c32]) { let z = Complex::new(1.0, 2.0); out[0] = z * c32::I; }").unwrap();
    assert!(cl.contains("float2 z = ((float2)(1.0f, 2.0f));"), "{cl}");
    assert!(!cl.contains("double"), "{cl}");
}

#[test]
fn equality_tests_and_scalar_parameters() {
    let cl = cl_of(
        "fn k(a: &[c64], s: c64, m: &mut [u32]) { let i = global_id(0); \
         m[i] = (a[i] == s) as u32 + (a[i] != s) as u32 * 2 + a[i].is_nan() as u32 * 4 \
         + a[i].is_finite() as u32 * 8 + a[i].is_infinite() as u32 * 16; }",
    )
    .unwrap();
    assert!(cl.contains("double2 s"), "{cl}");
    assert!(cl.contains("lzc_ceq_double2(a[i], s)"), "{cl}");
    assert!(cl.contains("(!lzc_ceq_double2(a[i], s))"), "{cl}");
    assert!(cl.contains("cl_khr_fp64") || cl.contains("double"), "{cl}");
}

#[test]
fn what_rust_rejects_is_an_error() {
    let errors = |src: &str| cl_of(src).unwrap_err().join("\n");
    let e = errors("fn k(a: &[c32], out: &mut [f32]) { out[0] = a[0] as f32; }");
    assert!(
        e.contains("casting `c32` as `f32` is invalid") && e.contains("`z.re`"),
        "{e}"
    );
    let e = errors("fn k(a: &[f32], out: &mut [c32]) { out[0] = a[0] as c32; }");
    assert!(e.contains("write `c32::new(x, 0.0)`"), "{e}");
    let e = errors("fn k(a: &[c32], out: &mut [u32]) { out[0] = (a[0] < a[1]) as u32; }");
    assert!(e.contains("complex numbers have no order"), "{e}");
    let e = errors("fn k(a: &mut [c32]) { a[0] = a[0] % a[1]; }");
    assert!(e.contains("`%` cannot be applied to `c32`"), "{e}");
    let e = errors("fn k(a: &mut [c32], x: f64) { a[0] = a[0] * x; }");
    assert!(e.contains("real number of its parts' type `f32`"), "{e}");
    let e = errors("fn k(a: &mut [c32], b: &[c64]) { a[0] = a[0] + b[0]; }");
    assert!(e.contains("expected `c32`, found `c64`"), "{e}");
    let e = errors("fn k(a: &mut [f32], z: c32) { let mut x = a[0]; x *= z; a[0] = x; }");
    assert!(
        e.contains("mismatched types in `*=`: expected `f32`, found `c32`"),
        "{e}"
    );
    let e = errors("fn k(a: &mut [c32]) { a[0] = a[0] * 2; }");
    assert!(e.contains("found `{integer}`"), "{e}");
    let e = errors("fn k(a: &mut [f32], z: c32) { a[0] = z.abs(); }");
    assert!(e.contains("is `norm()`"), "{e}");
    let e = errors("fn k(a: &mut [f32], x: f32) { a[0] = x.re; }");
    assert!(e.contains("no field `re` on type `f32`"), "{e}");
    let e = errors("fn k(a: &mut [c32]) { a[0].re = 1.0; }");
    assert!(e.contains("an element of a slice is assigned whole"), "{e}");
    let e = errors("fn k(a: &mut [c32]) { let z = a[0]; z.re = 1.0; a[0] = z; }");
    assert!(e.contains("declare it `let mut z`"), "{e}");
    let e = errors("fn k(a: &mut [c32]) { a[0] = c32::new(1, 2); }");
    assert!(e.contains("expected `f32`, found `{integer}`"), "{e}");
    let e = errors("fn k(a: &mut [c32], n: &mut [i32]) { atomic_add(&mut a[0], a[1]); }");
    assert!(e.contains("not `c32`"), "{e}");
}

#[test]
fn device_functions_take_and_return_complex_numbers() {
    let cl = cl_of("fn rotate(z: c32, t: f32) -> c32 { z * Complex32::from_polar(1.0, t) }").unwrap();
    assert!(cl.contains("float2 lzc_fn_rotate(float2 z, float t)"), "{cl}");
    assert!(
        cl.contains("return lzc_cmul_float2(z, lzc_cpolar_float2(1.0f, t));"),
        "{cl}"
    );
}
