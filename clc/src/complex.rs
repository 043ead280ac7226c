//! Complex arithmetic in OpenCL C: a `c32` is a `float2` and a `c64` a `double2`, real
//! part in `.x`, imaginary part in `.y`. Addition, subtraction, negation and scaling by a
//! real are the vector types' own; what they do not give is a helper each, with the
//! formulas of the `num-complex` crate, step for step, so that a kernel's result is the
//! host's (programs compile without contraction: no fused multiply-add changes a
//! rounding), edge values (infinities, NaN, signed zeros) included.

use crate::dtype::DType;
use crate::helpers::Helper;

/// A helper over complex type `t`, named `lzc_<what>_<type>`.
fn complex(t: DType, what: &str, params: &str, ret: &str, body: &str) -> Helper {
    let c = t.cl_name();
    Helper::new(format!("lzc_{what}_{c}"), params, ret, body)
}

/// `a * b`: `(a.re b.re - a.im b.im, a.re b.im + a.im b.re)`.
pub fn mul(t: DType) -> Helper {
    let c = t.cl_name();
    complex(
        t,
        "cmul",
        &format!("{c} a, {c} b"),
        c,
        &format!("return ({c})(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);"),
    )
}

/// `a / b`: `a * conj(b) / |b|²`, without rescaling (as `num-complex` divides).
pub fn div(t: DType) -> Helper {
    let c = t.cl_name();
    let r = t.real().cl_name();
    complex(
        t,
        "cdiv",
        &format!("{c} a, {c} b"),
        c,
        &format!(
            "const {r} n = b.x * b.x + b.y * b.y; \
             return ({c})((a.x * b.x + a.y * b.y) / n, (a.y * b.x - a.x * b.y) / n);"
        ),
    )
}

/// `e^z`, with `num-complex`'s cases for an infinite or NaN real part.
pub fn exp(t: DType) -> Helper {
    let c = t.cl_name();
    let r = t.real().cl_name();
    complex(
        t,
        "cexp",
        &format!("{c} z"),
        c,
        &format!(
            "{r} re = z.x, im = z.y; \
             if (isinf(re)) {{ \
               if (re < 0) {{ if (!isfinite(im)) return ({c})(0, 0); }} \
               else if (im == 0 || !isfinite(im)) {{ if (isinf(im)) im = NAN; return ({c})(re, im); }} \
             }} else if (isnan(re) && im == 0) {{ return z; }} \
             const {r} m = exp(re); \
             return ({c})(m * cos(im), m * sin(im));"
        ),
    )
}

/// `ln z = ln|z| + i arg z` (the principal branch).
pub fn ln(t: DType) -> Helper {
    let c = t.cl_name();
    complex(
        t,
        "cln",
        &format!("{c} z"),
        c,
        &format!("return ({c})(log(hypot(z.x, z.y)), atan2(z.y, z.x));"),
    )
}

/// `√z` on the principal branch, with `num-complex`'s cases for a real or imaginary `z`.
pub fn sqrt(t: DType) -> Helper {
    let c = t.cl_name();
    let r = t.real().cl_name();
    complex(
        t,
        "csqrt",
        &format!("{c} z"),
        c,
        &format!(
            "if (z.y == 0) {{ \
               if (!signbit(z.x)) return ({c})(sqrt(z.x), z.y); \
               const {r} im = sqrt(-z.x); \
               return ({c})(0, signbit(z.y) ? -im : im); \
             }} \
             if (z.x == 0) {{ \
               const {r} x = sqrt(fabs(z.y) / 2); \
               return ({c})(x, signbit(z.y) ? -x : x); \
             }} \
             const {r} m = sqrt(hypot(z.x, z.y)), a = atan2(z.y, z.x) / 2; \
             return ({c})(m * cos(a), m * sin(a));"
        ),
    )
}

/// `z^p` of a real power: 1 when `p` is 0, else `|z|^p e^(i p arg z)`.
pub fn powf(t: DType) -> Helper {
    let c = t.cl_name();
    let r = t.real().cl_name();
    complex(
        t,
        "cpowf",
        &format!("{c} z, {r} p"),
        c,
        &format!(
            "if (p == 0) return ({c})(1, 0); \
             const {r} m = pow(hypot(z.x, z.y), p), a = atan2(z.y, z.x) * p; \
             return ({c})(m * cos(a), m * sin(a));"
        ),
    )
}

/// `z^w` of a complex power: 1 when `w` is 0, else `e^(w ln z)`.
pub fn powc(t: DType) -> Helper {
    let c = t.cl_name();
    let (m, e, l) = (mul(t), exp(t), ln(t));
    let body = format!(
        "if (w.x == 0 && w.y == 0) return ({c})(1, 0); return {};",
        e.call(&[&m.call(&["w", &l.call(&["z"])])])
    );
    complex(t, "cpowc", &format!("{c} z, {c} w"), c, &body).after(&[m, e, l])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helpers_are_named_by_type_and_call_what_they_define_first() {
        assert_eq!(mul(DType::C32).name, "lzc_cmul_float2");
        assert_eq!(div(DType::C64).name, "lzc_cdiv_double2");
        assert!(div(DType::C64).definition.contains("const double n"));
        let p = powc(DType::C32);
        for dep in ["lzc_cmul_float2", "lzc_cexp_float2", "lzc_cln_float2"] {
            let at = p.definition.find(&format!("#define LZC_HELPER_{dep}")).unwrap();
            assert!(at < p.definition.find("lzc_cpowc_float2(").unwrap());
        }
    }
}
