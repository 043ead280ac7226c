use lazycl::prelude::*;

#[device_fn(types(f32))]
fn square<T>(x: T) -> T {
    x * x
}

// The listed types are the only instances.
#[kernel]
fn k(y: &mut [f64]) {
    y[0] = square(y[1]);
}

fn main() {}
