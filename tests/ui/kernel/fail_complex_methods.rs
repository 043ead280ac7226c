use lazycl::prelude::*;

// Complex numbers' methods and fields are num-complex's; parts are `f32` or `f64`.
#[kernel]
fn methods(a: &mut [c32], r: &mut [f32], n: &mut [c32]) {
    let i = global_id(0);
    r[i] = a[i].abs();
    r[i] = r[i].re;
    a[i].re = 1.0;
    a[i] = a[i].sin();
    a[i] = c32::new(1, 2);
    a[i] = Complex::new(1u32, 2u32);
    atomic_add(&mut n[i], a[i]);
}

fn main() {}
