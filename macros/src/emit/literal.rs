//! Literals: the exact, typed OpenCL C text of integer and float values (suffixes,
//! negative values in parentheses, `INT_MIN` without overflow, shortest round-trip float
//! digits, infinities and NaN). A literal of a 16-bit float type is its nearest value of
//! the type (ties to even, as `half::f16::from_f64` rounds), written as a `float`.

use crate::ir::Scalar;

/// The OpenCL C text of a literal of type `s`.
pub fn int_literal(v: i128, s: Scalar) -> String {
    match s {
        Scalar::I32 if v == i32::MIN as i128 => "(-2147483647 - 1)".into(),
        Scalar::I64 if v == i64::MIN as i128 => "(-9223372036854775807L - 1L)".into(),
        Scalar::I32 => paren_neg(v, ""),
        Scalar::I64 => paren_neg(v, "L"),
        Scalar::U32 => format!("{v}u"),
        Scalar::U64 | Scalar::Usize => format!("{v}ul"),
        Scalar::Bool => (if v != 0 { "true" } else { "false" }).into(),
        Scalar::I8 | Scalar::U8 | Scalar::I16 | Scalar::U16 => format!("(({}){v})", s.cl()),
        Scalar::F32 | Scalar::F64 | Scalar::F16 | Scalar::BF16 | Scalar::C32 | Scalar::C64 => {
            float_literal(v as f64, s)
        }
    }
}

fn paren_neg(v: i128, suffix: &str) -> String {
    if v < 0 {
        format!("({v}{suffix})")
    } else {
        format!("{v}{suffix}")
    }
}

/// The OpenCL C text of a float literal of type `s` (exact: shortest round-trip form); of
/// a complex type, the complex number with that real part and a zero imaginary part.
pub fn float_literal(v: f64, s: Scalar) -> String {
    if s.is_complex() {
        let part = s.real();
        return format!(
            "(({})({}, {}))",
            s.cl(),
            float_literal(v, part),
            float_literal(0.0, part)
        );
    }
    let v = match s {
        Scalar::F16 => half::f16::from_f64(v).to_f64(),
        Scalar::BF16 => half::bf16::from_f64(v).to_f64(),
        _ => v,
    };
    let is32 = s != Scalar::F64;
    let cast = if is32 { "" } else { "(double)" };
    if v.is_nan() {
        return format!("{cast}NAN");
    }
    if v.is_infinite() {
        return if v > 0.0 {
            format!("{cast}INFINITY")
        } else {
            format!("(-{cast}INFINITY)")
        };
    }
    let text = if is32 {
        format!("{:?}f", v as f32)
    } else {
        format!("{v:?}")
    };
    if v < 0.0 || (v == 0.0 && v.is_sign_negative()) {
        format!("({text})")
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_are_exact_and_typed() {
        assert_eq!(int_literal(i32::MIN as i128, Scalar::I32), "(-2147483647 - 1)");
        assert_eq!(int_literal(-5, Scalar::I64), "(-5L)");
        assert_eq!(int_literal(7, Scalar::Usize), "7ul");
        assert_eq!(int_literal(7, Scalar::U32), "7u");
        assert_eq!(float_literal(0.1, Scalar::F32), "0.1f");
        assert_eq!(float_literal(0.1, Scalar::F64), "0.1");
        assert_eq!(float_literal(-2.5, Scalar::F64), "(-2.5)");
        assert_eq!(float_literal(-0.0, Scalar::F32), "(-0.0f)");
        assert_eq!(
            float_literal(f64::NEG_INFINITY, Scalar::F64),
            "(-(double)INFINITY)"
        );
        assert_eq!(float_literal(f64::NAN, Scalar::F32), "NAN");
        assert_eq!(float_literal(std::f64::consts::PI, Scalar::F32), "3.1415927f");
        assert_eq!(float_literal(0.1, Scalar::F16), "0.099975586f");
        assert_eq!(float_literal(0.1, Scalar::BF16), "0.100097656f");
        assert_eq!(float_literal(1e6, Scalar::F16), "INFINITY");
        assert_eq!(int_literal(-3, Scalar::I8), "((char)-3)");
        assert_eq!(int_literal(200, Scalar::U8), "((uchar)200)");
        assert_eq!(float_literal(2.0, Scalar::C32), "((float2)(2.0f, 0.0f))");
    }
}
