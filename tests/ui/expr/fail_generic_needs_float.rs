use lazycl::prelude::*;

// A float method with a host scalar of a type that may be an integer: the note names
// the bound that works, `T: lazycl::Float`.
fn root_scaled<T: lazycl::Numeric>(x: &Array<T>, s: T) -> Array<T> {
    expr!(x.sqrt() * s)
}

// Negation needs a signed type.
fn negated<T: lazycl::Numeric>(x: &Array<T>, s: T) -> Array<T> {
    expr!(-x + s)
}

fn main() {}
