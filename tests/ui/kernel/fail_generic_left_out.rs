use lazycl::prelude::*;

// Atomics have no 16-bit float form: the f16 and bf16 instances are left out, and
// asking for one says why.
#[kernel]
fn total<T: Float>(x: &[T], sum: &mut [T]) {
    let i = global_id(0);
    if i < x.len() {
        atomic_add(&mut sum[0], x[i]);
    }
}

fn main() -> lazycl::Result<()> {
    let ctx = Context::new()?;
    let _f32 = total::bind::<f32>(&ctx)?;
    let _f16 = total::bind::<f16>(&ctx)?;
    Ok(())
}
