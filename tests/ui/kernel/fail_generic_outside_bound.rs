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
    let _k = axpy::bind::<i32>(&ctx)?;
    Ok(())
}
