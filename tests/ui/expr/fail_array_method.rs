use lazycl::prelude::*;

// A reduction of an operand: `x` is one element inside expr!.
fn normalize(x: &Array<f32>) -> Array<f32> {
    expr!(x / x.sum())
}

// `max()` without an argument is the array's maximum (`x.max(y)` is elementwise).
fn scaled(x: &Array<f32>) -> Array<f32> {
    expr!(x / x.max())
}

// A whole-array conversion: `as` converts an element.
fn widen(x: &Array<i32>, y: &Array<f64>) -> Array<f64> {
    expr!(x.cast::<f64>() * y)
}

fn main() {}
