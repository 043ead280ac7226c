use lazycl::prelude::*;

struct Model {
    w: Array<f32>,
    bias: f32,
}

// A field of a struct: bind it to a local first.
fn forward(m: &Model, x: &Array<f32>) -> Array<f32> {
    expr!(m.w * x + 1.0)
}

// A nested field, a scalar one.
fn shift(m: &(Model, u8), x: &Array<f32>) -> Array<f32> {
    expr!(x + m.0.bias)
}

// A tuple field.
fn scale(p: (f32, f32), x: &Array<f32>) -> Array<f32> {
    expr!(x * p.1)
}

fn main() {}
