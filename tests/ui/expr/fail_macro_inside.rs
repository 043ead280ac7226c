use lazycl::prelude::*;

fn f(x: &Array<f32>) -> Array<f32> {
    expr!(x + dbg!(x))
}

fn main() {}
