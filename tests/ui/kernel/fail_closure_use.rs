use lazycl::prelude::*;

#[kernel]
fn k(y: &mut [f32]) {
    let sq = |v: f32| v * v;
    let other = sq;
    y[0] = sq(1.0, 2.0) + (|v: f32| v)(3.0) + sq(true);
}

fn main() {}
