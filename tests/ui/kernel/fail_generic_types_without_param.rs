use lazycl::prelude::*;

#[kernel(types(f32))]
fn k(y: &mut [f32]) {
    y[0] = 1.0;
}

fn main() {}
