//! The helper functions generated code calls where OpenCL C differs from Rust, one
//! implementation each, for the macros' emitter and the runtime's codegen alike.
//!
//! - integer `/` and `%` by zero give 0 instead of trapping (Rust panics; a trap would kill
//!   a CPU device), and `MIN / -1` wraps (`MIN % -1` is 0): [`div`], [`rem`];
//! - integer `pow` wraps, by squaring in the unsigned type: [`pow`];
//! - `signum` of a float keeps NaN and the sign of zero: [`signum`];
//! - `clamp` keeps a NaN operand: [`clamp`];
//! - a float → integer cast saturates and maps NaN to 0, as Rust's `as` (some drivers'
//!   `convert_*_sat` map NaN elsewhere): [`int_from_float`].
//!
//! Each is named `lzc_<what>_<type>` (the macros reserve the `lzc_` prefix: no user name
//! takes it) and its [`Helper::guarded`] definition sits under `#ifndef LZC_HELPER_<name>`,
//! so a program that includes one twice (an `expr!` template's copy beside the runtime's
//! own) compiles it once. Types are numeric (not `bool`) and named by
//! [`DType::cl_name`].

use crate::dtype::DType;
use crate::text::{guarded, wrapping_neg};

/// A helper function: its name and its OpenCL C definition (one line).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Helper {
    pub name: String,
    pub definition: String,
}

impl Helper {
    fn new(name: String, params: &str, ret: &str, body: &str) -> Helper {
        let definition = format!("{ret} {name}({params}) {{ {body} }}");
        Helper { name, definition }
    }

    /// The definition under its include guard, `LZC_HELPER_<name>`.
    pub fn guarded(&self) -> String {
        guarded(&format!("LZC_HELPER_{}", self.name), &self.definition)
    }

    /// A call: `name(args...)`.
    pub fn call(&self, args: &[&str]) -> String {
        format!("{}({})", self.name, args.join(", "))
    }
}

/// `a / b` of integers: 0 when `b == 0`, and `MIN / -1` wraps to `MIN`.
pub fn div(t: DType) -> Helper {
    let c = t.cl_name();
    let body = if t.is_signed() {
        format!(
            "return b == 0 ? ({c})0 : (b == -1 ? {} : a / b);",
            wrapping_neg(t, "a")
        )
    } else {
        format!("return b == 0 ? ({c})0 : a / b;")
    };
    Helper::new(format!("lzc_div_{c}"), &format!("{c} a, {c} b"), c, &body)
}

/// `a % b` of integers: 0 when `b == 0` or `b == -1` (whose remainder is always 0; C's
/// `MIN % -1` overflows).
pub fn rem(t: DType) -> Helper {
    let c = t.cl_name();
    let body = if t.is_signed() {
        format!("return (b == 0 || b == -1) ? ({c})0 : a % b;")
    } else {
        format!("return b == 0 ? ({c})0 : a % b;")
    };
    Helper::new(format!("lzc_rem_{c}"), &format!("{c} a, {c} b"), c, &body)
}

/// `b.pow(e)` of an integer `b` and a `uint` exponent, wrapping.
pub fn pow(t: DType) -> Helper {
    let (c, u) = (t.cl_name(), t.cl_unsigned());
    let body =
        format!("{u} r = 1, x = ({u})b; while (e) {{ if (e & 1u) r *= x; x *= x; e >>= 1; }} return ({c})r;");
    Helper::new(format!("lzc_pow_{c}"), &format!("{c} b, uint e"), c, &body)
}

/// `x.signum()`: floats give ±1 with the sign of `x` (zeros included) and keep NaN;
/// integers give -1, 0 or 1.
pub fn signum(t: DType) -> Helper {
    let c = t.cl_name();
    let body = if t.is_float() {
        format!("return isnan(x) ? x : copysign(({c})1, x);")
    } else if t.is_signed() {
        format!("return ({c})((x > 0) - (x < 0));")
    } else {
        format!("return ({c})(x > 0);")
    };
    Helper::new(format!("lzc_signum_{c}"), &format!("{c} x"), c, &body)
}

/// `x.clamp(lo, hi)`: a NaN `x` stays NaN.
pub fn clamp(t: DType) -> Helper {
    let c = t.cl_name();
    let body = "return x < lo ? lo : (x > hi ? hi : x);";
    Helper::new(
        format!("lzc_clamp_{c}"),
        &format!("{c} x, {c} lo, {c} hi"),
        c,
        body,
    )
}

/// `x as T` from a float type `from` to an integer type `to`: saturating, NaN → 0.
pub fn int_from_float(to: DType, from: DType) -> Helper {
    let (t, f) = (to.cl_name(), from.cl_name());
    let body = format!("return isnan(x) ? ({t})0 : convert_{t}_sat(x);");
    Helper::new(format!("lzc_{t}_from_{f}"), &format!("{f} x"), t, &body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn definitions() {
        let d = div(DType::I32);
        assert_eq!(d.name, "lzc_div_int");
        assert_eq!(
            d.definition,
            "int lzc_div_int(int a, int b) { return b == 0 ? (int)0 : (b == -1 ? (int)((uint)0 - (uint)a) : a / b); }"
        );
        assert_eq!(
            div(DType::U64).definition,
            "ulong lzc_div_ulong(ulong a, ulong b) { return b == 0 ? (ulong)0 : a / b; }"
        );
        assert_eq!(
            rem(DType::I64).definition,
            "long lzc_rem_long(long a, long b) { return (b == 0 || b == -1) ? (long)0 : a % b; }"
        );
        assert_eq!(
            rem(DType::U32).definition,
            "uint lzc_rem_uint(uint a, uint b) { return b == 0 ? (uint)0 : a % b; }"
        );
        assert_eq!(
            pow(DType::I32).definition,
            "int lzc_pow_int(int b, uint e) { uint r = 1, x = (uint)b; while (e) { if (e & 1u) r *= x; x *= x; e >>= 1; } return (int)r; }"
        );
        assert_eq!(
            signum(DType::F32).definition,
            "float lzc_signum_float(float x) { return isnan(x) ? x : copysign((float)1, x); }"
        );
        assert_eq!(
            signum(DType::I64).definition,
            "long lzc_signum_long(long x) { return (long)((x > 0) - (x < 0)); }"
        );
        assert_eq!(
            signum(DType::U32).definition,
            "uint lzc_signum_uint(uint x) { return (uint)(x > 0); }"
        );
        assert_eq!(
            clamp(DType::F64).definition,
            "double lzc_clamp_double(double x, double lo, double hi) { return x < lo ? lo : (x > hi ? hi : x); }"
        );
        assert_eq!(
            int_from_float(DType::I32, DType::F32).definition,
            "int lzc_int_from_float(float x) { return isnan(x) ? (int)0 : convert_int_sat(x); }"
        );
        assert_eq!(
            d.guarded(),
            format!(
                "#ifndef LZC_HELPER_lzc_div_int\n#define LZC_HELPER_lzc_div_int\n{}\n#endif\n",
                d.definition
            )
        );
        assert_eq!(d.call(&["v1", "v2"]), "lzc_div_int(v1, v2)");
    }
}
