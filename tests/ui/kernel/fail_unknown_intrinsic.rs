use lazycl::prelude::*;

#[kernel]
fn k(y: &mut [f32]) {
    let i = global_idx(0);
    let j = get_local_id(0);
    y[i] = sqrt(y[j]);
    atomic_inc(&mut y[0]);
}

fn main() {}
