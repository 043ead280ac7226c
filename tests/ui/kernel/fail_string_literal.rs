use lazycl::prelude::*;

#[kernel]
fn k(y: &mut [u32]) {
    let s = "hello";
    y[0] = 'a' as u32;
}

fn main() {}
