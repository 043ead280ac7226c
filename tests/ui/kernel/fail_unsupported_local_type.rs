use lazycl::prelude::*;

#[kernel]
fn k(y: &mut [f32]) {
    let a: i128 = 3;
    let b: (f32, f32) = (1.0, 2.0);
}

fn main() {}
