use lazycl::prelude::*;

#[kernel]
fn k(x: &&[f32], y: &mut &mut [f32], s: &f32) {
    y[0] = x[0];
}

fn main() {}
