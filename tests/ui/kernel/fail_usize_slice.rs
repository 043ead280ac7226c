use lazycl::prelude::*;

#[kernel]
fn k(idx: &[usize], y: &mut [f32]) {
    y[0] = 1.0;
}

fn main() {}
