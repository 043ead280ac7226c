use lazycl::prelude::*;

#[kernel]
fn k(y: &mut [f32]) {
    let twice = |v: f32| v * 2.0;
    y[0] = twice(y[0]);
}

fn main() {}
