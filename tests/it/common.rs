//! Helpers shared by the integration tests: one context, seeded random data, property
//! tests, child processes.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use lazycl::{CacheDir, Context};
use proptest::strategy::Strategy;
use proptest::test_runner::{Config as ProptestConfig, RngSeed, TestRunner};
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
            u32 => 0u32, u32::MAX; i64 => i64::MIN, i64::MAX; u64 => 0u64, u64::MAX;
            i8 => i8::MIN, i8::MAX; u8 => 0u8, u8::MAX; i16 => i16::MIN, i16::MAX; u16 => 0u16, u16::MAX);

macro_rules! random_half {
    ($($t:ty),*) => {$(
        impl Random for $t {
            fn random_vec(rng: &mut StdRng, n: usize) -> Vec<Self> {
                let mut v: Vec<$t> = f32::random_vec(rng, n).into_iter().map(<$t>::from_f32).collect();
                if n > 0 && v.iter().all(|x| x.to_f32() == 0.0) { v[0] = <$t>::ONE; }
                v
            }
        }
    )*};
}
random_half!(lazycl::f16, lazycl::bf16);

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

/// A command that runs this binary's ignored test `name` (`module::test`, the child) alone
/// in a child process; the parent adds the child's environment and runs it with
/// [`run_child`].
pub fn child_test(name: &str) -> std::process::Command {
    let mut command = std::process::Command::new(std::env::current_exe().unwrap());
    command.args(["--ignored", "--exact", name, "--nocapture", "--test-threads=1"]);
    command
}

/// Runs a [`child_test`] command; its stdout then stderr. Panics, with the command (its
/// environment included) and that text, unless the child ran exactly one test and it
/// passed (a misspelled name runs none).
pub fn run_child(command: &mut std::process::Command) -> String {
    let out = command.output().expect("the test binary runs as a child");
    let text = String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && text.contains("test result: ok. 1 passed"),
        "the child test failed or did not run: {command:?}\n{text}"
    );
    text
}

/// Checks `test` on `cases` inputs drawn from `strategy` (proptest). The seed is fixed, so
/// every run checks the same inputs (and the three runs of `make test` build no program
/// twice: the caches on disk have them); no failure files are written. A failing input
/// (a panic in `test`) shrinks to a minimal one, within 1000 tries and three minutes (each
/// try flushes on the device), and the test panics with it.
pub fn check_property<S>(seed: u64, cases: u32, strategy: S, test: impl Fn(S::Value))
where
    S: Strategy,
    S::Value: std::fmt::Debug,
{
    let config = ProptestConfig {
        cases,
        failure_persistence: None,
        rng_seed: RngSeed::Fixed(seed),
        max_shrink_iters: 1000,
        max_shrink_time: 180_000,
        ..ProptestConfig::default()
    };
    let result = TestRunner::new(config).run(&strategy, |input| {
        test(input);
        Ok(())
    });
    if let Err(failure) = result {
        panic!("{failure}");
    }
}

/// The case count of a property test: `variable` (a longer run) when set, else `default`.
pub fn cases(variable: &str, default: u32) -> u32 {
    std::env::var(variable)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}
