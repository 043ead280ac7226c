//! What the program cache's integrity check costs a load: reading a cache file (from the
//! page cache, as a warm load does) and checking its contents, with the hand-written
//! FNV-1a the cache used before and the crates considered in its place (crc32fast,
//! xxhash-rust's xxh3, blake3), at sizes of real device binaries (PoCL's are 48-380 KB,
//! GPU binaries a few KB to a few MB). `cargo bench --bench cache_checksum`; figures and
//! the choice in RESULTS.md#rule-cache-checksum.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

/// The FNV-1a, 64 bits, that `runtime/src/backend/cache.rs` used (the baseline).
fn fnv1a(data: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in data {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// Bytes that look like a binary to no compressor or branch predictor (splitmix64).
fn bytes(n: usize) -> Vec<u8> {
    let mut s: u64 = 0x9e37_79b9_7f4a_7c15;
    (0..n)
        .map(|_| {
            s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = s;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            (z ^ (z >> 31)) as u8
        })
        .collect()
}

/// One way of checking a file's contents: its name in the figures and the function.
struct Check {
    name: &'static str,
    sum: fn(&[u8]) -> u64,
}

const CHECKS: &[Check] = &[
    Check {
        name: "read only",
        sum: |d| d.len() as u64,
    },
    Check {
        name: "read + fnv1a (before)",
        sum: fnv1a,
    },
    Check {
        name: "read + crc32fast",
        sum: |d| u64::from(crc32fast::hash(d)),
    },
    Check {
        name: "read + xxh3_64",
        sum: xxhash_rust::xxh3::xxh3_64,
    },
    Check {
        name: "read + blake3",
        sum: |d| u64::from_le_bytes(blake3::hash(d).as_bytes()[..8].try_into().unwrap()),
    },
];

fn load(c: &mut Criterion) {
    let dir = std::env::temp_dir().join(format!("lazycl-bench-checksum-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    for size in [4 << 10, 64 << 10, 256 << 10, 1 << 20, 4 << 20] {
        let path = dir.join(format!("{size}.bin"));
        std::fs::write(&path, bytes(size)).expect("a temporary file");
        let mut group = c.benchmark_group("cache_load");
        group.throughput(Throughput::Bytes(size as u64));
        for check in CHECKS {
            group.bench_with_input(BenchmarkId::new(check.name, size), &path, |b, path| {
                b.iter(|| {
                    let data = std::fs::read(path).expect("the file");
                    black_box((check.sum)(black_box(&data)))
                })
            });
        }
        group.finish();
    }
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    targets = load
}
criterion_main!(benches);
