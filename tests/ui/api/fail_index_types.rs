// Index arrays must be of an integer type, and only numbers sort: these are type errors
// at the call, not run-time errors.
use lazycl::prelude::*;

fn main() -> lazycl::Result<()> {
    let ctx = Context::new()?;
    let x = ctx.from_slice(&[1.0f32, 2.0, 3.0])?;
    let float_indices = ctx.from_slice(&[0.0f32, 2.0])?;
    let _ = x.take(Axis(0), &float_indices);
    let mut sums = ctx.zeros::<f32>([3])?;
    scatter_add(&mut sums, Axis(0), &float_indices, &x)?;
    let _ = float_indices.bincount(3)?;
    let flags = ctx.from_slice(&[true, false])?;
    let _ = flags.sort()?;
    Ok(())
}
