use lazycl::prelude::*;

#[device_fn]
fn lerp(a: f32, b: f32, t: f32) -> f32 {
    a + (b - a) * t
}

fn f(x: &Array<f32>, y: &Array<f32>) -> Array<f32> {
    expr!(lerp(x, y) + 1.0)
}

fn g(x: &Array<f32>) -> Array<f32> {
    let h = expr!(|x: f32, y: f32| x * y);
    h.apply(x)
}

fn main() {}
