//! Errors in the user's words: the operation the user called (not the internal node it
//! became), both shapes and what they fail to do; and a `Debug` that prints as readably
//! as `Display`, since `fn main() -> lazycl::Result<()>` shows the `Debug`.

use lazycl::prelude::*;

/// The error's text without its "(recorded at file:line:col)", which
/// `tests/it/recorded_at.rs` checks.
fn message<T: Element>(a: &Array<T>) -> String {
    let text = a.to_vec().unwrap_err().to_string();
    match (text.find(" (recorded at "), text.find("): ")) {
        (Some(at), Some(end)) if end > at => format!("{}{}", &text[..at], &text[end + 1..]),
        _ => text,
    }
}

#[test]
fn products_name_the_call_and_the_lengths_that_differ() {
    let ctx = Context::new().unwrap();
    let v3 = ctx.from_slice(&[1.0f32, 2.0, 3.0]).unwrap();
    let v2 = ctx.from_slice(&[1.0f32, 2.0]).unwrap();
    let m23 = ctx.from_shape_slice((2, 3), &[1.0f32; 6]).unwrap();
    assert_eq!(
        message(&v3.dot(&v2)),
        "shape mismatch in dot: [3] and [2] do not fit: the vectors' lengths differ (3 and 2)"
    );
    assert_eq!(
        message(&m23.dot(&m23)),
        "shape mismatch in dot: [2, 3] and [2, 3] do not fit: the left operand's 3 columns differ from the right one's 2 rows"
    );
    assert_eq!(
        message(&m23.matmul(&v2)),
        "shape mismatch in matmul: [2, 3] and [2] do not fit: the matrix's 3 columns differ from the vector's length, 2"
    );
    assert_eq!(
        message(&v2.dot(&m23.t())),
        "shape mismatch in dot: [2] and [3, 2] do not fit: the vector's length, 2, differs from the matrix's 3 rows"
    );
    let b = ctx.from_shape_slice((2, 3, 3), &[1.0f32; 18]).unwrap();
    let c = ctx.from_shape_slice((3, 3, 3), &[1.0f32; 27]).unwrap();
    assert!(message(&b.matmul(&c)).contains("the batch axes [2] and [3] cannot be broadcast together"));
}

#[test]
fn operators_and_assign_name_themselves() {
    let ctx = Context::new().unwrap();
    let v3 = ctx.from_slice(&[1i32, 2, 3]).unwrap();
    let v2 = ctx.from_slice(&[1i32, 2]).unwrap();
    assert_eq!(
        message(&(&v3 + &v2)),
        "shape mismatch in `+`: [3] and [2] cannot be broadcast together (trailing axes must be equal, or 1)"
    );
    assert!(message(&(&v3 * &v2)).starts_with("shape mismatch in `*`: [3] and [2]"));
    assert!(message(&v3.lt(&v2).cast::<i32>()).starts_with("shape mismatch in lt: [3] and [2]"));
    let mut x = ctx.from_slice(&[1i32, 2, 3]).unwrap();
    let e = x.assign(&v2).unwrap_err().to_string();
    assert_eq!(
        e,
        "shape mismatch in assign: [2] and [3] do not fit: the value's shape cannot be broadcast to the array's (trailing axes must be equal, or 1 in the value)"
    );
    // A value that broadcasts is fine, and the array keeps its data on failure.
    assert_eq!(x.to_vec().unwrap(), vec![1, 2, 3]);
    x.assign(7).unwrap();
    assert_eq!(x.to_vec().unwrap(), vec![7, 7, 7]);
}

#[test]
fn debug_prints_the_message_with_real_line_breaks() {
    let e = Context::builder()
        .device_str("99:0")
        .and_then(|b| b.build())
        .unwrap_err();
    let debug = format!("{e:?}");
    assert_eq!(debug, e.to_string());
    assert!(
        debug.starts_with("no OpenCL device matches \"99:0\"; available devices:\n"),
        "{debug}"
    );
    assert!(!debug.contains("\\n"), "{debug}");
    // A selector made in code is shown in the LAZYCL_DEVICE syntax too.
    let e = Context::builder()
        .device(DeviceSelector::Name("no-such-device".into()))
        .build()
        .unwrap_err();
    assert!(
        format!("{e:?}").starts_with("no OpenCL device matches \"no-such-device\""),
        "{e:?}"
    );
}

#[test]
fn integer_division_by_zero_is_zero_unless_checked() {
    let ctx = Context::new().unwrap();
    let a = ctx.from_slice(&[7i32, -7, i32::MIN, 5]).unwrap();
    let b = ctx.from_slice(&[2i32, 0, -1, 3]).unwrap();
    // Plain `/` and `%` never trap: a zero divisor gives 0, MIN / -1 wraps as in Rust.
    assert_eq!((&a / &b).to_vec().unwrap(), vec![3, 0, i32::MIN, 1]);
    assert_eq!((&a % &b).to_vec().unwrap(), vec![1, 0, 0, 2]);
    let e = a.checked_div(&b).unwrap_err();
    assert!(matches!(e, Error::DivisionByZero { zeros: 1, .. }), "{e}");
    assert_eq!(
        e.to_string(),
        "division by zero in checked_div: the divisor (shape [4]) holds 1 zero(s)"
    );
    assert!(matches!(
        a.checked_rem(0).unwrap_err(),
        Error::DivisionByZero { .. }
    ));
    // Without zeros it is the lazy quotient, equal to the host's.
    let c = ctx.from_slice(&[2u64, 5, 1, 3]).unwrap();
    let d = ctx.from_slice(&[9u64, 26, 7, 4]).unwrap();
    assert_eq!(d.checked_div(&c).unwrap().to_vec().unwrap(), vec![4, 5, 7, 1]);
    assert_eq!(d.checked_rem(&c).unwrap().to_vec().unwrap(), vec![1, 1, 0, 1]);
    // Shapes are checked first, and nothing to divide is never an error.
    assert!(matches!(
        d.checked_div(b.cast::<u64>()).unwrap_err(),
        Error::DivisionByZero { zeros: 1, .. }
    ));
    let two = ctx.from_slice(&[1u64, 2]).unwrap();
    assert!(matches!(
        d.checked_div(&two).unwrap_err(),
        Error::ShapeMismatch { .. }
    ));
    let empty = ctx.from_slice::<u64>(&[]).unwrap();
    assert_eq!(empty.checked_div(0).unwrap().to_vec().unwrap(), Vec::<u64>::new());
}
