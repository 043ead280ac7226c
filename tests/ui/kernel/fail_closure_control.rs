use lazycl::prelude::*;

#[kernel]
fn k(y: &mut [f32]) {
    for i in 0..4 {
        let f = |v: f32| {
            if v > 1.0 {
                return 0.0;
            }
            v
        };
        let g = |v: f32| {
            if v > 2.0 {
                break;
            }
            v
        };
        y[i] = f(y[i]) + g(y[i]);
    }
}

fn main() {}
