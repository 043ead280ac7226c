//! Small pieces of OpenCL C text with Rust's semantics, and the text around definitions:
//! the pragmas every program starts with and include guards.
//!
//! The snippets take operands as text and return an expression: every operand must be a
//! primary expression (a name, or parenthesized: the macros pass `(x)`, the runtime its
//! `v{i}` names), and the result is a cast expression, which a caller parenthesizes where
//! it is an operand of a tighter operator.

use crate::dtype::DType;

/// Rust never fuses `a * b + c` into one rounding; neither do the generated programs
/// (`mul_add` does, explicitly).
pub const NO_CONTRACT_PRAGMA: &str = "#pragma OPENCL FP_CONTRACT OFF\n";

/// `double` is an extension in OpenCL C 1.2.
pub const FP64_PRAGMA: &str = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n";

/// The pragmas a program with kernels starts with: no contraction, and `double` when it
/// uses it.
pub fn pragmas(fp64: bool) -> String {
    let mut src = String::from(NO_CONTRACT_PRAGMA);
    if fp64 {
        src.push_str(FP64_PRAGMA);
    }
    src
}

/// `#ifndef guard / #define guard / text / #endif`: a definition a program may include
/// more than once.
pub fn guarded(guard: &str, text: &str) -> String {
    format!("#ifndef {guard}\n#define {guard}\n{}\n#endif\n", text.trim_end())
}

/// `a op b` for `op` one of `+ - *`, wrapping as Rust's `wrapping_*` (computed in the
/// unsigned type of `t`'s width: signed overflow is undefined in C).
/// Types narrower than `int` promote to `int` in C's arithmetic, and a conversion of an
/// out-of-range `int` back to `char` or `short` is implementation-defined: their results
/// are narrowed in the unsigned type and reinterpreted (`as_char`, `as_short`).
pub fn wrapping(t: DType, op: &str, a: &str, b: &str) -> String {
    let u = t.cl_unsigned();
    from_unsigned(t, &format!("(({u}){a} {op} ({u}){b})"))
}

/// `-a`, wrapping (`-MIN == MIN`).
pub fn wrapping_neg(t: DType, a: &str) -> String {
    let u = t.cl_unsigned();
    from_unsigned(t, &format!("(({u})0 - ({u}){a})"))
}

/// `a.abs()` of a signed integer, wrapping (`MIN.abs() == MIN`): OpenCL C's `abs` gives
/// the unsigned type.
pub fn wrapping_abs(t: DType, a: &str) -> String {
    from_unsigned(t, &format!("abs({a})"))
}

/// An unsigned value `u` of `t`'s width (or wider, for the narrow ones, whose arithmetic
/// promotes) as `t`: a cast from 32 bits up, a narrowing and a reinterpretation below.
pub fn from_unsigned(t: DType, u: &str) -> String {
    let c = t.cl_name();
    if t.size() < 4 && t.is_signed_int() {
        format!("as_{c}(({}){u})", t.cl_unsigned())
    } else {
        format!("({c}){u}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snippets() {
        assert_eq!(
            wrapping(DType::I32, "+", "v1", "v2"),
            "(int)((uint)v1 + (uint)v2)"
        );
        assert_eq!(wrapping_neg(DType::I64, "(x)"), "(long)((ulong)0 - (ulong)(x))");
        assert_eq!(wrapping_abs(DType::I32, "v0"), "(int)abs(v0)");
        assert_eq!(
            wrapping(DType::I8, "+", "v1", "v2"),
            "as_char((uchar)((uchar)v1 + (uchar)v2))"
        );
        assert_eq!(wrapping_abs(DType::I16, "v0"), "as_short((ushort)abs(v0))");
        assert_eq!(
            pragmas(true),
            "#pragma OPENCL FP_CONTRACT OFF\n#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
        );
        assert_eq!(guarded("G", "int x;\n"), "#ifndef G\n#define G\nint x;\n#endif\n");
    }
}
