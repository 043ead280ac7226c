//! A short tour of lazycl: devices, arrays, lazy fused expressions and the counters.
//!
//! `make run` runs this on the default device (`LAZYCL_DEVICE` picks another).

use lazycl::prelude::*;
use ndarray::{Array1, Array2};

fn main() -> lazycl::Result<()> {
    println!("== devices ==");
    print!("{}", lazycl::device_table(&lazycl::devices()?));

    let ctx = Context::new()?;
    println!("\nusing {} ({})", ctx.device().name, ctx.device().platform_name);

    println!("\n== upload / download round trip ==");
    let host = Array2::from_shape_fn((3, 4), |(i, j)| (i * 10 + j) as f32);
    let m = ctx.array(&host.t())?; // a transposed view: the device gets the logical order
    let back = m.to_ndarray()?;
    println!("uploaded the 4x3 transpose of\n{host}\nread back\n{back}");
    assert_eq!(back, host.t().into_dyn());

    println!("\n== a lazy expression ==");
    let n = 1 << 16;
    let x = ctx.array(&Array1::linspace(0.0f32, 1.0, n))?;
    let y = ctx.full(n, 0.5f32)?;
    let a = 3.0f32;
    let before = ctx.stats();
    let z = (a * &x + &y).sqrt() - x.sin() * 0.5; // recorded, nothing runs
    assert_eq!(ctx.stats(), before, "recording touches nothing");
    println!("{}", z.explain()?);
    let z = z.to_vec()?; // one fused kernel, then one read
    println!("z[0..4] = {:?}", &z[..4]);
    println!("\n== counters ==\n{}", ctx.stats());
    Ok(())
}
