use lazycl::prelude::*;

#[kernel]
fn k(x: &[f32], y: &mut [f32]) {
    let i = global_id(0);
    y[i] = x[i] * 2;
    y[i] = x[i] + i;
}

fn main() {}
