use lazycl::prelude::*;

fn main() -> lazycl::Result<()> {
    let ctx = Context::new()?;
    let x = ctx.from_slice(&[1.0f32, 2.0])?;
    // Rust has no `as bf16`; `bf16::from_f32(x)` is the conversion.
    let _y = expr!(x as bf16);
    let _z = expr!(bf16::from_f32(x));
    Ok(())
}
