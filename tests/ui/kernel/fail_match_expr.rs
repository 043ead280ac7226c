use lazycl::prelude::*;

#[kernel]
fn k(x: &[i32], f: &[f32], y: &mut [i32]) {
    let i = global_id(0);
    y[i] = match x[i] {
        0 => 1,
        1..=9 => 2,
    };
    y[i] = match f[i] {
        _ => 3,
    };
    y[i] = match x[i] {
        (a, b) => 4,
        Some(v) => 5,
        _ => 6,
    };
    y[i] = match x[i] {
        0 => 1.0,
        _ => 2,
    };
}

fn main() {}
