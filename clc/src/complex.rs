//! Complex arithmetic in OpenCL C: a `c32` is a `float2` and a `c64` a `double2`, real
//! part in `.x`, imaginary part in `.y`. Addition, subtraction, negation and scaling by a
//! real are the vector types' own; what they do not give is a helper each, with the
//! formulas of the `num-complex` crate, step for step, so that a kernel's result is the
//! host's (programs compile without contraction: no fused multiply-add changes a
//! rounding), edge values (infinities, NaN, signed zeros) included. The macros also call
//! a helper for each operation that reads a part of an operand twice (a real beside a
//! complex number, `conj`, `norm`, equality, the tests), so that each operand is
//! evaluated once wherever it appears.

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

/// `a == b`: both parts equal (`num-complex`'s derived `PartialEq`), as a `bool`.
pub fn eq(t: DType) -> Helper {
    let c = t.cl_name();
    complex(
        t,
        "ceq",
        &format!("{c} a, {c} b"),
        "bool",
        "return a.x == b.x && a.y == b.y;",
    )
}

/// `z + x` of a real `x` (and `x + z`, the same sum): `(z.re + x, z.im)`.
pub fn add_real(t: DType) -> Helper {
    let (c, r) = (t.cl_name(), t.real().cl_name());
    complex(
        t,
        "caddr",
        &format!("{c} z, {r} x"),
        c,
        &format!("return ({c})(z.x + x, z.y);"),
    )
}

/// `z - x` of a real `x`: `(z.re - x, z.im)`.
pub fn sub_real(t: DType) -> Helper {
    let (c, r) = (t.cl_name(), t.real().cl_name());
    complex(
        t,
        "csubr",
        &format!("{c} z, {r} x"),
        c,
        &format!("return ({c})(z.x - x, z.y);"),
    )
}

/// `x - z` of a real `x`: `(x - z.re, 0 - z.im)` (a zero imaginary part stays `+0`).
pub fn real_sub(t: DType) -> Helper {
    let (c, r) = (t.cl_name(), t.real().cl_name());
    complex(
        t,
        "crsub",
        &format!("{r} x, {c} z"),
        c,
        &format!("return ({c})(x - z.x, ({r})0 - z.y);"),
    )
}

/// `x / z` of a real `x`: `(x z.re / |z|², 0 - x z.im / |z|²)`.
pub fn real_div(t: DType) -> Helper {
    let (c, r) = (t.cl_name(), t.real().cl_name());
    complex(
        t,
        "crdiv",
        &format!("{r} x, {c} z"),
        c,
        &format!(
            "const {r} n = z.x * z.x + z.y * z.y; \
             return ({c})(x * z.x / n, ({r})0 - x * z.y / n);"
        ),
    )
}

/// `z.conj()`: `(z.re, -z.im)`.
pub fn conj(t: DType) -> Helper {
    let c = t.cl_name();
    complex(
        t,
        "cconj",
        &format!("{c} z"),
        c,
        &format!("return ({c})(z.x, -z.y);"),
    )
}

/// `z.norm()`, the magnitude: `hypot(z.re, z.im)`.
pub fn norm(t: DType) -> Helper {
    let (c, r) = (t.cl_name(), t.real().cl_name());
    complex(t, "cnorm", &format!("{c} z"), r, "return hypot(z.x, z.y);")
}

/// `z.norm_sqr()`: `z.re² + z.im²`.
pub fn norm_sqr(t: DType) -> Helper {
    let (c, r) = (t.cl_name(), t.real().cl_name());
    complex(
        t,
        "cnormsqr",
        &format!("{c} z"),
        r,
        "return z.x * z.x + z.y * z.y;",
    )
}

/// `z.arg()`, the angle: `atan2(z.im, z.re)`, in `[-π, π]`.
pub fn arg(t: DType) -> Helper {
    let (c, r) = (t.cl_name(), t.real().cl_name());
    complex(t, "carg", &format!("{c} z"), r, "return atan2(z.y, z.x);")
}

/// `z.inv()`, `1 / z`: `(z.re / |z|², -z.im / |z|²)`.
pub fn inv(t: DType) -> Helper {
    let (c, r) = (t.cl_name(), t.real().cl_name());
    complex(
        t,
        "cinv",
        &format!("{c} z"),
        c,
        &format!("const {r} n = z.x * z.x + z.y * z.y; return ({c})(z.x / n, -z.y / n);"),
    )
}

/// `Complex::from_polar(r, theta)`: `(r cos θ, r sin θ)`.
pub fn from_polar(t: DType) -> Helper {
    let (c, r) = (t.cl_name(), t.real().cl_name());
    complex(
        t,
        "cpolar",
        &format!("{r} m, {r} a"),
        c,
        &format!("return ({c})(m * cos(a), m * sin(a));"),
    )
}

/// `z.is_nan()`: either part is NaN.
pub fn is_nan(t: DType) -> Helper {
    let c = t.cl_name();
    complex(
        t,
        "cisnan",
        &format!("{c} z"),
        "bool",
        "return isnan(z.x) || isnan(z.y);",
    )
}

/// `z.is_infinite()`: no part is NaN and one is infinite.
pub fn is_infinite(t: DType) -> Helper {
    let c = t.cl_name();
    complex(
        t,
        "cisinf",
        &format!("{c} z"),
        "bool",
        "return !(isnan(z.x) || isnan(z.y)) && (isinf(z.x) || isinf(z.y));",
    )
}

/// `z.is_finite()`: both parts are finite.
pub fn is_finite(t: DType) -> Helper {
    let c = t.cl_name();
    complex(
        t,
        "cisfinite",
        &format!("{c} z"),
        "bool",
        "return isfinite(z.x) && isfinite(z.y);",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helpers_are_named_by_type_and_call_what_they_define_first() {
        assert_eq!(mul(DType::C32).name, "lzc_cmul_float2");
        assert_eq!(div(DType::C64).name, "lzc_cdiv_double2");
        assert!(div(DType::C64).definition.contains("const double n"));
        assert_eq!(
            real_sub(DType::C32).definition,
            "float2 lzc_crsub_float2(float x, float2 z) { return (float2)(x - z.x, (float)0 - z.y); }"
        );
        assert!(eq(DType::C64)
            .definition
            .starts_with("bool lzc_ceq_double2(double2 a, double2 b)"));
        assert!(norm(DType::C64)
            .definition
            .starts_with("double lzc_cnorm_double2(double2 z)"));
        assert!(from_polar(DType::C32)
            .definition
            .starts_with("float2 lzc_cpolar_float2(float m, float a)"));
        let p = powc(DType::C32);
        for dep in ["lzc_cmul_float2", "lzc_cexp_float2", "lzc_cln_float2"] {
            let at = p.definition.find(&format!("#define LZC_HELPER_{dep}")).unwrap();
            assert!(at < p.definition.find("lzc_cpowc_float2(").unwrap());
        }
    }
}
