use lazycl::prelude::*;

// A device function is seen below its definition, like a `macro_rules!`.
#[kernel]
fn k(y: &mut [f32]) {
    y[0] = twice(y[1]);
}

#[device_fn]
fn twice(x: f32) -> f32 {
    x * 2.0
}

fn main() {}
