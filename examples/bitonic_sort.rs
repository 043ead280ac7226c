//! Bitonic sort of random `i32`s with one tiny compare-exchange kernel launched once per
//! step (136 launches for 64Ki elements), checked against a host sort.
//!
//! `cargo run --release --example bitonic_sort [-- --n N]`; `LAZYCL_EXAMPLE_SMALL=1` sorts
//! 1000 elements. Any `n` works: the network runs over the next power of two and treats
//! the missing elements as +infinity.

use std::time::Instant;

use lazycl::prelude::*;
use rand::{Rng, SeedableRng};

/// Compare-exchange of each element with its partner `i ^ x`, smaller value first.
#[kernel]
fn swap_pairs(arr: &mut [i32], x: i32, n: i32) {
    let i = global_id(0) as i32;
    let j = i ^ x;
    if i < j && j < n && arr[j as usize] < arr[i as usize] {
        let tmp = arr[i as usize];
        arr[i as usize] = arr[j as usize];
        arr[j as usize] = tmp;
    }
}

/// The launches of the sorting network: for each block size `k`, one "flip" step (`k - 1`)
/// then half-cleaner steps `k/4, k/8, ..., 1` (with the flip, every comparator sorts
/// ascending, so the kernel needs no direction).
fn sort(k: &swap_pairs::Bound, arr: &mut Array<i32>) -> lazycl::Result<u32> {
    let n = arr.len();
    let padded = n.next_power_of_two().max(2);
    let mut launches = 0;
    let mut block = 2;
    while block <= padded {
        k.global(padded).launch(arr, (block - 1) as i32, n as i32)?;
        launches += 1;
        let mut half = block / 4;
        while half >= 1 {
            k.global(padded).launch(arr, half as i32, n as i32)?;
            launches += 1;
            half /= 2;
        }
        block *= 2;
    }
    Ok(launches)
}

fn main() -> lazycl::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let small = std::env::var("LAZYCL_EXAMPLE_SMALL").is_ok_and(|v| v == "1");
    let n = match args.iter().position(|a| a == "--n") {
        Some(p) => args.get(p + 1).and_then(|v| v.parse().ok()).unwrap_or_else(|| {
            eprintln!("usage: bitonic_sort [--n N]");
            std::process::exit(2)
        }),
        None if small => 1000,
        None => 64 * 1024,
    };
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

    let mut expected = data;
    expected.sort_unstable();
    assert_eq!(sorted, expected, "device result differs from the host sort");
    println!(
        "{launches} launches + read back: {:.2} ms",
        elapsed.as_secs_f64() * 1e3
    );
    println!("{}", ctx.stats() - before);
    println!("bitonic_sort: OK");
    Ok(())
}
