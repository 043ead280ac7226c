use lazycl::prelude::*;

#[kernel]
fn k(y: &mut [f32]) {
    println!("{}", y[0]);
}

fn main() {}
