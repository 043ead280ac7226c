use lazycl::prelude::*;

#[device_fn]
fn scale(v: f32, by: f32) -> f32 {
    v * by
}

#[device_fn]
fn total(v: &[f32]) -> f32 {
    let mut s = 0.0;
    for i in 0..v.len() {
        s += v[i];
    }
    s
}

#[kernel]
fn k(x: &[f64], y: &mut [f32]) {
    y[0] = scale(1, 2.0);
    y[1] = scale(y[0]);
    y[2] = total(x);
    y[3] = total(y[0]);
}

fn main() {}
