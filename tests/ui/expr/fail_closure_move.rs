use lazycl::prelude::*;

fn main() {
    let _f = expr!(move |x: f32| x * 2.0);
}
