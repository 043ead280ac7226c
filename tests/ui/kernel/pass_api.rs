#![deny(missing_docs, unused)]
//! The generated API: module items, launch shapes, sharing between threads.

use lazycl::prelude::*;

/// A documented kernel: the doc comment goes on the generated module.
#[kernel]
pub fn scale(a: f64, x: &[f64], y: &mut [f64], n: usize, flag: bool) {
    let i = global_id(0);
    if i < n && flag {
        y[i] = a * x[i];
    }
}

#[allow(dead_code)]
fn run(ctx: &Context, x: &Array<f64>, y: &mut Array<f64>) -> lazycl::Result<()> {
    let bound: scale::Bound = scale::bind(ctx)?;
    let copy = bound.clone();
    bound.global(64).launch(2.0, x, y, 64, true)?;
    copy.global([64]).local([16]).launch(2.0, x, y, 64, false)?;
    bound.global((8, 8)).local((4, 4)).launch(1.0, x, y, 64, true)?;
    bound.global([4, 4, 4]).launch(1.0, x, y, 64, true)?;
    let launch: scale::Launch<'_> = bound.global(1);
    launch.launch(0.5, x, y, 1, true)?;
    let _: &lazycl::Kernel = bound.kernel();
    std::thread::scope(|s| {
        s.spawn(|| bound.global(1).launch(1.0, x, &mut x.clone(), 1, true));
    });
    Ok(())
}

fn main() {
    assert_eq!(scale::NAME, "scale");
    assert!(scale::SOURCE.contains("#pragma OPENCL EXTENSION cl_khr_fp64 : enable"));
    assert!(scale::SOURCE.contains("__kernel void scale(double a, __global const double* restrict x"));
    fn is_send_sync<T: Send + Sync + Clone>() {}
    is_send_sync::<scale::Bound>();
}
