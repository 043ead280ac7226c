//! A 256-bin histogram with atomics: each work-group counts into a local-memory histogram
//! (`atomic_add` on `__local` memory), then merges it into the global one. Checked against
//! a host count, and against the library's `bincount` (which does the same: private
//! copies per work-group, flushed atomically).
//!
//! `cargo run --release --example histogram`; `LAZYCL_EXAMPLE_SMALL=1` runs a small input.

use std::time::Instant;

use clap::Parser;
use lazycl::prelude::*;
use rand::{Rng, SeedableRng};

#[kernel]
fn histogram(data: &[u32], bins: &mut [u32]) {
    let mut local_bins = Local::<[u32; 256]>::new();
    let l = local_id(0);
    let ls = local_size(0);
    for b in (l..256).step_by(ls) {
        local_bins[b] = 0;
    }
    barrier();
    // Grid-stride loop: any global size covers any input length.
    let mut i = global_id(0);
    while i < data.len() {
        atomic_add(&mut local_bins[(data[i] % 256) as usize], 1);
        i += global_size(0);
    }
    barrier();
    for b in (l..256).step_by(ls) {
        if local_bins[b] != 0 {
            atomic_add(&mut bins[b], local_bins[b]);
        }
    }
}

/// A 256-bin histogram with local-memory atomics, checked against a host count and the
/// library's `bincount`.
#[derive(Parser)]
#[command(after_help = "2^24 values; LAZYCL_EXAMPLE_SMALL=1 counts 10,007.")]
struct Cli {}

fn main() -> lazycl::Result<()> {
    let Cli {} = Cli::parse();
    let small = std::env::var("LAZYCL_EXAMPLE_SMALL").is_ok_and(|v| v == "1");
    let n = if small { 10_007 } else { 1 << 24 };
    let ctx = Context::new()?;
    println!("histogram of {n} values into 256 bins on {}", ctx.device().name);

    // Roughly bell-shaped values: the sum of four uniform bytes, divided by four.
    let mut rng = rand::rngs::StdRng::seed_from_u64(11);
    let data: Vec<u32> = (0..n)
        .map(|_| (0..4).map(|_| rng.gen::<u8>() as u32).sum::<u32>() / 4)
        .collect();
    let d = ctx.from_slice(&data)?;
    let mut bins = ctx.zeros::<u32>([256])?;
    let k = histogram::bind(&ctx)?;

    let start = Instant::now();
    let groups = 64;
    k.global(groups * 256).local(256).launch(&d, &mut bins)?;
    let counts = bins.to_vec()?;
    let elapsed = start.elapsed();

    let mut expected = vec![0u32; 256];
    for v in &data {
        expected[(v % 256) as usize] += 1;
    }
    assert_eq!(counts, expected, "device histogram differs from the host count");
    let start = Instant::now();
    let by_library = d.bincount(256)?.to_vec()?;
    let library = start.elapsed();
    assert_eq!(by_library, expected, "bincount differs from the host count");
    println!("bincount + read back: {:.2} ms", library.as_secs_f64() * 1e3);
    let peak = (0..256).max_by_key(|&b| counts[b]).unwrap_or(0);
    println!(
        "most frequent value {peak} ({} times); total {}",
        counts[peak],
        counts.iter().sum::<u32>()
    );
    println!("launch + read back: {:.2} ms", elapsed.as_secs_f64() * 1e3);
    println!("{}", ctx.stats());
    println!("histogram: OK");
    Ok(())
}
