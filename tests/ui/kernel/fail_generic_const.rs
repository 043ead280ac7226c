use lazycl::prelude::*;

#[kernel]
fn k<const N: usize>(y: &mut [f32]) {
    y[0] = 1.0;
}

fn main() {}
