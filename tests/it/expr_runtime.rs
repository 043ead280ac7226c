//! The run-time contract `expr!` builds on: a template applied to arrays and scalars is a
//! lazy node that fuses with operator-built nodes and is cached by template, not values.

use crate::common::ctx;
use lazycl::{expr_node, ExprArg, ExprTemplate};

static AXPY: ExprTemplate = ExprTemplate {
    text: "fma($0, $1, ($T1)2.0) + (($2 > ($T2)0) ? $2 : ($T2)0)",
    helpers: "",
    rust: "a.mul_add(x, 2.0) + if y > 0.0 { y } else { 0.0 }",
    derivatives: &[],
};

#[test]
fn a_template_node_fuses_and_caches_by_template() {
    let ctx = ctx();
    let xs: Vec<f32> = (0..1001).map(|i| i as f32 * 0.01 - 3.0).collect();
    let ys: Vec<f32> = (0..1001).map(|i| (i as f32 * 0.37).sin()).collect();
    let x = ctx.from_slice(&xs).unwrap();
    let y = ctx.from_slice(&ys).unwrap();
    let mut builds = Vec::new();
    for a in [1.5f32, -0.25, 3.0] {
        let before = ctx.stats();
        let e = expr_node::<f32>(&AXPY, &[a.operand(), x.operand(), y.operand()]);
        let z = (&e * 2.0 + &x).to_vec().unwrap();
        let d = ctx.stats() - before;
        assert_eq!(
            d.kernels_launched, 1,
            "the expr! node and the operators around it are one kernel"
        );
        builds.push(d.programs_built + d.programs_loaded);
        for i in 0..xs.len() {
            let h = (a.mul_add(xs[i], 2.0) + ys[i].max(0.0)) * 2.0 + xs[i];
            assert!((z[i] - h).abs() <= 1e-5 * h.abs().max(1.0), "{} vs {h}", z[i]);
        }
    }
    assert_eq!(
        builds[1..],
        [0, 0],
        "new scalar values build no new program: {builds:?}"
    );
    let bad = expr_node::<f32>(
        &AXPY,
        &[
            1.0f32.operand(),
            x.operand(),
            ctx.zeros::<f32>(3).unwrap().operand(),
        ],
    );
    let err = bad.eval().unwrap_err().to_string();
    assert!(
        err.contains("expr!(") && err.contains("[1001]") && err.contains("[3]"),
        "{err}"
    );
}
