use lazycl::prelude::*;

fn f(x: &Array<f32>) -> Array<f32> {
    expr!(x[0] + 1.0)
}

fn main() {}
