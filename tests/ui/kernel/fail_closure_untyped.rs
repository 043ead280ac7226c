use lazycl::prelude::*;

#[kernel]
fn k(y: &mut [f32]) {
    let twice = |v| v * 2.0;
    let pair = |(a, b): (f32, f32)| a + b;
    y[0] = twice(y[1]) + pair((1.0, 2.0));
}

fn main() {}
