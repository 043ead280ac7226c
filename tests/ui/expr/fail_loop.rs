use lazycl::prelude::*;

fn f(x: &Array<f32>) -> Array<f32> {
    expr!({
        let t = x * 2.0;
        while t > 1.0 {}
        t
    })
}

fn g(x: &Array<f32>) -> Array<f32> {
    expr!(loop {
        break x;
    })
}

fn main() {}
