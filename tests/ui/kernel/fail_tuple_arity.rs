use lazycl::prelude::*;

#[kernel]
fn k(y: &mut [f32]) {
    let (a, b) = (1.0, 2.0, 3.0);
    let (c, d): (f32, f32, f32) = (1.0, 2.0);
    let (e, Some(f)) = (1.0, 2.0);
    y[0] = a + b + c + d + e;
}

fn main() {}
