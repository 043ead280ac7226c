//! The helper functions generated code calls where OpenCL C differs from Rust, one
//! implementation each, for the macros' emitter and the runtime's codegen alike.
//!
//! - integer `/` and `%` by zero give 0 instead of trapping (Rust panics; a trap would kill
//!   a CPU device), and `MIN / -1` wraps (`MIN % -1` is 0): [`div`], [`rem`];
//! - integer `pow` wraps, by squaring in the unsigned type: [`pow`];
//! - `signum` of a float keeps NaN and the sign of zero: [`signum`];
//! - `clamp` keeps a NaN operand: [`clamp`];
//! - a float → integer cast saturates and maps NaN to 0, as Rust's `as` (some drivers'
//!   `convert_*_sat` map NaN elsewhere): [`int_from_float`];
//! - counter-based random numbers: the Philox4x32-10 rounds ([`philox4x32_10`]), a
//!   stream's counter ([`philox_stream`]), and an element's value from the words of one
//!   call ([`random_value`], drawn as a [`Draw`]), bit-identical on every device for
//!   uniform floats and integers (docs/MATH.md, "Random numbers").
//!
//! Each is named `lzc_<what>_<type>` (the macros reserve the `lzc_` prefix: no user name
//! takes it) and its [`Helper::guarded`] definition sits under `#ifndef LZC_HELPER_<name>`,
//! so a program that includes one twice (an `expr!` template's copy beside the runtime's
//! own) compiles it once. Types are numeric (not `bool`) and named by
//! [`DType::cl_name`].

use crate::dtype::DType;
use crate::text::{from_unsigned, guarded, wrapping_neg};

/// A helper function: its name and its OpenCL C definition (one line, after the guarded
/// definitions of the helpers it calls, if any).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Helper {
    /// The function's name (`lzc_<what>_<type>`).
    pub name: String,
    /// Its OpenCL C definition, after those of the helpers it calls (see the type).
    pub definition: String,
}

impl Helper {
    pub(crate) fn new(name: String, params: &str, ret: &str, body: &str) -> Helper {
        let definition = format!("{ret} {name}({params}) {{ {body} }}");
        Helper { name, definition }
    }

    /// This helper, calling `deps`: their guarded definitions go before its own, so that
    /// its definition stands alone wherever a program puts it (the guards keep each
    /// compiled once).
    pub(crate) fn after(mut self, deps: &[Helper]) -> Helper {
        let mut text: String = deps.iter().map(Helper::guarded).collect();
        text.push_str(&self.definition);
        self.definition = text;
        self
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
    let body = format!(
        "{u} r = 1, x = ({u})b; while (e) {{ if (e & 1u) r *= x; x *= x; e >>= 1; }} return {};",
        from_unsigned(t, "r")
    );
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

/// `#pragma OPENCL EXTENSION {ext} : enable`, as a helper that functions using the
/// extension come after (the runtime checks at bind that the device has each extension a
/// program enables, and says which one it lacks).
pub fn extension(ext: &str) -> Helper {
    Helper {
        name: format!("ext_{ext}"),
        definition: format!("#pragma OPENCL EXTENSION {ext} : enable"),
    }
}

/// The extension OpenCL C 1.2 needs for 64-bit atomics `atom_*` (`extended`: min, max,
/// and, or, xor; else add, sub, xchg, cmpxchg).
pub fn int64_atomics(extended: bool) -> &'static str {
    match extended {
        true => "cl_khr_int64_extended_atomics",
        false => "cl_khr_int64_base_atomics",
    }
}

/// `atomic_add` of a float type `t` (`f32` or `f64`) in `__global` (`local` false) or
/// `__local` memory: a compare-and-swap loop over the value's bits (OpenCL C 1.2 has
/// integer atomics only; `double`'s need `cl_khr_int64_base_atomics`); returns the value
/// before the addition, like the integer atomics.
pub fn atomic_add_float(t: DType, local: bool) -> Helper {
    let space = if local { "__local" } else { "__global" };
    let (c, bits, cas) = match t {
        DType::F64 => ("double", "ulong", "atom_cmpxchg"),
        _ => ("float", "uint", "atomic_cmpxchg"),
    };
    let body = format!(
        "volatile {space} {bits}* q = (volatile {space} {bits}*)p; {bits} old = *q, seen; \
         while ((seen = {cas}(q, old, as_{bits}(as_{c}(old) + v))) != old) old = seen; \
         return as_{c}(old);"
    );
    let helper = Helper::new(
        format!("lzc_atomic_add_{c}_{}", if local { "local" } else { "global" }),
        &format!("volatile {space} {c}* p, {c} v"),
        c,
        &body,
    );
    match t {
        DType::F64 => helper.after(&[extension(int64_atomics(false))]),
        _ => helper,
    }
}

/// The Philox4x32-10 counter-based generator (Salmon et al., "Parallel random numbers: as
/// easy as 1, 2, 3", SC 2011; Random123's constants): ten rounds over a 128-bit counter
/// `c` under a 64-bit key `k`, giving four 32-bit words. Bit-identical on every device
/// (32-bit integer multiplies, `mul_hi`, xors and adds only).
pub fn philox4x32_10() -> Helper {
    let body = "for (uint i = 0u; i < 10u; i++) { \
                const uint h0 = mul_hi(0xD2511F53u, c.x), l0 = 0xD2511F53u * c.x; \
                const uint h1 = mul_hi(0xCD9E8D57u, c.z), l1 = 0xCD9E8D57u * c.z; \
                c = (uint4)(h1 ^ c.y ^ k.x, l1, h0 ^ c.w ^ k.y, l0); \
                k += (uint2)(0x9E3779B9u, 0xBB67AE85u); } \
                return c;";
    Helper::new("lzc_philox4x32_10".into(), "uint4 c, uint2 k", "uint4", body)
}

/// The four words of counter `c` of stream `offset` under `seed`: Philox4x32-10 of the
/// counter `(c low, c high, offset low, offset high)` and the key `(seed low, seed
/// high)`. Streams never share a counter, whatever their lengths.
pub fn philox_stream() -> Helper {
    let body = "return lzc_philox4x32_10((uint4)((uint)c, (uint)(c >> 32), (uint)offset, \
                (uint)(offset >> 32)), (uint2)((uint)seed, (uint)(seed >> 32)));";
    Helper::new(
        "lzc_philox_stream".into(),
        "ulong c, ulong seed, ulong offset",
        "uint4",
        body,
    )
    .after(&[philox4x32_10()])
}

/// What a random element is drawn as, each from the words of one Philox call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Draw {
    /// Uniform in `[0, 1)`: `f32` `(w >> 8) * 2^-24`; `f64` the 64-bit word of two (the
    /// first the low half) `>> 11`, times `2^-53`.
    Uniform,
    /// Standard normal by Box–Muller: a pair of uniforms `u1` in `(0, 1]`, `u2` in `[0, 1)`
    /// gives `sqrt(-2 ln u1) cos(2 pi u2)` to its first element and the `sin` to its second.
    Normal,
    /// Uniform in `[lo, lo + range)`: a 32-bit word (64-bit for 64-bit types, two words)
    /// times `range`, the high half (Lemire's multiply-shift, without rejection), in
    /// unsigned arithmetic.
    Integers,
}

impl Draw {
    /// Words each element takes: 1, or 2 for 64-bit elements and `f64` normals. So
    /// element `i` is drawn from counter `i / (4 / words)`, as its element `i % (4 /
    /// words)`.
    pub fn words(self, t: DType) -> u32 {
        match (self, t.size()) {
            (_, 8) => 2,
            _ => 1,
        }
    }
}

/// The value of element `j` of the elements one Philox call `r` gives (`j < 4 / words`),
/// drawn as `draw` in type `t` (`Draw::Integers`: then `lo` and `range` in `t`'s unsigned
/// type, `range` at least 1).
pub fn random_value(draw: Draw, t: DType) -> Helper {
    if t.size() < 4 {
        return narrow_random_value(draw, t);
    }
    let c = t.cl_name();
    let u = t.cl_unsigned();
    // Word `n` of `r` (`n` a constant where the caller's `j` is).
    let pick = |n: &str, name: &str| {
        format!("const uint {name} = {n} == 0u ? r.x : {n} == 1u ? r.y : {n} == 2u ? r.z : r.w;")
    };
    let pair = |j: &str| {
        format!(
            "{} {} const ulong w = (ulong)w1 << 32 | w0;",
            pick(&format!("(2u * {j})"), "w0"),
            pick(&format!("(2u * {j} + 1u)"), "w1")
        )
    };
    let (params, body) = match (draw, t.size()) {
        (Draw::Uniform, 4) => (
            "uint4 r, uint j".to_string(),
            format!("{} return (float)(w >> 8) * 0x1p-24f;", pick("j", "w")),
        ),
        (Draw::Uniform, _) => (
            "uint4 r, uint j".to_string(),
            format!("{} return (double)(w >> 11) * 0x1p-53;", pair("j")),
        ),
        (Draw::Normal, 4) => (
            "uint4 r, uint j".to_string(),
            format!(
                "{} {} const float u1 = (float)((a >> 8) + 1u) * 0x1p-24f; \
                 const float t = (float)(b >> 8) * 0x1p-23f; \
                 const float m = sqrt(-2.0f * log(u1)); \
                 return (j & 1u) ? m * sinpi(t) : m * cospi(t);",
                pick("(j & 2u)", "a"),
                pick("((j & 2u) + 1u)", "b")
            ),
        ),
        (Draw::Normal, _) => (
            "uint4 r, uint j".to_string(),
            "const double u1 = (double)((((ulong)r.y << 32 | r.x) >> 11) + 1ul) * 0x1p-53; \
             const double t = (double)(((ulong)r.w << 32 | r.z) >> 11) * 0x1p-52; \
             const double m = sqrt(-2.0 * log(u1)); \
             return j ? m * sinpi(t) : m * cospi(t);"
                .to_string(),
        ),
        (Draw::Integers, 4) => (
            format!("uint4 r, uint j, {u} lo, {u} range"),
            format!("{} return ({c})(lo + mul_hi(w, range));", pick("j", "w")),
        ),
        (Draw::Integers, _) => (
            format!("uint4 r, uint j, {u} lo, {u} range"),
            format!("{} return ({c})(lo + mul_hi(w, range));", pair("j")),
        ),
    };
    let what = match draw {
        Draw::Uniform => "uniform",
        Draw::Normal => "normal",
        Draw::Integers => "integers",
    };
    // (Named by the Rust type where two share an OpenCL C value type.)
    let named = if t.is_stored_narrow() || t.size() < 4 {
        t.rust_name()
    } else {
        c
    };
    Helper::new(format!("lzc_random_{what}_{named}"), &params, c, &body)
}

/// [`random_value`] for a type narrower than 32 bits: a 16-bit float drawn uniform from as
/// many bits as it holds (11 and 8), so that no value rounds up to 1 when stored, and
/// normal as an `f32` (rounded where stored); a small integer drawn as 32 bits, the
/// range's ends in `uint`.
fn narrow_random_value(draw: Draw, t: DType) -> Helper {
    let (c, what) = (t.cl_name(), t.rust_name());
    let pick = "const uint w = j == 0u ? r.x : j == 1u ? r.y : j == 2u ? r.z : r.w;";
    match draw {
        Draw::Normal if t.is_float() => random_value(draw, DType::F32),
        Draw::Uniform if t.is_float() => {
            let (shift, scale) = if t == DType::F16 {
                (21, "0x1p-11f")
            } else {
                (24, "0x1p-8f")
            };
            let body = format!("{pick} return (float)(w >> {shift}) * {scale};");
            Helper::new(format!("lzc_random_uniform_{what}"), "uint4 r, uint j", c, &body)
        }
        _ => {
            let body = format!("{pick} return {};", from_unsigned(t, "(lo + mul_hi(w, range))"));
            let params = "uint4 r, uint j, uint lo, uint range";
            Helper::new(format!("lzc_random_integers_{what}"), params, c, &body)
        }
    }
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

    #[test]
    fn random_helpers() {
        let rounds = philox4x32_10();
        assert_eq!(rounds.name, "lzc_philox4x32_10");
        assert!(rounds
            .definition
            .starts_with("uint4 lzc_philox4x32_10(uint4 c, uint2 k) {"));
        // A helper that calls another carries its guarded definition first.
        let stream = philox_stream();
        assert!(stream.definition.starts_with(&rounds.guarded()));
        assert!(stream
            .guarded()
            .starts_with("#ifndef LZC_HELPER_lzc_philox_stream\n"));
        assert_eq!(
            random_value(Draw::Uniform, DType::F32).name,
            "lzc_random_uniform_float"
        );
        assert_eq!(
            random_value(Draw::Integers, DType::I64).definition,
            "long lzc_random_integers_long(uint4 r, uint j, ulong lo, ulong range) { \
             const uint w0 = (2u * j) == 0u ? r.x : (2u * j) == 1u ? r.y : (2u * j) == 2u ? r.z : r.w; \
             const uint w1 = (2u * j + 1u) == 0u ? r.x : (2u * j + 1u) == 1u ? r.y : (2u * j + 1u) == 2u ? r.z : r.w; \
             const ulong w = (ulong)w1 << 32 | w0; return (long)(lo + mul_hi(w, range)); }"
        );
        assert_eq!(
            [DType::F32, DType::F64, DType::U32, DType::U64].map(|t| Draw::Uniform.words(t)),
            [1, 2, 1, 2]
        );
        assert_eq!(Draw::Normal.words(DType::F64), 2);
    }
}
