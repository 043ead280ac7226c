use lazycl::prelude::*;

#[kernel]
fn k(y: &mut [f32]) {
    let v = if y[0] > 0.0 { 1.0 };
    let w = if y[0] > 0.0 { 1.0 } else { 2 };
    y[0] = v;
}

fn main() {}
