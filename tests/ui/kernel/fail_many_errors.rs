use lazycl::prelude::*;

#[kernel]
fn k(x: &[f32], y: &mut [f32]) {
    let i = global_id(0);
    let a = x[i] as bool;
    let b = !x[i];
    let c = -(i as u32);
    let d = true + 1;
    y[i] = x[i] << 2;
    while let Some(v) = 3 {}
}

fn main() {}
