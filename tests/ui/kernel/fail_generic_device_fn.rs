use lazycl::prelude::*;

#[device_fn]
fn square<T: Float>(x: T) -> T {
    x * x
}

// `square` is generated for f32 and f64: an i32 argument fits neither.
#[kernel]
fn k(y: &mut [i32]) {
    y[0] = square(y[1]);
}

fn main() {}
