use lazycl::prelude::*;

#[kernel]
fn k(y: &mut [f32], c: &[u32], d: &mut [i64], e: &mut [f64]) {
    atomic_add(&mut y[0], 1.0);
    atomic_max(&mut y[1], 1.0);
    atomic_add(&mut c[0], 1);
    atomic_max(&mut d[0], 1);
    atomic_add(&mut e[0], 1.0);
    atomic_add(&c[0], 1);
}

fn main() {}
