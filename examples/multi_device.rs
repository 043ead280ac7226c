//! 2-D heat diffusion on every device at once: a `Context::multi` splits the grid by
//! rows across the devices, each device updates its rows (one fused kernel a step), and
//! the rows a 5-point stencil reads across a boundary (one halo row each side) are copied
//! between the devices with no host wait. The result is checked against the same steps
//! on one device, and each device's counters are printed.
//!
//! ```text
//! cargo run --release --example multi_device                        # every device of the first device's platform
//! cargo run --release --example multi_device -- --devices 1:0,1:1    # a LAZYCL_DEVICE-style list
//! POCL_DEVICES="pthread pthread" cargo run --example multi_device    # two CPU devices of PoCL
//! ```

use clap::Parser;
use lazycl::prelude::*;

#[derive(Parser)]
struct Cli {
    /// The devices, in the LAZYCL_DEVICE syntax (default: every device of the first
    /// device's platform)
    #[arg(long)]
    devices: Option<String>,
    /// Grid side
    #[arg(long, default_value_t = 2048)]
    side: usize,
    /// Time steps
    #[arg(long, default_value_t = 100)]
    steps: usize,
}

/// `steps` explicit Euler steps of the heat equation on `u`: the interior's Laplacian from
/// five shifted views, padded with zeros so that the border keeps its temperature. One
/// fused kernel a step on each device.
fn diffuse(mut u: Array<f32>, steps: usize) -> Result<Array<f32>> {
    let n = u.shape()[0];
    for _ in 0..steps {
        let lap = u.slice(s![..n - 2, 1..n - 1])
            + u.slice(s![2.., 1..n - 1])
            + u.slice(s![1..n - 1, ..n - 2])
            + u.slice(s![1..n - 1, 2..])
            - 4.0 * u.slice(s![1..n - 1, 1..n - 1]);
        u.assign(&u + 0.2 * lap.pad(&[(1, 1), (1, 1)], 0.0))?;
    }
    Ok(u)
}

fn main() -> Result<()> {
    let cli = Cli::parse();
    let small = std::env::var("LAZYCL_EXAMPLE_SMALL").is_ok();
    let (side, steps) = if small { (96, 10) } else { (cli.side, cli.steps) };
    let one = Context::new()?;
    let selector = match &cli.devices {
        Some(text) => DeviceSelector::parse(text)?,
        None => DeviceSelector::Platform(one.device().platform_index),
    };
    let ctx = Context::multi(selector)?;
    println!("{} device(s):", ctx.device_count());
    for d in ctx.devices() {
        println!("  {} ({})", d.name, d.index_pair());
    }
    // A hot square in a cold plate.
    let host: Vec<f32> = (0..side * side)
        .map(|k| {
            let (i, j) = (k / side, k % side);
            if (side / 4..side / 2).contains(&i) && (side / 3..side / 2).contains(&j) {
                100.0
            } else {
                0.0
            }
        })
        .collect();
    let t = std::time::Instant::now();
    let on_all = diffuse(ctx.from_shape_slice([side, side], &host)?, steps)?.to_vec()?;
    let took = t.elapsed();
    let on_one = diffuse(one.from_shape_slice([side, side], &host)?, steps)?.to_vec()?;
    let worst = on_all
        .iter()
        .zip(&on_one)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0f32, f32::max);
    println!(
        "{side}x{side}, {steps} steps in {:.1} ms; largest difference from one device {worst:.2e}",
        took.as_secs_f64() * 1e3
    );
    for (d, s) in ctx.device_stats().iter().enumerate() {
        println!(
            "  device {d}: {} kernels, {} copies in ({} bytes), {} host waits",
            s.kernels_launched, s.device_copies, s.device_copy_bytes, s.host_waits
        );
    }
    if worst > 1e-3 {
        return Err(Error::InvalidShape(format!(
            "the devices' grid differs from one device's by {worst}"
        )));
    }
    Ok(())
}
