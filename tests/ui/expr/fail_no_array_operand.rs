use lazycl::prelude::*;

fn main() {
    let a = 2.0f32;
    let b = 3.0f32;
    let _ = expr!(a * b + 1.0);
}
