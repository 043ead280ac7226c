use lazycl::prelude::*;

// Rust has no `as f16`: `half::f16` is no primitive type.
#[kernel]
fn to_half(x: &[f32], y: &mut [f16]) {
    let i = global_id(0);
    if i < y.len() {
        y[i] = x[i] as f16;
    }
}

// A type parameter is fine: `as T` for `T = f16` rounds like `f16::from_f32`.
#[kernel]
fn to_any<T: Float>(x: &[f32], y: &mut [T]) {
    let i = global_id(0);
    if i < y.len() {
        y[i] = x[i] as T;
    }
}

fn main() {}
