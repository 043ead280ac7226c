//! `#[kernel]` in its simplest form: `y = a * x + y`, checked against the host.
//!
//! `cargo run --release --example saxpy` (`LAZYCL_EXAMPLE_SMALL=1` runs a small size).

use std::time::Instant;

use lazycl::prelude::*;

/// One work-item per element; the bounds check makes any global size safe.
#[kernel]
fn saxpy(a: f32, x: &[f32], y: &mut [f32]) {
    let i = global_id(0);
    if i < y.len() {
        y[i] = a * x[i] + y[i];
    }
}

fn main() -> lazycl::Result<()> {
    let small = std::env::var("LAZYCL_EXAMPLE_SMALL").is_ok_and(|v| v == "1");
    let n = if small { 1001 } else { 1 << 24 };
    let ctx = Context::new()?;
    println!("saxpy on {} elements, device {}", n, ctx.device().name);

    let xs: Vec<f32> = (0..n).map(|i| (i % 1000) as f32 * 0.001).collect();
    let ys: Vec<f32> = (0..n).map(|i| 1.0 - (i % 7) as f32).collect();
    let x = ctx.from_slice(&xs)?;
    let mut y = ctx.from_slice(&ys)?;

    let k = saxpy::bind(&ctx)?; // builds the program once for this context
    let start = Instant::now();
    let reps = 10;
    for _ in 0..reps {
        k.global(n).launch(2.0, &x, &mut y)?; // asynchronous: enqueue and return
    }
    let result = y.to_vec()?; // the only wait
    let elapsed = start.elapsed();

    let mut expected = ys.clone();
    for _ in 0..reps {
        for (e, x) in expected.iter_mut().zip(&xs) {
            *e += 2.0 * x;
        }
    }
    let max_err = result
        .iter()
        .zip(&expected)
        .map(|(a, b)| (a - b).abs() / b.abs().max(1.0))
        .fold(0.0f32, f32::max);
    assert!(max_err < 1e-5, "max relative error {max_err}");
    println!(
        "{reps} launches + read back: {:.2} ms, max relative error {max_err:e}",
        elapsed.as_secs_f64() * 1e3
    );
    println!("{}", ctx.stats());
    println!("saxpy: OK");
    Ok(())
}
