use lazycl::prelude::*;

#[kernel(types(f32, i32))]
fn k<T: Float>(y: &mut [T]) {
    y[0] = y[0];
}

fn main() {}
