//! A kernel with an error in its body still gets its module and typed launcher, so the
//! only error is the kernel's own (callers type-check as usual).

use lazycl::prelude::*;

#[device_fn]
fn twice(v: f32) -> f32 {
    v * 2
}

#[kernel]
fn scale(a: f32, x: &mut [f32]) {
    let i = global_id(0);
    x[i] = twice(x[i]) * a.cube();
}

pub fn run(ctx: &Context, x: &mut Array<f32>) -> lazycl::Result<()> {
    let k = scale::bind(ctx)?;
    k.global(x.len()).local(1).launch(2.0, x)?;
    println!("{}", scale::SOURCE);
    Ok(())
}

fn main() {}
