//! 2-D heat diffusion with a 5-point stencil, written twice: as a `#[kernel]` (each 16x16
//! work-group loads its tile and a one-cell halo into local memory, waits at a
//! `barrier()`, then updates from the tile), and as array code over slices (the interior
//! of the next grid is assigned from five shifted views of the current one: one fused
//! kernel per step, reading the views in place and writing only the interior). Both are
//! checked against the same update on the host.
//!
//! `cargo run --release --example heat_stencil`; `LAZYCL_EXAMPLE_SMALL=1` runs a small grid.

// `s![1..-1]` counts from the end of the axis (ndarray's slices), not an empty range.
#![allow(clippy::reversed_empty_ranges)]

use std::time::Instant;

use clap::Parser;
use lazycl::prelude::*;

#[path = "common/host_float.rs"]
mod host_float;
use host_float::HostFloat;

/// One explicit Euler step; the border keeps its (fixed) temperature.
#[kernel]
fn heat_step<T: Float>(u: &[T], out: &mut [T], w: usize, h: usize, alpha: T) {
    // The work-group's 16x16 tile and its one-cell halo.
    let mut tile = Local::<[T; (16 + 2) * (16 + 2)]>::new();
    let gx = global_id(0);
    let gy = global_id(1);
    let lx = local_id(0) + 1;
    let ly = local_id(1) + 1;
    // The global size is rounded up to whole tiles: clamp reads to the grid.
    let cx = gx.min(w - 1);
    let cy = gy.min(h - 1);
    tile[ly * 18 + lx] = u[cy * w + cx];
    if lx == 1 {
        tile[ly * 18] = u[cy * w + if cx > 0 { cx - 1 } else { 0 }];
    }
    if lx == 16 {
        tile[ly * 18 + 17] = u[cy * w + (cx + 1).min(w - 1)];
    }
    if ly == 1 {
        tile[lx] = u[(if cy > 0 { cy - 1 } else { 0 }) * w + cx];
    }
    if ly == 16 {
        tile[17 * 18 + lx] = u[(cy + 1).min(h - 1) * w + cx];
    }
    barrier();
    if gx < w && gy < h {
        let c = tile[ly * 18 + lx];
        out[gy * w + gx] = if gx == 0 || gy == 0 || gx == w - 1 || gy == h - 1 {
            c
        } else {
            let around = tile[ly * 18 + lx - 1]
                + tile[ly * 18 + lx + 1]
                + tile[(ly - 1) * 18 + lx]
                + tile[(ly + 1) * 18 + lx];
            c + alpha * (around - (4.0 as T) * c)
        };
    }
}

fn host_step(u: &[f64], out: &mut [f64], w: usize, h: usize, alpha: f64) {
    for y in 0..h {
        for x in 0..w {
            let c = u[y * w + x];
            out[y * w + x] = if x == 0 || y == 0 || x == w - 1 || y == h - 1 {
                c
            } else {
                let around = u[y * w + x - 1] + u[y * w + x + 1] + u[(y - 1) * w + x] + u[(y + 1) * w + x];
                c + alpha * (around - 4.0 * c)
            };
        }
    }
}

/// The largest elementwise difference of a grid from the host's.
fn max_abs_diff<T: HostFloat>(p: &[T], q: &[f64]) -> f64 {
    p.iter()
        .zip(q)
        .map(|(a, b)| (a.to_f64() - b).abs())
        .fold(0.0, f64::max)
}

/// 2-D heat diffusion with a 5-point stencil, as a `#[kernel]` with a local-memory tile
/// and as array code over slices, both checked against the host.
#[derive(Parser)]
#[command(after_help = "A 1024x768 grid, 500 steps; LAZYCL_EXAMPLE_SMALL=1 runs 45x33, 20 steps.")]
struct Cli {}

fn main() -> lazycl::Result<()> {
    let Cli {} = Cli::parse();
    let small = std::env::var("LAZYCL_EXAMPLE_SMALL").is_ok_and(|v| v == "1");
    let (w, h, steps) = if small { (45, 33, 20) } else { (1024, 768, 500) };
    let ctx = Context::new()?;
    println!(
        "heat diffusion on a {w}x{h} grid, {steps} steps, device {}",
        ctx.device().name
    );
    run::<f32>(&ctx, w, h, steps, 1e-3)?;
    if ctx.device().fp64 {
        run::<f64>(&ctx, w, h, steps, 1e-9)?;
    } else {
        println!("f64: the device has no fp64, skipped");
    }
    println!("{}", ctx.stats());
    println!("heat_stencil: OK");
    Ok(())
}

/// The example for element type `T`, checked against the host in `f64` within `tolerance`.
fn run<T: HostFloat + heat_step::Types>(
    ctx: &Context,
    w: usize,
    h: usize,
    steps: usize,
    tolerance: f64,
) -> lazycl::Result<()> {
    let alpha = 0.2f64;
    // A hot square in a cold plate with a warm left edge.
    let mut init = vec![0.0f64; w * h];
    for y in 0..h {
        for x in 0..w {
            let hot = (x * 3 / w == 1) && (y * 3 / h == 1);
            init[y * w + x] = if hot {
                100.0
            } else if x == 0 {
                50.0
            } else {
                ((x * 7 + y * 13) % 5) as f64
            };
        }
    }
    let init_t: Vec<T> = init.iter().map(|&v| T::of(v)).collect();
    let mut u = ctx.from_slice(&init_t)?;
    let mut v = ctx.zeros::<T>([w * h])?;
    let k = heat_step::bind::<T>(ctx)?;
    let global = [w.div_ceil(16) * 16, h.div_ceil(16) * 16];

    let start = Instant::now();
    for _ in 0..steps {
        k.global(global)
            .local([16, 16])
            .launch(&u, &mut v, w, h, T::of(alpha))?;
        std::mem::swap(&mut u, &mut v);
    }
    let result = u.to_vec()?;
    let elapsed = start.elapsed();

    // The same steps as array code: the next grid's interior from five shifted views of
    // the current grid (the border keeps its temperature in both grids).
    let mut p = ctx.from_shape_slice([h, w], &init_t)?;
    let mut q = p.clone();
    let start = Instant::now();
    for _ in 0..steps {
        let c = p.slice(s![1..-1, 1..-1]);
        let around = &p.slice(s![1..-1, ..-2])
            + &p.slice(s![1..-1, 2..])
            + &p.slice(s![..-2, 1..-1])
            + &p.slice(s![2.., 1..-1]);
        q.slice_mut(s![1..-1, 1..-1])
            .assign(&c + (around - &c * T::of(4.0)) * T::of(alpha))?;
        std::mem::swap(&mut p, &mut q);
    }
    let sliced = p.to_vec()?;
    let elapsed_slices = start.elapsed();

    let (mut a, mut b) = (init, vec![0.0f64; w * h]);
    for _ in 0..steps {
        host_step(&a, &mut b, w, h, alpha);
        std::mem::swap(&mut a, &mut b);
    }
    let max_err = max_abs_diff(&result, &a);
    assert!(max_err < tolerance, "max abs error {max_err}");
    let max_err_slices = max_abs_diff(&sliced, &a);
    assert!(
        max_err_slices < tolerance,
        "slices: max abs error {max_err_slices}"
    );
    let name = T::DTYPE.rust_name();
    println!(
        "{name}: center temperature {:.3}, max abs error vs host {max_err:e}",
        result[(h / 2) * w + w / 2].to_f64()
    );
    println!(
        "{name}: {steps} steps + read back: {:.2} ms",
        elapsed.as_secs_f64() * 1e3
    );
    println!(
        "{name}: the same with slices: {:.2} ms, max abs error vs host {max_err_slices:e}",
        elapsed_slices.as_secs_f64() * 1e3
    );
    Ok(())
}
