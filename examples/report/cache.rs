//! The program cache's rows: a fresh process's first result with the cache cold and then
//! warm (`--first-result` is that process), and a launch of a kernel loaded from the disk
//! cache against one built from source.

use std::time::Instant;

use lazycl::{Context, DType, Kernel, KernelSource};

use crate::raw::R;
use crate::{bitonic_steps, chain8, lz, median, per_call, swap_pairs, Report};

/// The first result a fresh process computes (`--first-result`): a context, a `#[kernel]`
/// launch and a fused expression, read back. The parent times this process end to end.
pub(crate) fn first_result() -> R<()> {
    let ctx = lz(Context::new())?;
    let x = lz(ctx.from_slice(&[3.0f32, 1.0, 2.0, 0.5]))?;
    let mut arr = lz(ctx.from_slice(&[4i32, 3, 2, 1]))?;
    let k = lz(swap_pairs::bind(&ctx))?;
    for &step in &bitonic_steps(4) {
        lz(k.global(4usize).launch(&mut arr, step, 4))?;
    }
    let y = lz(chain8(&x).sum().item())?;
    let sorted = lz(arr.to_vec())?;
    if sorted != [1, 2, 3, 4] || !y.is_finite() {
        return Err("wrong first result".into());
    }
    println!(
        "programs built {}, loaded {}",
        ctx.stats().programs_built,
        ctx.stats().programs_loaded
    );
    Ok(())
}

/// Process start to first result with a cold and then a warm program cache, and the
/// per-launch host time of a kernel loaded from the cache vs one built from source.
pub(crate) fn rows(rep: &mut Report, trials: usize) -> R<()> {
    let dir = std::env::temp_dir().join(format!("lazycl-report-cache-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let spawn = || -> R<f64> {
        let t = Instant::now();
        let mut cmd = std::process::Command::new(&exe);
        cmd.arg("--first-result").env("LAZYCL_CACHE_DIR", &dir);
        if !dir.exists() {
            // Cold means nothing cached anywhere: also the drivers' own caches.
            cmd.env("CUDA_CACHE_DISABLE", "1").env("POCL_KERNEL_CACHE", "0");
        }
        let out = cmd.output().map_err(|e| e.to_string())?;
        if !out.status.success() {
            return Err(String::from_utf8_lossy(&out.stderr).to_string());
        }
        Ok(t.elapsed().as_secs_f64())
    };
    let cold = spawn()?;
    let warm = median((0..trials.min(5)).map(|_| spawn()).collect::<R<Vec<f64>>>()?);
    rep.add(
        "process start to first result, warm program cache",
        warm * 1e3,
        cold * 1e3,
        "ms",
        "same, cold cache",
    );
    // Every program the tour needs: the tour itself (a sibling binary), cold then warm,
    // read from the counters it prints.
    let tour = exe.with_file_name(format!("tour{}", std::env::consts::EXE_SUFFIX));
    if tour.exists() {
        let tdir = dir.with_extension("tour");
        let _ = std::fs::remove_dir_all(&tdir);
        let run_tour = |cold: bool| -> R<(u64, u64)> {
            let mut cmd = std::process::Command::new(&tour);
            cmd.env("LAZYCL_CACHE_DIR", &tdir);
            if cold {
                cmd.env("CUDA_CACHE_DISABLE", "1").env("POCL_KERNEL_CACHE", "0");
            }
            let out = cmd.output().map_err(|e| e.to_string())?;
            if !out.status.success() {
                return Err(String::from_utf8_lossy(&out.stderr).to_string());
            }
            let text = String::from_utf8_lossy(&out.stdout).to_string();
            let counter = |name: &str| -> R<u64> {
                text.lines()
                    .find_map(|l| l.strip_prefix(name)?.trim().parse().ok())
                    .ok_or_else(|| format!("the tour printed no `{name}` counter"))
            };
            Ok((
                counter("programs_built")? + counter("programs_loaded")?,
                counter("program_time_us")?,
            ))
        };
        let (n_cold, cold_us) = run_tour(true)?;
        // Once more so that the drivers' own caches hold what a normal first run leaves
        // there (the cold run had them off), then the measured warm run.
        run_tour(false)?;
        let (n_warm, warm_us) = run_tour(false)?;
        if n_cold != n_warm {
            return Err(format!(
                "the tour obtained {n_cold} programs cold but {n_warm} warm"
            ));
        }
        rep.add(
            format!("obtain every program the tour needs ({n_cold}), warm program cache"),
            warm_us as f64 / 1e3,
            cold_us as f64 / 1e3,
            "ms",
            "same, cold cache",
        );
        let _ = std::fs::remove_dir_all(&tdir);
    } else {
        eprintln!("  (no tour binary beside the report: build the examples for the tour row)");
    }
    // Obtaining the programs alone: build from source vs load the binary.
    let _ = std::fs::remove_dir_all(&dir);
    let cold_ctx = lz(Context::builder()
        .program_cache(lazycl::CacheDir::Dir(dir.clone()))
        .build())?;
    // A source no driver has seen (a unique comment), so that "build" is a real compile
    // even where the driver keeps its own cache (NVIDIA's keys on the source).
    let fresh: &'static str = Box::leak(
        format!(
            "// report {} {:?}\n{}",
            std::process::id(),
            Instant::now(),
            swap_pairs::SOURCE
        )
        .into_boxed_str(),
    );
    let fresh: &'static KernelSource = Box::leak(Box::new(KernelSource {
        name: swap_pairs::NAME,
        source: fresh,
        num_args: 4,
        dtypes: &[DType::I32],
    }));
    let t = Instant::now();
    lz(Kernel::bind(&cold_ctx, fresh))?;
    let t_build = t.elapsed().as_secs_f64();
    let built = lz(swap_pairs::bind(&cold_ctx))?;
    let warm_ctx = lz(Context::builder()
        .program_cache(lazycl::CacheDir::Dir(dir.clone()))
        .build())?;
    let t = Instant::now();
    lz(Kernel::bind(&warm_ctx, fresh))?;
    let t_load = t.elapsed().as_secs_f64();
    let loaded = lz(swap_pairs::bind(&warm_ctx))?;
    if warm_ctx.stats().programs_loaded != 2 {
        return Err("the warm context did not load from the cache".into());
    }
    rep.add(
        "obtain a #[kernel] program: load cached binary",
        t_load * 1e3,
        t_build * 1e3,
        "ms",
        "build from source",
    );
    // Per-launch host time: loaded vs built kernel, same hot path.
    let n = 1024usize;
    let reps = 5000;
    let mut a = lz(cold_ctx.zeros::<i32>(n))?;
    let mut b = lz(warm_ctx.zeros::<i32>(n))?;
    let t_built = per_call(
        trials,
        reps,
        || lz(built.global(n).launch(&mut a, 1, n as i32)),
        || lz(cold_ctx.synchronize()),
    )?;
    let t_loaded = per_call(
        trials,
        reps,
        || lz(loaded.global(n).launch(&mut b, 1, n as i32)),
        || lz(warm_ctx.synchronize()),
    )?;
    rep.add(
        "host time per launch, kernel loaded from the disk cache",
        t_loaded * 1e6,
        t_built * 1e6,
        "µs",
        "same kernel built from source",
    );
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
