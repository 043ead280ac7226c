use lazycl::prelude::*;

#[kernel]
fn k(y: &mut [f32]) {
    let a = 1.0;
    a = 2.0;
    let tile = Local::<[f32; 16]>::new();
    tile[0] = a;
    y[0] = tile[0];
}

fn main() {}
