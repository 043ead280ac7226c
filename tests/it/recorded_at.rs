//! Every recording call carries the caller's source location: a deferred error says
//! which line of the user's code recorded the operation that failed, and `explain`
//! shows where an array was recorded.

use crate::common::ctx;
use lazycl::prelude::*;

/// The error of materializing `$e` (an `Array`) names this file and the line of `$e`.
macro_rules! names_its_line {
    ($what:literal, $e:expr) => {{
        let line = line!();
        let err = $e.to_vec().expect_err($what).to_string();
        let want = format!("recorded at {}:{line}:", file!());
        assert!(err.contains(&want), "{}: {err}\n(wanted {want})", $what);
    }};
}

#[test]
fn a_deferred_error_names_the_line_that_recorded_it() {
    let ctx = ctx();
    let a = ctx.random_uniform::<f32>([4, 6], 1).unwrap();
    let b = ctx.random_uniform::<f32>([5, 3], 2).unwrap();
    let m = a.gt(0.5f32);
    let i = ctx.from_slice(&[0u32, 2]).unwrap();
    names_its_line!("+", &a + &b);
    names_its_line!("* scalar after a bad -", (&a - &b) * 2.0);
    names_its_line!("matmul", a.matmul(&b));
    names_its_line!("dot", a.dot(&b));
    names_its_line!("sum_axis", a.sum_axis(2));
    names_its_line!("amax_axis", a.amax_axis(-3));
    names_its_line!("argmax_axis", a.argmax_axis(5));
    names_its_line!("mean_axis", a.mean_axis(9));
    names_its_line!("var_axis", a.var_axis(4, 1.0));
    names_its_line!("softmax", a.softmax(3));
    names_its_line!("logsumexp", a.logsumexp(-4));
    names_its_line!("cumsum", a.cumsum(2));
    names_its_line!("reshape", a.reshape([7]));
    names_its_line!("permuted_axes", a.permuted_axes([0, 0]));
    names_its_line!("swap_axes", a.swap_axes(0, 2));
    names_its_line!("insert_axis", a.insert_axis(4));
    names_its_line!("flip", a.flip(-3));
    names_its_line!("broadcast_to", a.broadcast_to(&[5, 6]));
    names_its_line!("slice", a.slice(s![.., 9..]));
    names_its_line!("take", a.take(2, &i));
    names_its_line!("take_along_axis", a.take_along_axis(0, &i));
    names_its_line!("select", m.select(&a, &b));
    names_its_line!("lt", a.lt(&b));
    names_its_line!("max", a.max(&b));
    names_its_line!("cast of a bad sum", (&a + &b).cast::<f64>());
    names_its_line!("expr!", expr!(a * b + 1.0f32));
    names_its_line!("diff", a.diff(1, 5));
    names_its_line!("roll", a.roll(1, -3));
    names_its_line!("searchsorted", a.searchsorted(&i.cast::<f32>(), SearchSide::Left));
    names_its_line!("cov", a.reshape([2, 3, 4]).cov(1.0));
}

#[test]
fn four_products_in_one_step_name_the_bad_one() {
    let ctx = ctx();
    let x = ctx.random_uniform::<f32>([8, 16], 3).unwrap();
    let w1 = ctx.random_uniform::<f32>([16, 32], 4).unwrap();
    let w2 = ctx.random_uniform::<f32>([32, 32], 5).unwrap();
    let w3 = ctx.random_uniform::<f32>([16, 8], 6).unwrap();
    let w4 = ctx.random_uniform::<f32>([8, 4], 7).unwrap();
    let h1 = x.matmul(&w1).tanh();
    let h2 = h1.matmul(&w2).tanh();
    let bad_line = line!() + 1;
    let h3 = h2.matmul(&w3).tanh(); // [8, 32] x [16, 8]: the mistake
    let out = h3.matmul(&w4).sum_axis(1) * 0.5;
    let err = out.to_vec().unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, Error::ShapeMismatch { .. }), "{text}");
    assert!(
        text.contains(&format!("recorded at {}:{bad_line}:", file!())),
        "{text}"
    );
    // Only the first recording is named, not the operations that carried the error on.
    assert_eq!(text.matches("recorded at").count(), 1, "{text}");
}

#[test]
fn explain_shows_where_an_array_was_recorded() {
    let ctx = ctx();
    let x = ctx.from_slice(&[1.0f32, 2.0, 3.0]).unwrap();
    let line = line!() + 1;
    let y = (&x * 2.0).exp().sum();
    let text = y.explain().unwrap();
    let want = format!("recorded at {}:{line}:", file!());
    assert!(text.lines().next().unwrap().contains(&want), "{text}");
}
