use lazycl::prelude::*;

fn f(x: &Array<f32>) -> Array<f32> {
    expr!(if x > 0.0 { x })
}

fn main() {}
