use lazycl::prelude::*;

#[kernel]
fn k(y: &mut [f32]) {
    fn helper(v: f32) -> f32 {
        v * 2.0
    }
    y[0] = helper(1.0);
}

fn main() {}
