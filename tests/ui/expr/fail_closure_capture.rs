use lazycl::prelude::*;

fn main() {
    let a = 2.0f32;
    let _f = expr!(|x: f32| x * a);
    let _g = expr!(|x| x * 2.0);
}
