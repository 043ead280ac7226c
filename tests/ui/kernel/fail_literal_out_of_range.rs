use lazycl::prelude::*;

#[kernel]
fn k(y: &mut [u32], z: &mut [i32]) {
    y[0] = -1;
    z[0] = 3_000_000_000;
    y[1] = 5u128 as u32;
}

fn main() {}
