//! Compile-time behaviour of the array API: misuse the types rule out (an index array of
//! floats, a sort of booleans, a gradient of integers) fails with the errors in `tests/ui/api/fail_*.stderr`, and
//! the uses they allow (indices of every integer type, sorts of every number type)
//! compile. Regenerate the expected output with `TRYBUILD=overwrite cargo test --test it
//! ui_api` and review the diff.
//!
//! (With a `pass` case, trybuild builds this group's dependencies as it builds those of
//! `ui_expr` and `ui_kernel`, which have pass cases too, in the directory they share;
//! without one it would check them as well, a second compilation of every dependency.)

#[test]
fn ui_api() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/api/fail_*.rs");
    t.pass("tests/ui/api/pass_*.rs");
}
