use lazycl::prelude::*;

#[kernel]
fn k(x: &[f32], n: i32) {
    let i = global_id(0);
    x[i] = 1.0;
    x[i] += 2.0;
    n = 3;
}

fn main() {}
