use lazycl::prelude::*;

#[kernel]
fn k(y: &mut [f32]) {
    let (a, b) = (1.0, 2.0);
    y[0] = a + b;
}

fn main() {}
