//! Checks the array algorithms whose work-groups wait on each other (a decoupled
//! look-back over tiles: `cumsum` (alone and with a consumer in its store),
//! `sort`/`argsort`, `compress`/`nonzero`; private copies
//! flushed by atomics: `scatter_add` into few rows) against the host at sizes of many
//! tiles, a few times each, and fails on the first mismatch. The tests cover every shape
//! and type on small arrays; this is the check for a device's memory ordering at scale
//! (on the H200 it caught a scan whose published totals raced their flags).
//!
//!   cargo run --release --example large_check            # up to 2^26 elements
//!   cargo run --release --example large_check -- 28      # up to 2^28
//!
//! `LAZYCL_EXAMPLE_SMALL=1` (as `make test` runs the examples) stops at 2^18.

use clap::Parser;
use lazycl::{scatter_add, Axis, Context};

/// Checks the array algorithms whose work-groups wait on each other (scans, sorts,
/// compaction, atomics) against the host at sizes of many tiles, from 2^16 up.
#[derive(Parser)]
struct Cli {
    /// The largest size's power of two [default: 26; 18 with LAZYCL_EXAMPLE_SMALL set]
    #[arg(value_name = "MAX_POWER")]
    max: Option<u32>,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let cli = Cli::parse();
    let small = std::env::var_os("LAZYCL_EXAMPLE_SMALL").is_some();
    let max = cli.max.unwrap_or(if small { 18 } else { 26 });
    let ctx = Context::new()?;
    println!("device: {}", ctx.device().name);
    let hash = |i: u64| i.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    let mut failed = Vec::new();
    let mut check = |what: String, ok: bool| {
        println!("{what}: {}", if ok { "ok" } else { "MISMATCH" });
        if !ok {
            failed.push(what);
        }
    };
    for p in (16..=max).step_by(2) {
        let n = 1usize << p;
        // Scans of small integers: exact.
        let small: Vec<i32> = (0..n).map(|i| (i % 7) as i32 - 3).collect();
        let mut acc = 0i64;
        let sums: Vec<i64> = small
            .iter()
            .map(|&v| {
                acc += i64::from(v);
                acc
            })
            .collect();
        let s = ctx.from_slice(&small)?.cast::<i64>();
        for _ in 0..2 {
            check(format!("2^{p} cumsum"), s.cumsum(Axis(0)).to_vec()? == sums);
        }
        // A consumer computed in the scan's store.
        let doubled: Vec<i64> = sums.iter().map(|v| 2 * v - 1).collect();
        check(
            format!("2^{p} 2 cumsum - 1"),
            (s.cumsum(Axis(0)) * 2 - 1).to_vec()? == doubled,
        );
        // Sorts of hashed keys, against the host's stable sort.
        let keys: Vec<i32> = (0..n as u64)
            .map(|i| (hash(i) >> 40) as i32 - (1 << 23))
            .collect();
        let mut order: Vec<u32> = (0..n as u32).collect();
        order.sort_by_key(|&i| keys[i as usize]);
        let sorted: Vec<i32> = order.iter().map(|&i| keys[i as usize]).collect();
        let k = ctx.from_slice(&keys)?;
        for _ in 0..2 {
            check(format!("2^{p} sort"), k.sort()?.to_vec()? == sorted);
            check(format!("2^{p} argsort"), k.argsort()?.to_vec()? == order);
        }
        // Compaction by a mask of half.
        let keep: Vec<bool> = (0..n as u64).map(|i| hash(i) >> 63 == 1).collect();
        let picked: Vec<i32> = keys
            .iter()
            .zip(&keep)
            .filter(|(_, &m)| m)
            .map(|(&v, _)| v)
            .collect();
        let positions: Vec<u32> = (0..n).filter(|&i| keep[i]).map(|i| i as u32).collect();
        let m = ctx.from_slice(&keep)?;
        for _ in 0..2 {
            check(format!("2^{p} compress"), k.compress(&m)?.to_vec()? == picked);
            check(format!("2^{p} nonzero"), m.nonzero()?.to_vec()? == positions);
        }
        // Counts into 256 bins: every work-group's private copy added in.
        let bins: Vec<u32> = (0..n as u64).map(|i| (hash(i) >> 56) as u32).collect();
        let mut want = vec![0u32; 256];
        for &b in &bins {
            want[b as usize] += 1;
        }
        let b = ctx.from_slice(&bins)?;
        for _ in 0..2 {
            check(format!("2^{p} bincount"), b.bincount(256)?.to_vec()? == want);
        }
        let mut sums = ctx.zeros::<i64>([16])?;
        scatter_add(&mut sums, Axis(0), &(&b % 16u32), 1i64)?;
        let mut want16 = vec![0i64; 16];
        for &x in &bins {
            want16[(x % 16) as usize] += 1;
        }
        check(format!("2^{p} scatter_add"), sums.to_vec()? == want16);
    }
    if failed.is_empty() {
        println!("all checks passed");
        Ok(())
    } else {
        Err(format!("mismatches: {failed:?}").into())
    }
}
