use lazycl::prelude::*;

#[kernel]
fn k(y: &mut [f32]) {
    let i = global_id();
    let j = local_size(0, 1);
    let g = group_id(3);
    barrier(1);
    y[i] = 1.0;
}

fn main() {}
