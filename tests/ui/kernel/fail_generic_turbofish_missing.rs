use lazycl::prelude::*;

#[kernel]
fn fill<T: Float>(v: T, y: &mut [T]) {
    let i = global_id(0);
    if i < y.len() {
        y[i] = v;
    }
}

fn main() -> lazycl::Result<()> {
    let ctx = Context::new()?;
    let mut y = ctx.zeros::<f32>([4])?;
    // Which instance? `bind::<f32>` says.
    fill::bind(&ctx)?.global(4).launch(1.0f32, &mut y)?;
    Ok(())
}
