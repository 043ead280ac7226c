use lazycl::prelude::*;

#[kernel]
fn k(y: &mut [f32]) {
    let r = &y[0];
    y[1] = *r;
}

fn main() {}
