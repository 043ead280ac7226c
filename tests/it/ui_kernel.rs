//! Compile-time behaviour of `#[kernel]` / `#[device_fn]`: programs outside the subset
//! fail with the errors in `tests/ui/kernel/fail_*.stderr`; the `pass_*` programs compile
//! and run (they launch nothing). Regenerate the expected output with
//! `TRYBUILD=overwrite cargo test --test it ui_kernel` and review the diff.

#[test]
fn ui_kernel() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/kernel/fail_*.rs");
    t.pass("tests/ui/kernel/pass_*.rs");
}
