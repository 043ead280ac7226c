//! Values stored narrower than they are computed: the 16-bit floats (`f16`, `bf16`), which
//! live in memory as 16 bits and in a kernel as `float`. Everything a kernel does with
//! memory of an element type goes through here: a load converts to the value type, a
//! store rounds to the nearest 16-bit value (ties to even), and a cast to a 16-bit float
//! rounds the same way in a register. Other types pass through unchanged: their loads and
//! stores are plain `p[i]`.
//!
//! `f16` uses OpenCL C's core `vload_half`/`vstore_half_rte` (a `half` pointer needs no
//! `cl_khr_fp16`); `bf16` is the
//! upper half of an `f32`'s bits, widened by a shift and narrowed by [`bf16_bits`]. A cast
//! in a register rounds through bits ([`f16_bits`], [`f16_value`]), the same function as
//! `half::f16::from_f32`, so host and device agree on every value.

use crate::dtype::DType;
use crate::helpers::Helper;

/// Where generated code's helper calls go: the text of a call of `helper` with `args`,
/// its definition noted for the program (the runtime's codegen and the macros' emitter
/// each keep the definitions a kernel needs).
pub trait CallHelper {
    /// The call's text.
    fn call_helper(&mut self, helper: Helper, args: &[&str]) -> String;
}

/// Element `at` of buffer `p` (of element type `t`) as a value of `t.cl_name()`.
pub fn load(t: DType, p: &str, at: &str) -> String {
    match t {
        DType::F16 => format!("vload_half({at}, {p})"),
        DType::BF16 => format!("as_float((uint){p}[{at}] << 16)"),
        _ => format!("{p}[{at}]"),
    }
}

/// Where a vector access of `w` elements of buffer `p` starts.
#[derive(Debug, Clone, Copy)]
pub enum VectorAt<'a> {
    /// Vector `q` of the buffer (elements `q * w` on), whose address is a multiple of the
    /// vector's size: accessed through a vector pointer, which NVIDIA's compiler turns
    /// into one wide access (it splits a `vload` into elements).
    Vector(&'a str),
    /// Element `at` on, with no more alignment than an element's: `vload`/`vstore`.
    Element(&'a str),
}

/// The `w` elements of buffer `p` (of element type `t`) at `at` as a vector value
/// (`float{w}` for 16-bit floats).
pub fn vector_load(t: DType, w: usize, p: &str, at: VectorAt) -> String {
    match (t, at) {
        // (An offset of 0 and the address in the pointer: at vector offsets, NVIDIA's
        // `vload_half8(q, p)` and `vload_half4(2q + k, p)` ran a chain at 0.58-0.59 of the
        // copy, where `vload_half4(0, p + 4q)` ran at 0.93.)
        (DType::F16, VectorAt::Vector(q)) => format!("vload_half{w}(0, {p} + ({q}) * {w}u)"),
        (DType::F16, VectorAt::Element(e)) => format!("vload_half{w}(0, {p} + {e})"),
        (DType::BF16, at) => format!(
            "as_float{w}(convert_uint{w}({}) << 16)",
            vector_load(DType::U16, w, p, at)
        ),
        (_, VectorAt::Vector(q)) => format!("((__global const {}*){p})[{q}]", t.vector(w)),
        // (A complex number's vector is of its parts: `vload` reads components.)
        (_, VectorAt::Element(e)) if t.is_complex() => {
            let r = t.real().cl_name();
            format!("vload{}(0, (__global const {r}*)({p} + {e}))", 2 * w)
        }
        (_, VectorAt::Element(e)) => format!("vload{w}(0, {p} + {e})"),
    }
}

/// The statement that stores value `v` (of `t.cl_name()`) as element `at` of `p`.
pub fn store(t: DType, p: &str, at: &str, v: &str, calls: &mut impl CallHelper) -> String {
    match t {
        DType::F16 => format!("vstore_half_rte({v}, {at}, {p});"),
        DType::BF16 => format!("{p}[{at}] = {};", calls.call_helper(bf16_bits(1), &[v])),
        _ => format!("{p}[{at}] = {v};"),
    }
}

/// The statement that stores vector value `v` (`w` values of `t.cl_name()`) as the `w`
/// elements of buffer `p` at `at`.
pub fn vector_store(
    t: DType,
    w: usize,
    p: &str,
    at: VectorAt,
    v: &str,
    calls: &mut impl CallHelper,
) -> String {
    match (t, at) {
        (DType::F16, VectorAt::Vector(q)) => format!("vstore_half{w}_rte({v}, 0, {p} + ({q}) * {w}u);"),
        (DType::F16, VectorAt::Element(e)) => format!("vstore_half{w}_rte({v}, 0, {p} + {e});"),
        (DType::BF16, at) => vector_store(
            DType::U16,
            w,
            p,
            at,
            &calls.call_helper(bf16_bits(w), &[v]),
            calls,
        ),
        (_, VectorAt::Vector(q)) => format!("((__global {}*){p})[{q}] = {v};", t.vector(w)),
        (_, VectorAt::Element(e)) if t.is_complex() => {
            let r = t.real().cl_name();
            format!("vstore{}({v}, 0, (__global {r}*)({p} + {e}));", 2 * w)
        }
        (_, VectorAt::Element(e)) => format!("vstore{w}({v}, 0, {p} + {e});"),
    }
}

/// Value `v` of type `from` cast to `to` where `to` is a 16-bit float: a `float` holding
/// the nearest value of `to` (ties to even), rounded once from `v` itself, as Rust's `as`
/// rounds. `None` when `to` is not a 16-bit float.
pub fn cast_to_narrow(from: DType, to: DType, v: &str, calls: &mut impl CallHelper) -> Option<String> {
    if !to.is_stored_narrow() {
        return None;
    }
    let f = match from {
        // Exact in a `float` already (or a 16-bit float's value, which is).
        DType::F32
        | DType::F16
        | DType::BF16
        | DType::Bool
        | DType::I8
        | DType::U8
        | DType::I16
        | DType::U16 => {
            if from == to {
                return Some(v.to_string());
            }
            format!("(float)({v})")
        }
        _ => calls.call_helper(float_odd(from), &[v]),
    };
    let round = match to {
        DType::F16 => Helper::new(
            "lzc_round_f16".into(),
            "float x",
            "float",
            "return lzc_f16_value(lzc_f16_bits(x));",
        )
        .after(&[f16_bits(), f16_value()]),
        _ => Helper::new(
            "lzc_round_bf16".into(),
            "float x",
            "float",
            "return as_float((uint)lzc_bf16_bits(x) << 16);",
        )
        .after(&[bf16_bits(1)]),
    };
    Some(calls.call_helper(round, &[&f]))
}

/// `ushort lzc_bf16_bits(float x)` (`w` 1) or its vector form (`ushort{w}` of `float{w}`):
/// `x` rounded to the nearest `bf16`, ties to even, overflow to infinity; a NaN stays a
/// NaN (quiet).
pub fn bf16_bits(w: usize) -> Helper {
    if w == 1 {
        return Helper::new(
            "lzc_bf16_bits".into(),
            "float x",
            "ushort",
            "const uint u = as_uint(x); \
             return isnan(x) ? (ushort)((u >> 16) | 0x40u) : (ushort)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);",
        );
    }
    Helper::new(
        format!("lzc_bf16_bits{w}"),
        &format!("float{w} x"),
        &format!("ushort{w}"),
        &format!(
            "const uint{w} u = as_uint{w}(x); \
             return convert_ushort{w}(select((u + 0x7fffu + ((u >> 16) & 1u)) >> 16, (u >> 16) | 0x40u, \
             as_uint{w}(isnan(x))));"
        ),
    )
}

/// `ushort lzc_f16_bits(float x)`: `x` rounded to the nearest `f16`, ties to even (to
/// subnormals and zero below the normal range, to infinity above it); a NaN stays a NaN
/// (quiet). The algorithm of `half::f16::from_f32`.
pub fn f16_bits() -> Helper {
    Helper::new(
        "lzc_f16_bits".into(),
        "float f",
        "ushort",
        "const uint x = as_uint(f), s = (x >> 16) & 0x8000u, e = x & 0x7f800000u, m = x & 0x7fffffu; \
         if (e == 0x7f800000u) return (ushort)(s | 0x7c00u | (m != 0u ? 0x200u : 0u) | (m >> 13)); \
         const int he = (int)(e >> 23) - 127 + 15; \
         if (he >= 31) return (ushort)(s | 0x7c00u); \
         if (he <= 0) { \
         if (14 - he > 24) return (ushort)s; \
         const uint mm = m | 0x800000u, shift = (uint)(14 - he), r = 1u << (shift - 1u); \
         const uint hm = mm >> shift; \
         return (ushort)(s | (hm + (((mm & r) != 0u && (mm & (3u * r - 1u)) != 0u) ? 1u : 0u))); } \
         const uint h = s | ((uint)he << 10) | (m >> 13); \
         return (ushort)(h + (((m & 0x1000u) != 0u && (m & 0x2fffu) != 0u) ? 1u : 0u));",
    )
}

/// `float lzc_f16_value(ushort h)`: the value of `f16` bits `h`, exactly.
pub fn f16_value() -> Helper {
    Helper::new(
        "lzc_f16_value".into(),
        "ushort h",
        "float",
        "const uint s = (uint)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu; \
         if (e == 0u) return as_float(s | as_uint((float)m * 0x1p-24f)); \
         if (e == 31u) return as_float(s | 0x7f800000u | (m << 13)); \
         return as_float(s | ((e + 112u) << 23) | (m << 13));",
    )
}

/// `float lzc_float_odd_<from>(x)`: `x` (a 32- or 64-bit integer or an `f64`) as a `float`
/// rounded toward zero, its lowest bit set where that was inexact ("round to odd"), so
/// that rounding it once more to a 16-bit float gives what rounding `x` directly would.
pub fn float_odd(from: DType) -> Helper {
    let c = from.cl_name();
    Helper::new(
        format!("lzc_float_odd_{c}"),
        &format!("{c} x"),
        "float",
        &format!(
            "const float f = convert_float_rtz(x); \
             return ((({c})f == x) || isnan(f)) ? f : as_float(as_uint(f) | 1u);"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Names(Vec<String>);
    impl CallHelper for Names {
        fn call_helper(&mut self, helper: Helper, args: &[&str]) -> String {
            self.0.push(helper.name.clone());
            helper.call(args)
        }
    }

    #[test]
    fn plain_types_pass_through_and_narrow_ones_convert() {
        let mut calls = Names(vec![]);
        assert_eq!(load(DType::F32, "in0", "i"), "in0[i]");
        assert_eq!(store(DType::U8, "out0", "i", "v1", &mut calls), "out0[i] = v1;");
        assert_eq!(load(DType::F16, "in0", "i"), "vload_half(i, in0)");
        assert_eq!(
            store(DType::F16, "out0", "i", "v1", &mut calls),
            "vstore_half_rte(v1, i, out0);"
        );
        assert_eq!(
            store(DType::BF16, "out0", "i", "v1", &mut calls),
            "out0[i] = lzc_bf16_bits(v1);"
        );
        assert_eq!(cast_to_narrow(DType::F32, DType::I32, "v", &mut calls), None);
        assert_eq!(
            cast_to_narrow(DType::F64, DType::BF16, "v", &mut calls).unwrap(),
            "lzc_round_bf16(lzc_float_odd_double(v))"
        );
        assert_eq!(
            cast_to_narrow(DType::BF16, DType::BF16, "v", &mut calls).unwrap(),
            "v"
        );
        assert_eq!(
            calls.0,
            ["lzc_bf16_bits", "lzc_float_odd_double", "lzc_round_bf16"]
        );
    }
}
