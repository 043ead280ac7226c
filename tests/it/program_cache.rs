//! The on-disk program cache: cold builds write, warm contexts and processes load with
//! zero builds from source, bad files are rebuilt and replaced, racing writers and
//! unwritable directories still work.

use std::path::{Path, PathBuf};

use crate::common::{child_test, ctx_in, run_child, temp_dir};
use lazycl::prelude::*;
use lazycl::CacheDir;

#[kernel]
fn scale_add(a: f32, x: &[f32], y: &mut [f32]) {
    let i = global_id(0);
    if i < y.len() {
        y[i] = a * x[i] + y[i];
    }
}

/// Runs the `#[kernel]` and a fused expression; returns (built, loaded) and checks results.
fn work(ctx: &Context) -> (u64, u64) {
    let before = ctx.stats();
    let x = ctx.from_slice(&[1.0f32, 2.0, 3.0]).unwrap();
    let mut y = ctx.from_slice(&[10.0f32, 20.0, 30.0]).unwrap();
    scale_add::bind(ctx)
        .unwrap()
        .global(3)
        .launch(2.0, &x, &mut y)
        .unwrap();
    assert_eq!(y.to_vec().unwrap(), vec![12.0, 24.0, 36.0]);
    let z = ((&x * 3.0 + 1.5).sqrt() - &y).to_vec().unwrap();
    assert_eq!(z[0], (4.5f32).sqrt() - 12.0);
    let d = ctx.stats() - before;
    (d.programs_built, d.programs_loaded)
}

fn cache_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|r| {
            r.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "bin"))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

#[test]
fn cold_then_warm_then_another_process() {
    let dir = temp_dir("cache-test", "warm");
    assert_eq!(
        work(&ctx_in(&dir)),
        (2, 0),
        "a cold cache builds both programs from source"
    );
    assert_eq!(cache_files(&dir).len(), 2, "and writes them");
    assert_eq!(work(&ctx_in(&dir)), (0, 2), "a second context loads both");
    // A second process, spawned from this test binary, loads with zero builds.
    let text = run_child(
        child_test("program_cache::child_process_loads_from_disk").env("LAZYCL_CACHE_CHILD_DIR", &dir),
    );
    assert!(text.contains("child: built 0, loaded 2"), "{text}");
}

/// The child of `cold_then_warm_then_another_process`: a context on the cache directory
/// `LAZYCL_CACHE_CHILD_DIR`, which the parent filled, loads both programs.
#[test]
#[ignore = "run by cold_then_warm_then_another_process in a child process"]
fn child_process_loads_from_disk() {
    let dir = std::env::var_os("LAZYCL_CACHE_CHILD_DIR")
        .expect("LAZYCL_CACHE_CHILD_DIR: the cache directory its parent test filled");
    let (built, loaded) = work(&ctx_in(Path::new(&dir)));
    println!("child: built {built}, loaded {loaded}");
    assert_eq!((built, loaded), (0, 2), "a warm directory loads both programs");
}

/// Without `LAZYCL_CACHE_DIR` the cache is `lazycl` in the user's cache directory
/// (`dirs::cache_dir()`): `$XDG_CACHE_HOME` when it is absolute, else `$HOME/.cache`.
#[cfg(target_os = "linux")]
#[test]
fn the_default_directory_is_the_users_cache_directory() {
    let root = temp_dir("cache-test", "default");
    std::fs::create_dir_all(&root).unwrap();
    // (what the case is, its XDG_CACHE_HOME, its HOME, where its files must go)
    let cases = [
        (
            "absolute XDG_CACHE_HOME",
            Some(root.join("xdg")),
            root.join("home1"),
            root.join("xdg").join("lazycl"),
        ),
        (
            "no XDG_CACHE_HOME",
            None,
            root.join("home2"),
            root.join("home2").join(".cache").join("lazycl"),
        ),
        (
            "relative XDG_CACHE_HOME",
            Some(PathBuf::from("relative")),
            root.join("home3"),
            root.join("home3").join(".cache").join("lazycl"),
        ),
    ];
    for (name, xdg_value, home, expected) in cases {
        let mut cmd = child_test("program_cache::child_uses_the_default_directory");
        cmd
            // (PoCL keeps its own cache under a relative XDG_CACHE_HOME too: in the temporary
            // directory, not in the checkout.)
            .current_dir(&root)
            .env_remove("LAZYCL_CACHE_DIR")
            .env_remove("LAZYCL_CACHE")
            .env("HOME", &home);
        match xdg_value {
            Some(v) => cmd.env("XDG_CACHE_HOME", v),
            None => cmd.env_remove("XDG_CACHE_HOME"),
        };
        let text = run_child(&mut cmd);
        assert!(text.contains("child: built 2, loaded 0"), "{name}: {text}");
        assert_eq!(cache_files(&expected).len(), 2, "{name}: files in {expected:?}");
    }
    let _ = std::fs::remove_dir_all(&root);
}

/// The child of `the_default_directory_is_the_users_cache_directory`: a context with no
/// cache option builds both programs in the default directory, empty in each case.
#[test]
#[ignore = "run by the_default_directory_is_the_users_cache_directory in a child process"]
fn child_uses_the_default_directory() {
    let (built, loaded) = work(&Context::new().expect("an OpenCL device"));
    println!("child: built {built}, loaded {loaded}");
    assert_eq!((built, loaded), (2, 0), "an empty directory builds both programs");
}

#[test]
fn corrupt_truncated_and_foreign_files_are_rebuilt_and_replaced() {
    let dir = temp_dir("cache-test", "bad");
    work(&ctx_in(&dir));
    let files = cache_files(&dir);
    assert_eq!(files.len(), 2);
    // Corrupt one byte in the middle of the first, truncate the second.
    let mut a = std::fs::read(&files[0]).unwrap();
    let mid = a.len() / 2;
    a[mid] ^= 0x5a;
    std::fs::write(&files[0], &a).unwrap();
    let b = std::fs::read(&files[1]).unwrap();
    std::fs::write(&files[1], &b[..b.len() / 3]).unwrap();
    assert_eq!(
        work(&ctx_in(&dir)),
        (2, 0),
        "both bad files are rebuilt, never trusted"
    );
    assert_eq!(work(&ctx_in(&dir)), (0, 2), "and replaced by good ones");
    // A foreign file: another program's (valid) file under this program's name.
    let files = cache_files(&dir);
    let other = std::fs::read(&files[1]).unwrap();
    std::fs::write(&files[0], other).unwrap();
    assert_eq!(work(&ctx_in(&dir)), (1, 1), "the foreign file is rebuilt");
    // Garbage.
    std::fs::write(&files[1], b"not a program").unwrap();
    assert_eq!(work(&ctx_in(&dir)), (1, 1));
}

#[test]
fn racing_writers_all_succeed() {
    let dir = temp_dir("cache-test", "race");
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..4).map(|_| s.spawn(|| work(&ctx_in(&dir)))).collect();
        for h in handles {
            let (built, loaded) = h.join().unwrap();
            assert_eq!(built + loaded, 2);
        }
    });
    assert_eq!(work(&ctx_in(&dir)), (0, 2));
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_none_or(|x| x != "bin"))
        .collect();
    assert!(
        leftovers.is_empty(),
        "no temporary files are left behind: {leftovers:?}"
    );
}

#[test]
fn an_unwritable_directory_degrades_to_memory() {
    // A path below a regular file cannot be created.
    let file = temp_dir("cache-test", "file");
    std::fs::write(&file, b"x").unwrap();
    let ctx = ctx_in(&file.join("sub"));
    assert_eq!(work(&ctx), (2, 0));
    assert_eq!(work(&ctx), (0, 0), "the in-memory cache still works");
    let off = Context::builder().program_cache(CacheDir::Off).build().unwrap();
    assert_eq!(work(&off), (2, 0));
}
