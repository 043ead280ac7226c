use lazycl::prelude::*;

#[kernel]
fn k<T: Iterator>(y: &mut [T]) {
    y[0] = y[0];
}

fn main() {}
