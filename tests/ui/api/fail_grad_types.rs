// Gradients are of float arrays: an integer loss, or integer parameters, do not compile.
use lazycl::prelude::*;

fn main() -> lazycl::Result<()> {
    let ctx = Context::new()?;
    let k = ctx.from_slice(&[1i32, 2])?;
    let w = ctx.from_slice(&[1.0f32, 2.0])?;
    let _ = k.grad(&[&k]);
    let _ = lazycl::value_and_grad(&[&k], |p| p[0].clone());
    // The gradient of an f32 loss is of f32 parameters.
    let x = ctx.from_slice(&[1.0f64, 2.0])?;
    let _ = (&w * 2.0).sum().grad(&[&x]);
    Ok(())
}
