use lazycl::prelude::*;

#[kernel]
fn k(x: &[f32], y: &mut [f32]) {
    let i = 3usize;
    const A: [f32; 3] = [1.0, 2.0];
    const B: [f32; 2] = [x[0], 1.0];
    const C: usize = i;
    const D: [f32; 4] = [0.0; 3];
    const E: (f32, f32) = (1.0, 2.0);
    const F: [f32; 2] = [1.0, 2.0];
    F[0] = 3.0;
    y[0] = F[1];
}

fn main() {}
