use lazycl::prelude::*;

#[kernel]
fn k(x: &[f64], y: &mut [f32], n: &mut [i32]) {
    let i = global_id(0);
    y[i] = x[i];
    n[i] = 1.5;
    let mut a: u32 = 0;
    a = i;
}

fn main() {}
