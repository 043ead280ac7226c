use lazycl::prelude::*;

fn f(x: &Array<f32>) -> Array<f32> {
    expr!(&x + 1.0)
}

fn main() {
    let _g = expr!(|x: &f32, y: &[f32]| x * 2.0);
}
