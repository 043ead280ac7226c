use lazycl::prelude::*;

#[kernel]
async fn k(y: &mut [f32]) {
    y[0] = 1.0;
}

#[kernel]
const fn j(y: &mut [f32]) {
    y[0] = 1.0;
}

fn main() {}
