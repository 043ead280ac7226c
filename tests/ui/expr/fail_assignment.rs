use lazycl::prelude::*;

fn f(x: &Array<f32>) -> Array<f32> {
    expr!({
        let mut t = x;
        t += 1.0;
        t
    })
}

fn main() {}
