//! A cold start: a flush that needs several new programs builds them concurrently, and a
//! build phase past the context's threshold says so on stderr once, unless quiet.
//!
//! Each case runs in a child process of this binary with an empty PoCL cache and lazycl's
//! program cache off, so that its programs are really compiled (a warm cache builds in
//! milliseconds, too quickly for builds to overlap measurably) and its stderr is its own.

use std::time::Duration;

use lazycl::prelude::*;
use lazycl::CacheDir;

use crate::common::{child_test, run_child};

/// What a child reports on stdout.
#[derive(Debug)]
struct ChildReport {
    /// Everything it printed, stdout then stderr.
    text: String,
    programs_built: u64,
    build_notices: u64,
    program_time_us: u64,
    build_wall_us: u64,
}

/// Runs `cold_start::child` in a child process with `notice_ms` as its threshold.
fn cold_child(case: &str, notice_ms: u64, quiet: bool) -> ChildReport {
    let pocl_cache = std::env::temp_dir().join(format!("lazycl-cold-{}-{case}", std::process::id()));
    let _ = std::fs::remove_dir_all(&pocl_cache);
    std::fs::create_dir_all(&pocl_cache).unwrap();
    let mut command = child_test("cold_start::child");
    command
        .env("LAZYCL_COLD_CHILD_NOTICE_MS", notice_ms.to_string())
        .env("POCL_CACHE_DIR", &pocl_cache)
        .env_remove("LAZYCL_QUIET");
    if quiet {
        command.env("LAZYCL_QUIET", "1");
    }
    let text = run_child(&mut command);
    let _ = std::fs::remove_dir_all(&pocl_cache);
    let field = |name: &str| -> u64 {
        let line = text
            .lines()
            .find_map(|l| l.find("child: ").map(|at| &l[at..]))
            .unwrap_or_else(|| panic!("no report in {text}"));
        let at = line
            .find(&format!(" {name} "))
            .unwrap_or_else(|| panic!("no {name} in {line}"));
        line[at + name.len() + 2..]
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    ChildReport {
        programs_built: field("built"),
        build_notices: field("notices"),
        program_time_us: field("time"),
        build_wall_us: field("wall"),
        text,
    }
}

fn notice_lines(text: &str) -> Vec<&str> {
    text.lines()
        .filter(|l| l.starts_with("lazycl: building"))
        .collect()
}

#[test]
fn a_flush_builds_its_new_programs_concurrently_and_says_so_once() {
    let r = cold_child("notice", 0, false);
    assert!(r.programs_built >= 6, "{r:?}");
    let lines = notice_lines(&r.text);
    assert_eq!(lines.len(), 1, "one notice for two slow flushes: {}", r.text);
    assert_eq!(r.build_notices, 1);
    let ctx = Context::new().unwrap();
    assert_eq!(
        lines[0],
        format!(
            "lazycl: building 4 kernels for {} (first run; cached afterwards)…",
            ctx.device().name
        )
    );
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    if cores >= 2 {
        assert!(
            r.program_time_us > r.build_wall_us,
            "the builds overlapped: {} µs of building in {} µs of wall time ({r:?})",
            r.program_time_us,
            r.build_wall_us
        );
    }
}

#[test]
fn the_notice_waits_for_the_threshold_and_quiet_silences_it() {
    let r = cold_child("below", 3_600_000, false);
    assert!(r.programs_built >= 6, "{r:?}");
    assert_eq!(notice_lines(&r.text), Vec::<&str>::new(), "{}", r.text);
    assert_eq!(r.build_notices, 0);
    let r = cold_child("quiet", 0, true);
    assert_eq!(notice_lines(&r.text), Vec::<&str>::new(), "{}", r.text);
    assert_eq!(r.build_notices, 0);
}

/// The child of the tests above: two flushes of new kernels, four then two, with the
/// notice threshold `LAZYCL_COLD_CHILD_NOTICE_MS` (milliseconds) its parent set.
#[test]
#[ignore = "run by the cold_start tests in a child process"]
fn child() {
    let ms = std::env::var("LAZYCL_COLD_CHILD_NOTICE_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .expect("LAZYCL_COLD_CHILD_NOTICE_MS: the threshold its parent test sets");
    let ctx = Context::builder()
        .program_cache(CacheDir::Off)
        .build_notice_after(Duration::from_millis(ms))
        .build()
        .unwrap();
    let x = ctx.from_shape_slice((3, 5), &[0.5f32; 15]).unwrap();
    let y = ctx.from_slice(&[1.5f32, 2.5, 3.5]).unwrap();
    // Four arrays of different shapes and structure: four kernels in one flush.
    let a = (&x * 2.0f32).exp();
    let b = y.sin() + 1.0f32;
    let c = x.sum_axis(Axis(0));
    let d = x.t().cos();
    eval(&(&a, &b, &c, &d)).unwrap();
    let e = x.sqrt() - 1.0f32;
    let f = y.amax();
    eval(&(&e, &f)).unwrap();
    assert_eq!(c.to_vec().unwrap(), vec![1.5f32; 5]);
    let s = ctx.stats();
    println!(
        "child: built {} notices {} time {} wall {} ",
        s.programs_built, s.build_notices, s.program_time_us, s.build_wall_us
    );
}
