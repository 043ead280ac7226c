use lazycl::prelude::*;

// Rust has no `as` to or from a complex number: the messages say what to write.
#[kernel]
fn casts(a: &[c32], x: &[f32], out: &mut [f32], z: &mut [c32]) {
    let i = global_id(0);
    out[i] = a[i] as f32;
    z[i] = x[i] as c32;
    out[i] = f32::from(a[i]);
}

fn main() {}
