use lazycl::prelude::*;

#[kernel]
fn k(y: &mut [f32]) {
    // A tuple pattern takes a tuple written out: there are no tuple values to bind whole.
    let v = y[0];
    let (a, b) = v;
    y[0] = a + b;
}

fn main() {}
