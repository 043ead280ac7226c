use lazycl::prelude::*;

#[kernel(types(f32, usize))]
fn k<T>(y: &mut [T]) {
    y[0] = y[0];
}

fn main() {}

#[kernel(types(f64, f64))]
fn twice<T>(y: &mut [T]) {
    y[0] = y[0];
}
