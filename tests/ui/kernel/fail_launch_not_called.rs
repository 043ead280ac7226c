#![deny(unused_must_use)]

use lazycl::prelude::*;

#[kernel]
fn fill(v: u32, y: &mut [u32]) {
    y[global_id(0)] = v;
}

pub fn run(ctx: &Context) -> lazycl::Result<()> {
    let k = fill::bind(ctx)?;
    k.global(16).local(4);
    Ok(())
}

fn main() {}
