use lazycl::prelude::*;

#[kernel]
fn k(y: &mut [f32]) {
    for v in y {
        v = 1.0;
    }
    for x in 0.0..1.0 {
        y[0] = x;
    }
    for i in 0.. {
        y[i] = 1.0;
    }
}

fn main() {}
