use lazycl::prelude::*;

// A complex operand beside a real one is found as one class of operands (one element
// type): the note says to give the types in the closure form.
fn scaled(z: &Array<c32>, x: &Array<f32>) -> Array<c32> {
    expr!(z * x)
}

// `as` converts no complex number.
fn real(z: &Array<c64>) -> Array<f64> {
    expr!(z as f64)
}

// No order.
fn less(z: &Array<c64>, w: &Array<c64>) -> Array<bool> {
    expr!(z < w)
}

fn main() {}
