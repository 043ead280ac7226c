use lazycl::prelude::*;

#[kernel]
fn k<T: Copy>(x: &[T], y: &mut [T]) {
    y[0] = x[0];
}

fn main() {}
