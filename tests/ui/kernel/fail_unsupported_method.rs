use lazycl::prelude::*;

#[kernel]
fn k(x: &[f32], y: &mut [f32], z: &mut [u32]) {
    let i = global_id(0);
    y[i] = x[i].sin_cos();
    z[i] = (i as u32).abs();
    y[i] = x.iter().sum();
}

fn main() {}
