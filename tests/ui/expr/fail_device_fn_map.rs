use lazycl::prelude::*;

#[device_fn]
fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

fn f(x: &Array<i32>) -> Array<f32> {
    sigmoid::map(x)
}

fn g() -> Array<f32> {
    sigmoid::map(1.0)
}

fn main() {}
