use lazycl::prelude::*;

fn f(x: &Array<i32>) -> Array<i32> {
    expr!(match x {
        0 => 1,
        _ => x,
    })
}

fn main() {}
