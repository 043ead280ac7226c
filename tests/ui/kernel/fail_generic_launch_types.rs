use lazycl::prelude::*;

#[kernel]
fn axpy<T: Float>(a: T, x: &[T], y: &mut [T]) {
    let i = global_id(0);
    if i < y.len() {
        y[i] = a * x[i] + y[i];
    }
}

fn main() -> lazycl::Result<()> {
    let ctx = Context::new()?;
    let x = ctx.zeros::<f32>([4])?;
    let mut y = ctx.zeros::<f32>([4])?;
    // The f64 instance takes f64 arrays.
    axpy::bind::<f64>(&ctx)?.global(4).launch(2.0, &x, &mut y)?;
    Ok(())
}
