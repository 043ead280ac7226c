use lazycl::prelude::*;

#[kernel]
fn saxpy(a: f32, x: &[f32], y: &mut [f32]) {
    let i = global_id(0);
    if i < y.len() {
        y[i] = a * x[i] + y[i];
    }
}

fn run(ctx: &Context, x: &Array<f32>, mut y: Array<f32>, ints: &Array<i32>) -> lazycl::Result<()> {
    let k = saxpy::bind(ctx)?;
    k.global(16).launch(2.0f64, x, &mut y)?;
    k.global(16).launch(2.0, x, &y)?;
    k.global(16).launch(2.0, ints, &mut y)?;
    k.global(16).launch(2.0, x)?;
    Ok(())
}

fn main() {}
