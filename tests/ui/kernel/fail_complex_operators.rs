use lazycl::prelude::*;

// Complex numbers have `+ - * /` and `==`, with a complex number of their type or a real
// of their parts' type; no order, remainder or bits, as in Rust.
#[kernel]
fn operators(a: &[c32], b: &[c32], x: &[f64], out: &mut [c32], m: &mut [u32], r: &mut [f32]) {
    let i = global_id(0);
    m[i] = (a[i] < b[i]) as u32;
    out[i] = a[i] % b[i];
    out[i] = a[i] & b[i];
    out[i] = a[i] * x[i];
    out[i] = a[i] * 2;
    let mut y = r[i];
    y *= a[i];
    r[i] = y;
}

fn main() {}
