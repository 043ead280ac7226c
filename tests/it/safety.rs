//! Bad input a user can give that must be refused with a clear error, or handled, instead
//! of producing wrong numbers, undefined OpenCL behaviour, or work that never finishes:
//! objects of two contexts mixed, all-NaN extrema, arrays too large to compute, unusable
//! environment values, a cached binary of another program, and producers far ahead of
//! the device.

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::{Path, PathBuf};

use crate::common::{child_test, ctx, ctx_in, run_child, temp_dir};
use lazycl::prelude::*;
use lazycl::Error;

#[kernel]
fn axpy(a: f32, x: &[f32], y: &mut [f32]) {
    let i = global_id(0);
    if i < y.len() {
        y[i] = a * x[i] + y[i];
    }
}

/// Keeps one work-item busy for `iters` steps, then writes a value that depends on them.
#[kernel]
fn spin(y: &mut [f32], iters: u32) {
    let i = global_id(0);
    if i < y.len() {
        let mut v = y[i];
        let mut k = 0u32;
        while k < iters {
            v = v * 0.999 + 0.001;
            k += 1;
        }
        y[i] = v;
    }
}

/// Asserts `result` is a `ContextMismatch` for `op` whose message names both contexts.
fn assert_mismatch<T>(what: &str, result: lazycl::Result<T>) {
    match result {
        Err(e @ Error::ContextMismatch { .. }) => {
            let text = e.to_string();
            let Error::ContextMismatch { expected, found, .. } = &e else {
                unreachable!()
            };
            assert_ne!(expected, found, "{what}: {text}");
            assert!(
                expected.contains("context ") && found.contains("context ") && text.contains("device"),
                "{what}: the message names both contexts and their devices: {text}"
            );
        }
        Err(e) => panic!("{what}: expected ContextMismatch, got {e}"),
        Ok(_) => panic!("{what}: expected ContextMismatch, got Ok"),
    }
}

#[test]
fn a_kernel_launch_with_an_array_of_another_context_fails_before_enqueueing() {
    let (c1, c2) = (ctx(), ctx());
    let k = axpy::bind(&c1).unwrap();
    let x_foreign = c2.from_slice(&[1.0f32, 2.0, 3.0]).unwrap();
    let mut y = c1.from_slice(&[10.0f32, 20.0, 30.0]).unwrap();
    let (b1, b2) = (c1.stats(), c2.stats());
    assert_mismatch("read argument", k.global(3).launch(2.0, &x_foreign, &mut y));
    let x = c1.from_slice(&[1.0f32, 2.0, 3.0]).unwrap();
    let mut y_foreign = c2.from_slice(&[10.0f32, 20.0, 30.0]).unwrap();
    assert_mismatch("written argument", k.global(3).launch(2.0, &x, &mut y_foreign));
    assert_eq!((c1.stats() - b1).kernels_launched, 0, "nothing was enqueued");
    assert_eq!((c2.stats() - b2).kernels_launched, 0, "nothing was enqueued");
    assert_eq!(y.to_vec().unwrap(), vec![10.0, 20.0, 30.0]);
    assert_eq!(y_foreign.to_vec().unwrap(), vec![10.0, 20.0, 30.0]);
    // The same launch with arrays of its own context works.
    k.global(3).launch(2.0, &x, &mut y).unwrap();
    assert_eq!(y.to_vec().unwrap(), vec![12.0, 24.0, 36.0]);
}

#[test]
fn assign_refuses_a_value_of_another_context() {
    let (c1, c2) = (ctx(), ctx());
    let mut y = c1.from_slice(&[1.0f32, 2.0]).unwrap();
    let v = c2.from_slice(&[5.0f32, 6.0]).unwrap();
    assert_mismatch("assign", y.assign(&v));
    assert_mismatch("assign of a lazy value", y.assign(&v * 2.0));
    assert_eq!(y.to_vec().unwrap(), vec![1.0, 2.0], "the target keeps its data");
}

/// Every entry point that takes an array, a queue or an event, given one of another
/// context: each is a `ContextMismatch` naming both contexts.
#[test]
fn every_entry_point_refuses_objects_of_another_context() {
    let (c1, c2) = (ctx(), ctx());
    let a = c1.from_slice(&[1.0f32, 2.0, 3.0]).unwrap();
    let b = c2.from_slice(&[4.0f32, 5.0, 6.0]).unwrap();
    let mask = c2.from_slice(&[true, false, true]).unwrap();
    let q2 = c2.new_queue().unwrap();
    let e2 = q2.marker().unwrap();
    let k = axpy::bind(&c1).unwrap();
    type Case<'a> = (&'a str, Box<dyn Fn() -> lazycl::Result<()> + 'a>);
    let cases: Vec<Case> = vec![
        ("binary operator", Box::new(|| (&a + &b).eval().map(drop))),
        ("comparison", Box::new(|| a.lt(&b).to_vec().map(drop))),
        (
            "method with an array operand",
            Box::new(|| a.max(&b).to_vec().map(drop)),
        ),
        (
            "select: foreign mask",
            Box::new(|| select(&mask, &a, 0.0).eval().map(drop)),
        ),
        (
            "select: foreign branch",
            Box::new(|| select(&a.gt(1.0), &a, &b).eval().map(drop)),
        ),
        ("expr!", Box::new(|| expr!(a * b + 1.0).eval().map(drop))),
        ("dot", Box::new(|| a.dot(&b).item().map(drop))),
        (
            "reduction of a mixed expression",
            Box::new(|| (&a * &b).sum().item().map(drop)),
        ),
        ("eval of a mixed list", Box::new(|| lazycl::eval(&[&a, &b][..]))),
        (
            "eval_on a foreign queue",
            Box::new(|| (&a * 2.0).eval_on(&q2).map(drop)),
        ),
        (
            "Queue::eval of foreign arrays",
            Box::new(|| q2.eval(&vec![&a * 2.0])),
        ),
        ("assign a foreign value", Box::new(|| a.clone().assign(&b))),
        (
            "assign_on a foreign queue",
            Box::new(|| a.clone().assign_on(&q2, 1.0)),
        ),
        (
            "kernel_arg_on a foreign queue",
            Box::new(|| (&a * 2.0).kernel_arg_on(Some(&q2)).map(drop)),
        ),
        (
            "kernel launch: foreign read argument",
            Box::new(|| k.global(3).launch(1.0, &b, &mut a.clone())),
        ),
        (
            "kernel launch: foreign written argument",
            Box::new(|| k.global(3).launch(1.0, &a, &mut b.clone())),
        ),
        (
            "kernel launch on a foreign queue",
            Box::new(|| k.global(3).on(&q2).launch(1.0, &a, &mut a.clone())),
        ),
        (
            "kernel launch after a foreign event",
            Box::new(|| {
                k.global(3)
                    .after(std::slice::from_ref(&e2))
                    .launch(1.0, &a, &mut a.clone())
            }),
        ),
        (
            "Queue::wait_for a foreign event",
            Box::new(|| c1.queue().wait_for(std::slice::from_ref(&e2))),
        ),
    ];
    let before = c1.stats();
    for (what, case) in &cases {
        assert_mismatch(what, case());
    }
    assert_eq!(
        (c1.stats() - before).kernels_launched,
        0,
        "no case enqueued a kernel"
    );
    assert_eq!(a.to_vec().unwrap(), vec![1.0, 2.0, 3.0]);
    assert_eq!(b.to_vec().unwrap(), vec![4.0, 5.0, 6.0]);
}

macro_rules! all_nan_extrema {
    ($($name:ident: $t:ty),*) => {$(
        #[test]
        fn $name() {
            let ctx = ctx();
            let nan = <$t>::NAN;
            // Sizes that take the one-group, split and finished-in-kernel layouts.
            for n in [5usize, 100_003] {
                let x = ctx.from_vec(vec![nan; n]).unwrap();
                assert!(x.amax().item().unwrap().is_nan(), "amax of {n} NaN");
                assert!((&x * 2.0).amin().item().unwrap().is_nan(), "fused amin of {n} NaN");
                assert_eq!(x.argmax().item().unwrap(), 0, "argmax of {n} NaN: the first index");
                // One number among the NaN is the answer (NaN is ignored, as by nanmax).
                let mut v = vec![nan; n];
                v[n / 2] = -3.5;
                let y = ctx.from_vec(v).unwrap();
                assert_eq!(y.amax().item().unwrap(), -3.5, "amax of {n} with one number");
                assert_eq!(y.argmin().item().unwrap(), (n / 2) as u32);
            }
            // Along an axis: all-NaN rows and columns give NaN there, and only there; long
            // columns, long rows, and both (column, lanes and serial layouts).
            for (rows, cols) in [(2000usize, 7usize), (7, 3000), (300, 100)] {
                let data: Vec<$t> = (0..rows * cols)
                    .map(|i| {
                        let (r, c) = (i / cols, i % cols);
                        if r == 1 || c == 2 { nan } else { (i % 97) as $t - 40.0 }
                    })
                    .collect();
                let m = ctx.from_shape_slice([rows, cols], &data).unwrap();
                for (axis, len) in [(0usize, cols), (1, rows)] {
                    let got_max = m.amax_axis(axis).to_vec().unwrap();
                    let got_min = m.amin_axis(axis).to_vec().unwrap();
                    for j in 0..len {
                        let lane: Vec<$t> = match axis {
                            0 => (0..rows).map(|r| data[r * cols + j]).collect(),
                            _ => (0..cols).map(|c| data[j * cols + c]).collect(),
                        };
                        let numbers: Vec<$t> = lane.iter().copied().filter(|v| !v.is_nan()).collect();
                        let want_max = numbers.iter().copied().fold(nan, <$t>::max);
                        let want_min = numbers.iter().copied().fold(nan, <$t>::min);
                        let same = |a: $t, b: $t| a == b || (a.is_nan() && b.is_nan());
                        assert!(same(got_max[j], want_max), "{rows}x{cols} amax_axis({axis})[{j}]: {} vs {want_max}", got_max[j]);
                        assert!(same(got_min[j], want_min), "{rows}x{cols} amin_axis({axis})[{j}]: {} vs {want_min}", got_min[j]);
                    }
                }
            }
            // Nothing to reduce: an error, as in numpy, not a finite-looking infinity.
            let empty = ctx.zeros::<$t>(0).unwrap();
            assert!(matches!(empty.amax().item(), Err(Error::InvalidShape(_))));
            assert!(matches!(empty.amin_axis(0).to_vec(), Err(Error::InvalidShape(_))));
        }
    )*};
}
all_nan_extrema!(all_nan_extrema_are_nan_f32: f32, all_nan_extrema_are_nan_f64: f64);

#[test]
fn arrays_too_large_to_compute_are_errors_naming_the_shape() {
    let ctx = ctx();
    // 2^62 elements: an iteration space no device finishes.
    let huge = ctx.scalar(1.0f32).unwrap().broadcast_to(&[1 << 31, 1 << 31]);
    match huge.sum().item() {
        Err(Error::TooLarge { shape, .. }) => assert_eq!(shape, vec![1 << 31, 1 << 31]),
        other => panic!("expected TooLarge, got {other:?}"),
    }
    match (&huge * 2.0).eval() {
        Err(e @ Error::TooLarge { .. }) => assert!(e.to_string().contains("2147483648"), "{e}"),
        other => panic!("expected TooLarge, got {other:?}"),
    }
    // An element count that overflows: no panic, an error.
    let x = ctx.from_slice(&[1.0f32]).unwrap();
    let overflow = x.broadcast_to(&[1 << 40, 1 << 40]);
    assert_eq!(overflow.len(), usize::MAX, "len saturates instead of panicking");
    assert!(matches!(overflow.sum().item(), Err(Error::TooLarge { .. })));
    assert!(matches!((&overflow + &x).to_vec(), Err(Error::TooLarge { .. })));
    // Allocations whose byte size overflows or exceeds the device's largest buffer.
    assert!(ctx.zeros::<f64>([1 << 62]).is_err());
    assert!(matches!(
        ctx.zeros::<f32>([1 << 50]),
        Err(Error::OutOfMemory { .. })
    ));
    // Kernel launches beyond what the device's size_t or work-group limits allow.
    let k = axpy::bind(&ctx).unwrap();
    let mut y = ctx.zeros::<f32>(1).unwrap();
    let big = 1usize << 40;
    assert!(matches!(
        k.global([big, big, big]).launch(1.0, &x, &mut y),
        Err(Error::InvalidLaunch { .. })
    ));
    let max = ctx.device().max_work_item_sizes.clone();
    let local = [max[0] * 2, 1];
    assert!(matches!(
        k.global([local[0], 1]).local(local).launch(1.0, &x, &mut y),
        Err(Error::InvalidLaunch { .. })
    ));
    // The context still works afterwards.
    assert_eq!((&x * 3.0).item().unwrap(), 3.0);
}

/// The environment a child process of this test binary gets, and what it must report.
struct EnvCase {
    name: &'static str,
    variable: &'static str,
    value: OsString,
}

fn non_utf8(prefix: &str) -> OsString {
    let mut bytes = prefix.as_bytes().to_vec();
    bytes.extend_from_slice(&[0xff, 0xfe]);
    OsString::from_vec(bytes)
}

#[test]
fn unusable_environment_values_are_reported_not_ignored() {
    let cache_dir = temp_dir("safety", "env-bytes").join(non_utf8("dir-"));
    let cases = [
        EnvCase {
            name: "device",
            variable: "LAZYCL_DEVICE",
            value: non_utf8("gpu"),
        },
        EnvCase {
            name: "show",
            variable: "LAZYCL_SHOW_KERNELS",
            value: non_utf8("1"),
        },
        EnvCase {
            name: "show",
            variable: "LAZYCL_SHOW_KERNELS",
            value: "maybe".into(),
        },
        EnvCase {
            name: "cache",
            variable: "LAZYCL_CACHE",
            value: non_utf8("off"),
        },
        EnvCase {
            name: "cache",
            variable: "LAZYCL_CACHE",
            value: "sometimes".into(),
        },
        EnvCase {
            name: "cache_dir",
            variable: "LAZYCL_CACHE_DIR",
            value: cache_dir.clone().into_os_string(),
        },
        EnvCase {
            name: "dispatch",
            variable: "LAZYCL_DISPATCH",
            value: "sideways".into(),
        },
        EnvCase {
            name: "dispatch_background",
            variable: "LAZYCL_DISPATCH",
            value: "Background".into(),
        },
        EnvCase {
            name: "dispatch_after_pause",
            variable: "LAZYCL_DISPATCH",
            value: "after-pause".into(),
        },
    ];
    for case in &cases {
        let text = run_child(
            child_test("safety::child_reports_its_environment")
                .env_remove("LAZYCL_DEVICE")
                .env_remove("LAZYCL_SHOW_KERNELS")
                .env_remove("LAZYCL_CACHE")
                .env_remove("LAZYCL_DISPATCH")
                .env("LAZYCL_SAFETY_CHILD", case.name)
                .env(case.variable, &case.value),
        );
        assert!(
            text.contains("child: ok"),
            "{} = {:?}: {text}",
            case.variable,
            case.value
        );
    }
    let stored = std::fs::read_dir(&cache_dir).map(|d| d.count()).unwrap_or(0);
    assert!(
        stored > 0,
        "a non-UTF-8 LAZYCL_CACHE_DIR is a path like any other, and used"
    );
}

/// The child of `unusable_environment_values_are_reported_not_ignored`: opens a context
/// under the environment its parent set, and checks the outcome that `LAZYCL_SAFETY_CHILD`
/// names.
#[test]
#[ignore = "run by unusable_environment_values_are_reported_not_ignored in a child process"]
fn child_reports_its_environment() {
    let case =
        std::env::var_os("LAZYCL_SAFETY_CHILD").expect("LAZYCL_SAFETY_CHILD: the case its parent test runs");
    let result = Context::new();
    match (case.to_str().unwrap(), result) {
        ("device", Err(Error::NoMatchingDevice { request, available })) => {
            assert!(
                request.contains("UTF-8") && !available.is_empty(),
                "{request}\n{available}"
            );
        }
        ("show", Err(Error::InvalidEnvironment { variable, .. })) => {
            assert_eq!(variable, "LAZYCL_SHOW_KERNELS")
        }
        ("cache", Err(Error::InvalidEnvironment { variable, .. })) => assert_eq!(variable, "LAZYCL_CACHE"),
        ("dispatch", Err(Error::InvalidEnvironment { variable, reason, .. })) => {
            assert_eq!(variable, "LAZYCL_DISPATCH");
            for mode in ["auto", "inline", "after-pause", "background"] {
                assert!(reason.contains(mode), "{reason}");
            }
        }
        ("dispatch_background", Ok(ctx)) => {
            (ctx.from_slice(&[1.0f32]).unwrap() + 1.0).eval().unwrap();
            assert_eq!(
                ctx.stats().evals_dispatched,
                1,
                "LAZYCL_DISPATCH=Background hands over"
            );
        }
        ("dispatch_after_pause", Ok(ctx)) => {
            assert_eq!(ctx.dispatch(), lazycl::Dispatch::AfterPause);
        }
        ("cache_dir", Ok(ctx)) => {
            assert_eq!((&ctx.from_slice(&[1.0f32]).unwrap() + 1.0).item().unwrap(), 2.0);
        }
        (case, other) => panic!("{case}: unexpected {other:?}"),
    }
    println!("child: ok");
}

/// The one cache file in `dir`.
fn only_file(dir: &Path) -> PathBuf {
    let files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "bin"))
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    files[0].clone()
}

/// The cache file layout (runtime/src/backend/cache.rs): magic, key length (u64 LE), key,
/// binary length, binary, xxh3 of every byte before it. Returns (key, binary).
fn read_entry(path: &Path) -> (Vec<u8>, Vec<u8>) {
    let d = std::fs::read(path).unwrap();
    let u64_at = |at: usize| u64::from_le_bytes(d[at..at + 8].try_into().unwrap()) as usize;
    let klen = u64_at(8);
    let key = d[16..16 + klen].to_vec();
    let blen = u64_at(16 + klen);
    let binary = d[24 + klen..24 + klen + blen].to_vec();
    (key, binary)
}

/// Writes an entry with a valid key and checksum: the poisoned file of a real mix-up.
fn write_entry(path: &Path, key: &[u8], binary: &[u8]) {
    let mut v = b"LZCLBIN3".to_vec();
    v.extend_from_slice(&(key.len() as u64).to_le_bytes());
    v.extend_from_slice(key);
    v.extend_from_slice(&(binary.len() as u64).to_le_bytes());
    v.extend_from_slice(binary);
    let sum = xxhash_rust::xxh3::xxh3_64(&v);
    v.extend_from_slice(&sum.to_le_bytes());
    std::fs::write(path, v).unwrap();
}

/// Puts the binary `donor` builds into `victim`'s cache file (valid key and checksum).
fn poison(name: &str, victim: impl Fn(&Context), donor: impl Fn(&Context)) -> PathBuf {
    let (dv, dd) = (
        temp_dir("safety", &format!("{name}-victim")),
        temp_dir("safety", &format!("{name}-donor")),
    );
    victim(&ctx_in(&dv));
    donor(&ctx_in(&dd));
    let (key, _) = read_entry(&only_file(&dv));
    let (_, binary) = read_entry(&only_file(&dd));
    write_entry(&only_file(&dv), &key, &binary);
    dv
}

/// Counts (built, loaded, rejected) while `work` runs on a context over `dir`.
fn programs(dir: &Path, work: impl Fn(&Context)) -> (u64, u64, u64) {
    let ctx = ctx_in(dir);
    let before = ctx.stats();
    work(&ctx);
    let d = ctx.stats() - before;
    (d.programs_built, d.programs_loaded, d.programs_rejected)
}

#[test]
fn a_cached_binary_of_another_program_is_rejected_and_rebuilt() {
    let add_f32 = |ctx: &Context| {
        let x = ctx.from_slice(&[1.0f32, 2.0]).unwrap();
        assert_eq!((&x + 1.5f32).to_vec().unwrap(), vec![2.5, 3.5]);
    };
    // Same kernel name and parameter count, another scalar size (the driver would refuse
    // the first launch, CL_INVALID_ARG_SIZE; the program's identity kernel, named by its
    // key, refuses it when loaded).
    let add_f64 = |ctx: &Context| {
        let x = ctx.from_slice(&[1.0f64, 2.0]).unwrap();
        assert_eq!((&x + 1.5f64).to_vec().unwrap(), vec![2.5, 3.5]);
    };
    // Another parameter count.
    let fma = |ctx: &Context| {
        let x = ctx.from_slice(&[1.0f32, 2.0]).unwrap();
        let y = ctx.from_slice(&[3.0f32, 4.0]).unwrap();
        assert_eq!((&x * &y + &x).to_vec().unwrap(), vec![4.0, 10.0]);
    };
    // A `#[kernel]` whose file holds another kernel's binary: no kernel of that name.
    let bind_axpy = |ctx: &Context| {
        let x = ctx.from_slice(&[1.0f32]).unwrap();
        let mut y = ctx.from_slice(&[1.0f32]).unwrap();
        axpy::bind(ctx)
            .unwrap()
            .global(1)
            .launch(2.0, &x, &mut y)
            .unwrap();
        assert_eq!(y.to_vec().unwrap(), vec![3.0]);
    };
    let bind_spin = |ctx: &Context| {
        spin::bind(ctx).unwrap();
    };
    for (name, dir, work) in [
        (
            "arg sizes",
            poison("sizes", add_f32, add_f64),
            &add_f32 as &dyn Fn(&Context),
        ),
        ("arg count", poison("count", add_f32, fma), &add_f32),
        ("kernel name", poison("name", bind_axpy, bind_spin), &bind_axpy),
    ] {
        let (built, _, rejected) = programs(&dir, work);
        assert_eq!(
            (built, rejected),
            (1, 1),
            "{name}: the binary is rejected and rebuilt"
        );
        assert_eq!(programs(&dir, work), (0, 1, 0), "{name}: the entry was replaced");
    }
}

#[test]
fn a_producer_cannot_run_far_ahead_of_the_device() {
    const BOUND: usize = 16;
    let ctx = Context::builder().max_queued_commands(BOUND).build().unwrap();
    let k = spin::bind(&ctx).unwrap();
    let mut y = ctx.zeros::<f32>(1).unwrap();
    let before = ctx.stats();
    let mut events = Vec::new();
    for i in 0..80 {
        events.push(k.global(1).launch_event(&mut y, 200_000).unwrap());
        // A checkpoint every BOUND / 4 commands; a submission waits for the one BOUND
        // behind it: nothing more than BOUND + BOUND / 4 commands back is still queued.
        if i >= BOUND + BOUND / 4 {
            assert!(
                events[i - BOUND - BOUND / 4].is_complete().unwrap(),
                "command {} of {i} is still queued",
                i - BOUND - BOUND / 4
            );
        }
    }
    let d = ctx.stats() - before;
    assert!(d.waits_backpressure > 0, "the loop was held back: {d}");
    assert_eq!(d.host_waits, d.waits_backpressure, "{d}");
    let v = y.item().unwrap();
    assert!(v.is_finite() && v > 0.0);
}
