use lazycl::prelude::*;

#[kernel]
fn k(x: Vec<f32>, n: u128, y: &mut [f32]) {
    y[0] = 1.0;
}

fn main() {}
