use lazycl::prelude::*;

#[kernel]
fn k(y: &mut [f32], c: &[u32], d: &mut [bool], e: &mut [f64]) {
    atomic_add(&mut y[0], 1.0);
    atomic_max(&mut y[1], 1.0);
    atomic_add(&mut c[0], 1);
    atomic_or(&mut d[0], true);
    atomic_add(&mut e[0], 1.0);
    atomic_xchg(&mut e[1], 2.0);
    atomic_add(&c[0], 1);
}

fn main() {}
