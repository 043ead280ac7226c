use lazycl::prelude::*;

#[kernel]
fn k(y: &mut [f32]) {
    y[0] = undefined + 1.0;
    y[1] = f32::consts::GOLDEN;
    y[2] = core::f32::MAX_VALUE;
}

fn main() {}
