use lazycl::prelude::*;

#[kernel]
fn k(y: &mut [f32]) {
    y[0] = helper(y[1]);
}

fn main() {}
