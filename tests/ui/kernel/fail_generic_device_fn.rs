use lazycl::prelude::*;

#[device_fn]
fn square<T: Float>(x: T) -> T {
    x * x
}

fn main() {}
