use lazycl::prelude::*;

fn f(x: &Array<i32>) -> Array<i32> {
    expr!(x.sqrt())
}

fn g(x: &Array<f32>) -> Array<f32> {
    expr!(x * 2)
}

fn main() {}
