use lazycl::prelude::*;

// A host value that is neither an array nor an element scalar.
fn from_vec(x: &Array<f32>, v: Vec<f32>) -> Array<f32> {
    expr!(x * v)
}

// `usize` is no element type.
fn by_len(x: &Array<f32>, n: usize) -> Array<f32> {
    expr!(x * n as f32)
}

fn main() {}
