use lazycl::prelude::*;

#[kernel]
fn k<'a>(y: &'a mut [f32]) {
    y[0] = 1.0;
}

fn main() {}
