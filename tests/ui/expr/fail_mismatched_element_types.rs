use lazycl::prelude::*;

fn f(x: &Array<f32>, y: &Array<i32>) -> Array<f32> {
    expr!(x + y)
}

fn main() {}
