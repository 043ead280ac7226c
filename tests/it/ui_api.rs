//! Compile-time behaviour of the array API: misuse the types rule out (an index array of
//! floats, a sort of booleans) fails with the errors in `tests/ui/api/fail_*.stderr`.
//! Regenerate the expected output with `TRYBUILD=overwrite cargo test --test it ui_api`
//! and review the diff.

#[test]
fn ui_api() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/api/fail_*.rs");
}
