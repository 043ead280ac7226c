use lazycl::prelude::*;

#[kernel]
fn k(y: &mut [f32]) {
    let scale = 2.0;
    // A closure is inlined where it is called: it may not capture `scale` or `y`.
    let twice = |v: f32| v * scale + y[0];
    y[0] = twice(y[1]);
}

fn main() {}
