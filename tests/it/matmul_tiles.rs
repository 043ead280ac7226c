//! The disk cache's table of GEMM tiles is user input: entries outside the device's
//! limits are never used (not even tried), garbage lines are skipped, an entry not known
//! to run is tried once before it is used, and one whose trial fails is marked bad and
//! never tried again. Every product is checked against a host product; `explain` shows
//! which tile a product takes, and the counters whether a tile was tried or discarded.

use std::path::{Path, PathBuf};
use std::time::Duration;

use lazycl::{CacheDir, Context, Stats, Tuning};
use ndarray::Array2;

use crate::common::{rng, Random};

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("lazycl-tiles-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn ctx_in(dir: &Path, tuning: Tuning) -> Context {
    Context::builder()
        .program_cache(CacheDir::Dir(dir.to_path_buf()))
        .tuning(tuning)
        .build()
        .expect("an OpenCL device")
}

/// Writes the context's table of tiles: its first line, then `lines`.
fn write_table(ctx: &Context, lines: &[&str]) {
    let (path, first) = ctx.tile_table_file().expect("a disk cache");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, format!("{first}\n{}\n", lines.join("\n"))).unwrap();
}

/// The context's table of tiles as written, first line included.
fn read_table(ctx: &Context) -> String {
    std::fs::read_to_string(ctx.tile_table_file().unwrap().0).unwrap_or_default()
}

/// The products used, each of its own shape class (all too small for a search), as
/// `(m, k, n)` and the class's words in the table.
const SHAPES: [((usize, usize, usize), &str); 4] = [
    ((100, 100, 100), "f32 cc 2 2 2 0"),
    ((30, 30, 30), "f32 cc 1 1 1 0"),
    ((100, 30, 100), "f32 cc 2 2 1 0"),
    ((30, 100, 30), "f32 cc 1 1 2 0"),
];

/// Computes the product of random `m x k` and `k x n` matrices, checks it against the
/// host's, and returns what it did and which tile a product of its shape now takes
/// (`explain`'s line of its blocks).
fn product(ctx: &Context, (m, k, n): (usize, usize, usize)) -> (Stats, String) {
    let va = f32::random_vec(&mut rng(m as u64), m * k);
    let vb = f32::random_vec(&mut rng(n as u64 + 1), k * n);
    let before = ctx.stats();
    let a = ctx.from_shape_slice([m, k], &va).unwrap();
    let b = ctx.from_shape_slice([k, n], &vb).unwrap();
    let got = a.matmul(&b).to_vec().unwrap();
    let ran = ctx.stats() - before;
    let ha = Array2::from_shape_vec((m, k), va.iter().map(|&x| x as f64).collect()).unwrap();
    let hb = Array2::from_shape_vec((k, n), vb.iter().map(|&x| x as f64).collect()).unwrap();
    let want = ha.dot(&hb);
    let scale = ha.mapv(f64::abs).dot(&hb.mapv(f64::abs));
    for ((g, w), s) in got.iter().zip(want.iter()).zip(scale.iter()) {
        assert!(
            (*g as f64 - w).abs() <= 1e-5 * (s + 1.0),
            "{m}x{k}x{n}: got {g}, want {w}"
        );
    }
    (ran, tile_line(&a.matmul(&b).explain().unwrap()))
}

/// The part of an explanation that names a product's tile.
fn tile_line(explained: &str) -> String {
    let line = explained
        .lines()
        .find(|l| l.contains("blocks of"))
        .unwrap_or_else(|| panic!("a matrix product: {explained}"));
    line[line.find("blocks of").unwrap()..].to_string()
}

/// The tile each shape takes without a table.
fn defaults() -> Vec<String> {
    let dir = temp_dir("defaults");
    let c = ctx_in(&dir, Tuning::default());
    let lines = SHAPES
        .iter()
        .map(|&((m, k, n), _)| {
            let a = c.zeros::<f32>([m, k]).unwrap();
            let b = c.zeros::<f32>([k, n]).unwrap();
            tile_line(&a.matmul(&b).explain().unwrap())
        })
        .collect();
    let _ = std::fs::remove_dir_all(&dir);
    lines
}

#[test]
fn entries_outside_the_devices_limits_are_never_used_or_tried() {
    let dir = temp_dir("limits");
    let c = ctx_in(&dir, Tuning::default());
    let device = c.device();
    assert!(device.max_work_group_size < 16384, "{device:?}");
    let class = |i: usize| SHAPES[i].1;
    write_table(
        &c,
        &[
            // 4096 work-items of 256 accumulators: 4 MiB of live values per work-group,
            // which crashed PoCL inside its launch. Marked as known to run.
            &format!("{} | 1024 1024 4 16 16 16 0 | ok", class(0)),
            // Work-groups of 16384 work-items, within every other limit.
            &format!("{} | 128 128 128 1 1 1 0 | ok", class(1)),
            // 4 MiB of local memory.
            &format!("{} | 256 256 1024 4 4 4 0 | ok", class(2)),
            // 1024 accumulators per work-item, whose compile took minutes. Not known to
            // run, yet not even tried.
            &format!("{} | 1024 1024 4 32 32 16 0", class(3)),
        ],
    );
    let defaults = defaults();
    for (i, &(shape, _)) in SHAPES.iter().enumerate() {
        let (ran, tile) = product(&c, shape);
        assert_eq!(ran.gemm_tile_trials, 0, "{shape:?}: {ran:?}");
        assert_eq!(ran.gemm_tiles_discarded, 1, "{shape:?}: {ran:?}");
        assert_eq!(tile, defaults[i], "{shape:?} takes the default tile");
    }
    let table = read_table(&c);
    for (_, class) in SHAPES {
        assert!(
            table
                .lines()
                .any(|l| l.starts_with(class) && l.ends_with(" | bad")),
            "{class} is marked bad:\n{table}"
        );
    }
    // Another context (as another process would be) skips them without a look.
    let c2 = ctx_in(&dir, Tuning::default());
    for (i, &(shape, _)) in SHAPES.iter().enumerate() {
        let (ran, tile) = product(&c2, shape);
        assert_eq!(
            (ran.gemm_tile_trials, ran.gemm_tiles_discarded),
            (0, 0),
            "{shape:?}"
        );
        assert_eq!(tile, defaults[i]);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn garbage_in_the_table_is_skipped_and_a_good_entry_is_tried_once() {
    let dir = temp_dir("garbage");
    let c = ctx_in(&dir, Tuning::default());
    let (m, k, n) = SHAPES[0].0;
    let good = format!("{} | 32 32 8 2 2 2 0", SHAPES[0].1);
    let long = "9".repeat(10_000);
    let class1 = SHAPES[1].1;
    write_table(
        &c,
        &[
            "",
            "garbage",
            "|||",
            " | ",
            class1,
            &format!("{class1} | 64 64 8 4 4"),
            &format!("{class1} | 64 64 8 4 4 4 0 0"),
            &format!("{class1} | 64 64 8 4 -4 4 0"),
            &format!("{class1} | 64 64 8 4 99999 4 0"),
            &format!("{class1} | 64 64 8 4 4.0 4 0"),
            &format!("{class1} | 64 64 8 4 4 4 0 | maybe"),
            &format!("{class1} | 64 64 8 4 4 4 0 | ok | ok"),
            &format!("{class1} | {long} 64 8 4 4 4 0"),
            "\u{0}\u{7f}\u{fffd} | \u{1b}[31m",
            &good,
        ],
    );
    let defaults = defaults();
    let (ran, tile) = product(&c, (m, k, n));
    assert_eq!(
        (ran.gemm_tile_trials, ran.gemm_tiles_discarded),
        (1, 0),
        "{ran:?}"
    );
    assert!(
        tile.starts_with("blocks of 32 x 32, 2 x 2 per work-item, steps of 8"),
        "{tile}"
    );
    let (ran, tile) = product(&c, SHAPES[1].0);
    assert_eq!(
        (ran.gemm_tile_trials, ran.gemm_tiles_discarded),
        (0, 0),
        "{ran:?}"
    );
    assert_eq!(tile, defaults[1], "the garbage entries of its class are skipped");
    let table = read_table(&c);
    assert!(
        table.contains(&format!("\n{good} | ok\n")),
        "the tried entry is known to run:\n{table}"
    );
    assert!(
        !table.contains("garbage"),
        "rewritten without the garbage:\n{table}"
    );
    // Known to run: another context takes it without a trial.
    let c2 = ctx_in(&dir, Tuning::default());
    let (ran, tile) = product(&c2, (m, k, n));
    assert_eq!(
        (ran.gemm_tile_trials, ran.gemm_tiles_discarded),
        (0, 0),
        "{ran:?}"
    );
    assert!(tile.starts_with("blocks of 32 x 32"), "{tile}");

    // Whole files that are no table: each ignored, the default taken, nothing tried.
    let (path, first) = c.tile_table_file().unwrap();
    let not_utf8 = [first.as_bytes(), b"\n", good.as_bytes(), b" | ok\n\xff\xfe\x00\n"].concat();
    let another_device = format!("{first} (another)\n{good} | ok\n").into_bytes();
    let huge = format!("{first}\n{good} | ok\n{}", "# padding\n".repeat(120_000)).into_bytes();
    let files: [(&str, Vec<u8>); 5] = [
        ("not UTF-8", not_utf8),
        ("of another device", another_device),
        ("larger than a table", huge),
        ("empty", Vec::new()),
        ("a line without its end", first.clone().into_bytes()),
    ];
    for (what, bytes) in files {
        std::fs::write(&path, bytes).unwrap();
        let c = ctx_in(&dir, Tuning::default());
        let (ran, tile) = product(&c, (m, k, n));
        assert_eq!(
            (ran.gemm_tile_trials, ran.gemm_tiles_discarded),
            (0, 0),
            "{what}: {ran:?}"
        );
        assert_eq!(tile, defaults[0], "{what}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_entry_whose_trial_fails_is_discarded_and_never_tried_again() {
    let dir = temp_dir("trial");
    // Every trial takes longer than no time at all: each fails.
    let failing = Tuning {
        tile_trial_limit: Some(Duration::ZERO),
        ..Tuning::default()
    };
    let c = ctx_in(&dir, failing);
    let (shape, class) = SHAPES[0];
    let (shape1, class1) = SHAPES[1];
    write_table(
        &c,
        &[
            &format!("{class} | 32 32 8 2 2 2 0"),
            // A trial that never ended: its process died or was stopped.
            &format!("{class1} | 32 32 8 2 2 2 0 | trial"),
        ],
    );
    let defaults = defaults();
    let (ran, tile) = product(&c, shape);
    assert_eq!(
        (ran.gemm_tile_trials, ran.gemm_tiles_discarded),
        (1, 1),
        "{ran:?}"
    );
    assert_eq!(tile, defaults[0], "the default takes its place");
    let (ran, tile) = product(&c, shape1);
    assert_eq!(
        (ran.gemm_tile_trials, ran.gemm_tiles_discarded),
        (0, 0),
        "{ran:?}"
    );
    assert_eq!(tile, defaults[1], "an unfinished trial is not tried again");
    let table = read_table(&c);
    assert!(
        table.contains(&format!("\n{class} | 32 32 8 2 2 2 0 | bad\n")),
        "marked bad:\n{table}"
    );
    // Another context, whose trials would pass, never tries either again.
    let c2 = ctx_in(&dir, Tuning::default());
    for (i, shape) in [shape, shape1].into_iter().enumerate() {
        let (ran, tile) = product(&c2, shape);
        assert_eq!(
            (ran.gemm_tile_trials, ran.gemm_tiles_discarded),
            (0, 0),
            "{ran:?}"
        );
        assert_eq!(tile, defaults[i]);
    }
    let _ = std::fs::remove_dir_all(&dir);
}
