use lazycl::prelude::*;

#[device_fn]
fn bad(v: f32) -> f32 {
    if v > 0.0 {
        return 1;
    }
    let t = Local::<[f32; 4]>::new();
}

#[device_fn]
fn no_value(v: f32) -> i32 {
    let w = v as i32;
}

fn main() {}
