use lazycl::prelude::*;

fn f(x: &Array<f32>) -> Array<f32> {
    expr!(sqrt(x) + 1.0)
}

fn g(x: &Array<f32>) -> Array<f32> {
    expr!(softplus(x) + 1.0)
}

fn main() {}
