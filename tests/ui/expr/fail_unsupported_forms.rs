use lazycl::prelude::*;

fn scale() -> Result<f32> {
    Ok(2.0)
}

// `?` inside the expression.
fn try_inside(x: &Array<f32>) -> Result<Array<f32>> {
    Ok(expr!(x * scale()?))
}

// Two results at once.
fn pair(x: &Array<f32>) -> Array<f32> {
    expr!((x, x * 2.0))
}

// `unsafe` is never needed.
fn unsafe_block(x: &Array<f32>) -> Array<f32> {
    expr!(unsafe { x * 2.0 })
}

fn main() {}
