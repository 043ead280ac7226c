use lazycl::prelude::*;

fn f(x: &Array<f32>) -> Array<f32> {
    expr!(x * global_id(0) as f32)
}

fn main() {}
