//! Helpers shared by the integration tests: one context, seeded random data.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use lazycl::{CacheDir, Context};
use rand::distributions::{Distribution, Uniform};
use rand::rngs::StdRng;
use rand::SeedableRng;

/// A context on the default device (PoCL in CI).
pub fn ctx() -> Context {
    Context::new().expect("an OpenCL device (run `make setup`)")
}

/// A builder for a context like [`ctx`]'s, for tests that set options.
pub fn builder() -> lazycl::ContextBuilder {
    Context::builder()
}

/// A seeded generator, different per `seed`.
pub fn rng(seed: u64) -> StdRng {
    StdRng::seed_from_u64(0x1a2b_c3d4 ^ seed)
}

/// Random values of a type, never all zero.
pub trait Random: Sized + Copy {
    fn random_vec(rng: &mut StdRng, n: usize) -> Vec<Self>;
}

macro_rules! random_num {
    ($($t:ty => $lo:expr, $hi:expr);*) => {$(
        impl Random for $t {
            fn random_vec(rng: &mut StdRng, n: usize) -> Vec<Self> {
                let d = Uniform::new($lo, $hi);
                let mut v: Vec<$t> = (0..n).map(|_| d.sample(rng)).collect();
                if n > 0 && v.iter().all(|x| *x == <$t>::default()) { v[0] = 1 as $t; }
                v
            }
        }
    )*};
}
random_num!(f32 => -100.0f32, 100.0f32; f64 => -100.0f64, 100.0f64; i32 => i32::MIN, i32::MAX;
            u32 => 0u32, u32::MAX; i64 => i64::MIN, i64::MAX; u64 => 0u64, u64::MAX);

impl Random for bool {
    fn random_vec(rng: &mut StdRng, n: usize) -> Vec<Self> {
        let d = Uniform::new(0u8, 2);
        let mut v: Vec<bool> = (0..n).map(|_| d.sample(rng) == 1).collect();
        if n > 0 && !v.iter().any(|b| *b) {
            v[0] = true;
        }
        v
    }
}

/// A fresh directory (removed if it exists) under the system's temporary one, for test
/// file `file`'s case `name`, apart from other processes' (`lazycl-<file>-<pid>-<name>`).
pub fn temp_dir(file: &str, name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("lazycl-{file}-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// A context whose program cache is `dir`.
pub fn ctx_in(dir: &Path) -> Context {
    Context::builder()
        .program_cache(CacheDir::Dir(dir.to_path_buf()))
        .build()
        .expect("an OpenCL device")
}
