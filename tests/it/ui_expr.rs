//! Compile-time behaviour of `expr!` and of device functions used with it: programs
//! outside the subset fail with the errors in `tests/ui/expr/fail_*.stderr`; the `pass_*`
//! programs compile and run. Regenerate the expected output with
//! `TRYBUILD=overwrite cargo test --test it ui_expr` and review the diff.

#[test]
fn ui_expr() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/expr/fail_*.rs");
    t.pass("tests/ui/expr/pass_*.rs");
}
