//! Bitonic sort of random `i32`s with one tiny compare-exchange kernel launched once per
//! step (136 launches for 64Ki elements), checked against a host sort and timed against
//! the library's `sort()` (a radix sort: a handful of launches).
//!
//! `cargo run --release --example bitonic_sort [-- --n N]`; `LAZYCL_EXAMPLE_SMALL=1` sorts
//! 1000 elements. Any `n` works: the network runs over the next power of two and treats
//! the missing elements as +infinity.

use std::time::Instant;

use clap::Parser;
use lazycl::prelude::*;
use rand::{Rng, SeedableRng};

#[path = "common/bitonic.rs"]
mod bitonic;
use bitonic::swap_pairs;

/// Sorts `arr` in place with the network's launches; returns how many there were.
fn sort(k: &swap_pairs::Bound, arr: &mut Array<i32>) -> lazycl::Result<u32> {
    let n = arr.len();
    let padded = n.next_power_of_two().max(2);
    let steps = bitonic::steps(padded);
    for &x in &steps {
        k.global(padded).launch(arr, x, n as i32)?;
    }
    Ok(steps.len() as u32)
}

/// Bitonic sort of random i32 with one compare-exchange kernel launched per step, checked
/// against a host sort and timed against the library's `sort()`.
#[derive(Parser)]
struct Cli {
    /// Elements to sort (any number: the network runs over the next power of two)
    /// [default: 65536; 1000 with LAZYCL_EXAMPLE_SMALL=1]
    #[arg(long, value_name = "N")]
    n: Option<usize>,
}

fn main() -> lazycl::Result<()> {
    let cli = Cli::parse();
    let small = std::env::var("LAZYCL_EXAMPLE_SMALL").is_ok_and(|v| v == "1");
    let n = cli.n.unwrap_or(if small { 1000 } else { 64 * 1024 });
    let ctx = Context::new()?;
    println!("bitonic sort of {n} random i32 on {}", ctx.device().name);

    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let data: Vec<i32> = (0..n).map(|_| rng.gen()).collect();
    let mut arr = ctx.from_slice(&data)?;
    let k = swap_pairs::bind(&ctx)?;
    arr.eval()?;
    ctx.synchronize()?;

    let before = ctx.stats();
    let start = Instant::now();
    let launches = sort(&k, &mut arr)?;
    let sorted = arr.to_vec()?;
    let elapsed = start.elapsed();

    let mut expected = data.clone();
    expected.sort_unstable();
    assert_eq!(sorted, expected, "device result differs from the host sort");
    println!(
        "{launches} launches + read back: {:.2} ms",
        elapsed.as_secs_f64() * 1e3
    );
    // The same with the library's sort.
    let unsorted = ctx.from_slice(&data)?;
    unsorted.eval()?;
    ctx.synchronize()?;
    let start = Instant::now();
    let by_library = unsorted.sort()?.to_vec()?;
    let library = start.elapsed();
    assert_eq!(by_library, expected, "sort() differs from the host sort");
    println!("sort() + read back: {:.2} ms", library.as_secs_f64() * 1e3);
    println!("{}", ctx.stats() - before);
    println!("bitonic_sort: OK");
    Ok(())
}
