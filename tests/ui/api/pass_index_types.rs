//! The counterparts of `fail_index_types.rs` that compile: index arrays of each integer
//! type for `take`, `take_along_axis`, `scatter_add` and `bincount`, and sorts of each
//! number type. Nothing runs (no device).
use lazycl::prelude::*;

/// Every index operation, with indices of the integer type `I`.
fn with_indices<I: lazycl::Integer>(x: &Array<f32>, indices: &Array<I>) -> lazycl::Result<Array<f32>> {
    let mut sums = x.take(Axis(0), indices) + x.take_along_axis(-1, indices);
    scatter_add(&mut sums, Axis(0), indices, x)?;
    let counts: Array<Index> = indices.bincount(3)?;
    Ok(sums * counts.cast::<f32>())
}

/// A sort and an argsort of an array of the number type `T`.
fn sorted<T: Numeric>(a: &Array<T>) -> lazycl::Result<(Array<T>, Array<Index>)> {
    Ok((a.sort()?, a.argsort()?))
}

#[allow(dead_code)]
fn every_type(ctx: &Context) -> lazycl::Result<()> {
    let x = ctx.from_slice(&[1.0f32, 2.0, 3.0])?;
    with_indices(&x, &ctx.from_slice(&[0i32, 2])?)?;
    with_indices(&x, &ctx.from_slice(&[0u32, 2])?)?;
    with_indices(&x, &ctx.from_slice(&[0i64, 2])?)?;
    with_indices(&x, &ctx.from_slice(&[0u64, 2])?)?;
    sorted(&x)?;
    sorted(&ctx.from_slice(&[2.0f64, 1.0])?)?;
    sorted(&ctx.from_slice(&[2i32, 1])?)?;
    sorted(&ctx.from_slice(&[2u32, 1])?)?;
    sorted(&ctx.from_slice(&[2i64, 1])?)?;
    sorted(&ctx.from_slice(&[2u64, 1])?)?;
    Ok(())
}

fn main() {}
