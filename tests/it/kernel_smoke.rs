//! `#[kernel]` end to end: saxpy, launch sizes, counters.

use lazycl::prelude::*;

#[kernel]
fn saxpy(a: f32, x: &[f32], y: &mut [f32]) {
    let i = global_id(0);
    if i < y.len() {
        y[i] = a * x[i] + y[i];
    }
}

#[test]
fn saxpy_runs() -> lazycl::Result<()> {
    let ctx = Context::new()?;
    let x: Vec<f32> = (0..1000).map(|i| i as f32).collect();
    let y0: Vec<f32> = (0..1000).map(|i| 1.0 - i as f32).collect();
    let xa = ctx.from_slice(&x)?;
    let mut ya = ctx.from_slice(&y0)?;
    let k = saxpy::bind(&ctx)?;
    k.global([1000]).launch(2.0, &xa, &mut ya)?;
    let got = ya.to_vec()?;
    for i in 0..1000 {
        assert_eq!(got[i], 2.0 * x[i] + y0[i]);
    }
    println!("{}", saxpy::SOURCE);
    Ok(())
}

/// Kernel and variable names that are OpenCL C builtins or keywords are renamed in the
/// generated source; the Rust side does not notice.
#[kernel]
fn length(x: &[f32], out: &mut [f32]) {
    let global = global_id(0);
    let float4 = x.len();
    if global < float4 {
        let dot = x[global];
        out[global] = dot * dot;
    }
}

#[test]
fn opencl_names_are_renamed() -> lazycl::Result<()> {
    let ctx = Context::new()?;
    assert_eq!(length::NAME, "length_kernel");
    let x = ctx.from_slice(&[1.0f32, 2.0, 3.0])?;
    let mut out = ctx.zeros::<f32>([3])?;
    length::bind(&ctx)?.global(3).launch(&x, &mut out)?;
    assert_eq!(out.to_vec()?, vec![1.0, 4.0, 9.0]);
    Ok(())
}
