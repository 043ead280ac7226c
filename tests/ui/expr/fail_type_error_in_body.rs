use lazycl::prelude::*;

fn main() {
    let _f = expr!(|x: f32, n: i32| x * n);
    let _g = expr!(|x: f32| -> i32 { x * 2.0 });
}
