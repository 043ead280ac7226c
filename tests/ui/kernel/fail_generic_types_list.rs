use lazycl::prelude::*;

#[kernel(types(f32, usize))]
fn k<T>(y: &mut [T]) {
    y[0] = y[0];
}

fn main() {}
