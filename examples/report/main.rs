//! The side-by-side report: lazycl next to a raw-opencl3 baseline, in one process, on one
//! device. Prints a markdown table (or one JSON object per row with `--json`), and with
//! `--svg FILE` also draws each row's ratio as a bar chart (`chart.rs`).
//!
//! ```sh
//! cargo run --release --example report            # full sizes (a GPU is assumed)
//! cargo run --release --example report -- --quick # small sizes, under a minute on PoCL
//! cargo run --release --example report -- --quick --rows --svg rows.svg
//! cargo run --release --example report -- --quick --host   # the host's own cost
//! cargo run --release --example report -- --help  # every flag
//! ```
//! `LAZYCL_EXAMPLE_SMALL=1` implies `--quick`. `LAZYCL_DEVICE` picks the device.

mod arrays;
mod builds;
mod chart;
mod first_op;
mod footprint;
mod gemm;
mod host;
mod multi;
mod nodes;
mod random;
mod raw;
mod reference;
mod rows;
mod sorting;
mod views;
mod workloads;

use std::path::PathBuf;
use std::time::Instant;

use clap::{ArgGroup, Parser};
use lazycl::{Array, Context, DType};
use lazycl::{Dims, Kernel, KernelArg, KernelSource, LaunchOptions};
use opencl3::memory::ClMem;
use raw::{Raw, R};
use serde::Serialize;

/// The side-by-side report: lazycl next to a raw-opencl3 baseline (or a reference
/// script's figures), in one process, on one device. Prints a markdown table, or one JSON
/// object per row.
#[derive(Parser)]
#[command(
    group(ArgGroup::new("only").args(["arrays", "rows", "rows_sweep", "random", "gemm", "builds", "host", "nodes", "multi"])),
    after_help = "LAZYCL_EXAMPLE_SMALL=1 implies --quick. LAZYCL_DEVICE picks the device. \
                  LAZYCL_ARRAYS_REFERENCE and LAZYCL_GEMM_REFERENCE name files of JSON lines \
                  written by benches/reference/arrays_reference.py --json and \
                  gemm_reference.py --json in the same call: the torch, JAX and cuBLAS \
                  baselines of the full-size array, row, random-number and GEMM rows \
                  (missing without them; --quick compares with the host instead)."
)]
struct Cli {
    /// Small sizes, under a minute on PoCL
    #[arg(long)]
    quick: bool,
    /// One JSON object per row (name, device, lazycl, baseline, baseline_name, unit,
    /// ratio) instead of the markdown table
    #[arg(long)]
    json: bool,
    /// Also draw the rows as an SVG bar chart in FILE: each row's ratio lazycl / baseline
    /// on a log scale, from a line at 1.0, with its name and both figures
    #[arg(long, value_name = "FILE")]
    svg: Option<PathBuf>,
    /// Only the array algorithms' rows (scans, sorts, compaction) and the row functions'
    #[arg(long)]
    arrays: bool,
    /// Only the row functions' rows (softmax, layer norm)
    #[arg(long)]
    rows: bool,
    /// Only the row functions' rows, once for each layout of the row kernels
    #[arg(long)]
    rows_sweep: bool,
    /// Only the random numbers' rows
    #[arg(long)]
    random: bool,
    /// Only the matrix products' rows
    #[arg(long)]
    gemm: bool,
    /// Only the cold-start row: a flush of new programs built together against one after
    /// another (run with the driver's cache cold: CUDA_CACHE_DISABLE=1, a fresh
    /// POCL_CACHE_DIR)
    #[arg(long)]
    builds: bool,
    /// Only the host's own cost: a bound kernel's launch, a cached flush, a
    /// logistic-regression step, the first lazy operation after a long kernel
    #[arg(long)]
    host: bool,
    /// Only the host's cost per graph node: chains of 10 to 10^5 nodes (10^4 with
    /// --quick), recorded and flushed
    #[arg(long)]
    nodes: bool,
    /// Only the multi-device rows: the fused chain, a sum and a stencil on every device of
    /// the first device's platform (`Context::multi`) against that device alone
    #[arg(long)]
    multi: bool,
    /// The devices of --multi's context, in the LAZYCL_DEVICE syntax (default: every
    /// device of the first device's platform); `1:0,1:0` opens one device twice
    #[arg(long, value_name = "DEVICES")]
    multi_devices: Option<String>,
    /// Repeats one host operation with the host's caches emptied before each, for a cache
    /// simulator to count what it touches (scripts/footprint.sh); prints no rows
    #[arg(long, value_name = "SIDE")]
    footprint: Option<footprint::Side>,
    /// Computes one first result and exits (the report times this, in a child process)
    #[arg(long, hide = true)]
    first_result: bool,
}

/// Where the finished report goes.
struct Output {
    json: bool,
    svg: Option<PathBuf>,
}

struct Row {
    name: String,
    lazycl: f64,
    baseline: f64,
    unit: &'static str,
    baseline_name: &'static str,
}

/// A row as `--json` writes it: one object a line (a ratio without a baseline is null).
#[derive(Serialize)]
struct JsonRow<'a> {
    name: &'a str,
    device: &'a str,
    lazycl: f64,
    baseline: f64,
    baseline_name: &'a str,
    unit: &'a str,
    ratio: f64,
}

struct Report {
    device: String,
    rows: Vec<Row>,
}

impl Report {
    fn add(
        &mut self,
        name: impl Into<String>,
        lazycl: f64,
        baseline: f64,
        unit: &'static str,
        baseline_name: &'static str,
    ) {
        let row = Row {
            name: name.into(),
            lazycl,
            baseline,
            unit,
            baseline_name,
        };
        eprintln!(
            "  {:<48} {:>12.3} {:>12.3} {} ({})",
            row.name, row.lazycl, row.baseline, row.unit, row.baseline_name
        );
        self.rows.push(row);
    }

    /// Prints the rows (a table, or JSON lines) and draws the chart if one was asked for.
    fn finish(&self, out: &Output) -> R<()> {
        self.print(out.json)?;
        match &out.svg {
            Some(path) => chart::write(self, path),
            None => Ok(()),
        }
    }

    fn print(&self, json: bool) -> R<()> {
        if json {
            for r in &self.rows {
                let row = JsonRow {
                    name: &r.name,
                    device: &self.device,
                    lazycl: r.lazycl,
                    baseline: r.baseline,
                    baseline_name: r.baseline_name,
                    unit: r.unit,
                    ratio: r.lazycl / r.baseline,
                };
                println!("{}", serde_json::to_string(&row).map_err(|e| e.to_string())?);
            }
            return Ok(());
        }
        println!("device: {}\n", self.device);
        println!("| measurement | lazycl | baseline | unit | baseline is | ratio |");
        println!("|---|---:|---:|---|---|---:|");
        for r in &self.rows {
            println!(
                "| {} | {:.3} | {:.3} | {} | {} | {:.2} |",
                r.name,
                r.lazycl,
                r.baseline,
                r.unit,
                r.baseline_name,
                r.lazycl / r.baseline
            );
        }
        Ok(())
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// Host seconds per call of `f` (median over `trials` of `reps` calls each); `sync` runs
/// before and after each trial, outside the timed region.
fn per_call(
    trials: usize,
    reps: usize,
    mut f: impl FnMut() -> R<()>,
    mut sync: impl FnMut() -> R<()>,
) -> R<f64> {
    let mut times = Vec::new();
    for _ in 0..trials {
        sync()?;
        let t = Instant::now();
        for _ in 0..reps {
            f()?;
        }
        times.push(t.elapsed().as_secs_f64() / reps as f64);
        sync()?;
    }
    Ok(median(times))
}

/// Device seconds per call of `f`: the timed region ends with `sync` (median of trials).
fn per_run(
    trials: usize,
    reps: usize,
    mut f: impl FnMut() -> R<()>,
    mut sync: impl FnMut() -> R<()>,
) -> R<f64> {
    f()?;
    sync()?;
    let mut times = Vec::new();
    for _ in 0..trials {
        let t = Instant::now();
        for _ in 0..reps {
            f()?;
        }
        sync()?;
        times.push(t.elapsed().as_secs_f64() / reps as f64);
    }
    Ok(median(times))
}

/// Busy-loop iterations that make `run_and_wait(iters)` take about `target` seconds (at
/// least 60 % of it); returns them with the time the last run took.
fn calibrate_spin(target: f64, mut run_and_wait: impl FnMut(u32) -> R<()>) -> R<(u32, f64)> {
    let (mut iters, mut took) = (1000u32, 0.0);
    for _ in 0..12 {
        let t = Instant::now();
        run_and_wait(iters)?;
        took = t.elapsed().as_secs_f64();
        if took > 0.6 * target {
            break;
        }
        iters = iters.saturating_mul(((target / took.max(1e-6)) as u32).clamp(2, 16));
    }
    Ok((iters, took))
}

fn lz<T>(r: lazycl::Result<T>) -> R<T> {
    r.map_err(|e| e.to_string())
}

static ADD_ONE: KernelSource = KernelSource {
    name: "add_one",
    source: raw::ADD_ONE,
    num_args: 2,
    dtypes: &[DType::F32],
};
static SPIN: KernelSource = KernelSource {
    name: "spin",
    source: raw::SPIN,
    num_args: 2,
    dtypes: &[DType::F32],
};

#[path = "../common/bitonic.rs"]
mod bitonic;
use bitonic::{steps as bitonic_steps, swap_pairs};

fn chain8(x: &Array<f32>) -> Array<f32> {
    ((((((x * 1.5 + 2.0) * x - 0.25).abs() + 1.0).sqrt() * 3.0) / 7.0) - x).tanh()
}

fn main() {
    if let Err(e) = run() {
        eprintln!("report failed: {e}");
        std::process::exit(1);
    }
}

/// The first result a fresh process computes (`--first-result`): a context, a `#[kernel]`
/// launch and a fused expression, read back. The parent times this process end to end.
fn first_result() -> R<()> {
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
fn cache_rows(rep: &mut Report, trials: usize) -> R<()> {
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

fn run() -> R<()> {
    let cli = Cli::parse();
    if cli.first_result {
        return first_result();
    }
    if let Some(side) = cli.footprint {
        return footprint::run(side);
    }
    let quick = cli.quick || std::env::var("LAZYCL_EXAMPLE_SMALL").is_ok();
    let out = Output {
        json: cli.json,
        svg: cli.svg.clone(),
    };
    let ctx = lz(Context::new())?;
    let info = ctx.device().clone();
    let raw = Raw::open(&info)?;
    let mut rep = Report {
        device: format!(
            "{} ({}, driver {})",
            info.name, info.platform_name, info.driver_version
        ),
        rows: vec![],
    };
    eprintln!("report on {}{}", rep.device, if quick { " (quick)" } else { "" });
    let trials = if quick { 3 } else { 7 };
    // `--arrays`: the array algorithms' rows only (scans).
    if cli.arrays {
        arrays::rows(&mut rep, &ctx, quick, trials)?;
        rows::rows(&mut rep, &ctx, quick, trials)?;
        return rep.finish(&out);
    }
    // `--rows`: the row functions' rows only (softmax, layer norm).
    if cli.rows {
        rows::rows(&mut rep, &ctx, quick, trials)?;
        return rep.finish(&out);
    }
    // `--rows-sweep`: the row functions' rows with each number of elements a work-item
    // takes (the figures behind the row kernels' layout rule).
    if cli.rows_sweep {
        // (elements per work-item, most work-items a row, rows a work-group: 0 for the
        // rule's, neighbours a vector load takes, softmax's maximum and sum in one pass).
        let layouts = [
            (16u32, 1024u32, 0u32, 4u32, false),
            (16, 1024, 0, 1, false),
            (16, 1024, 0, 4, true),
            (8, 1024, 0, 4, false),
            (16, 1024, 1, 4, false),
            (32, 1024, 0, 4, false),
        ];
        for (items, most, rows, width, online) in layouts {
            let tuning = lazycl::Tuning {
                row_items: Some(items),
                row_work_items: Some(most),
                rows_per_group: (rows > 0).then_some(rows),
                row_width: Some(width),
                rows_online: online,
                ..lazycl::Tuning::default()
            };
            let swept = lz(Context::builder().tuning(tuning).build())?;
            let at = rep.rows.len();
            rows::rows(&mut rep, &swept, quick, trials)?;
            let group = match rows {
                0 => "the rule's rows a group".to_string(),
                r => format!("{r} rows a group"),
            };
            let passes = if online { ", max and sum in one pass" } else { "" };
            for row in &mut rep.rows[at..] {
                row.name = format!(
                    "{} [{items} elements per work-item in runs of {width}, at most {most} a row, {group}{passes}]",
                    row.name
                );
            }
        }
        return rep.finish(&out);
    }
    // `--random`: the random numbers' rows only.
    if cli.random {
        random::rows(&mut rep, &ctx, &raw, quick, trials)?;
        return rep.finish(&out);
    }
    // `--builds`: the cold-start row only.
    if cli.builds {
        builds::rows(&mut rep, quick)?;
        return rep.finish(&out);
    }
    // `--host`, `--nodes`: the host's own cost only.
    if cli.host {
        host::rows(&mut rep, &ctx, &raw, quick, trials)?;
        return rep.finish(&out);
    }
    if cli.multi {
        multi::rows(&mut rep, &ctx, cli.multi_devices.as_deref(), quick, trials)?;
        return rep.finish(&out);
    }
    if cli.nodes {
        nodes::nodes(&mut rep, quick, trials)?;
        return rep.finish(&out);
    }
    // `--gemm`: the matrix products' rows only.
    if cli.gemm {
        gemm::rows(&mut rep, &ctx, quick, trials)?;
        return rep.finish(&out);
    }

    // --- the host's own cost: launches, flushes, a training step, after a long kernel --
    host::rows(&mut rep, &ctx, &raw, quick, trials)?;
    nodes::nodes(&mut rep, quick, trials)?;

    // --- bitonic sort, 64Ki i32: 136 launches and one read ----------------------------
    {
        let n = 64 * 1024;
        let data: Vec<i32> = (0..n as u64)
            .map(|i| (i.wrapping_mul(2654435761) % 1000003) as i32 - 500000)
            .collect();
        let steps = bitonic_steps(n);
        let k = lz(swap_pairs::bind(&ctx))?;
        let mut out = vec![0i32; n];
        let ours = per_run(
            trials,
            1,
            || {
                let mut arr = lz(ctx.from_slice(&data))?;
                for &x in &steps {
                    lz(k.global(n).launch(&mut arr, x, n as i32))?;
                }
                out = lz(arr.to_vec())?;
                Ok(())
            },
            || Ok(()),
        )?;
        let mut expect = data.clone();
        expect.sort_unstable();
        if out != expect {
            return Err("lazycl bitonic sort gave a wrong result".into());
        }
        let rk = raw.kernel(swap_pairs::SOURCE, "swap_pairs")?;
        let mut raw_out = vec![0i32; n];
        let theirs = per_run(
            trials,
            1,
            || {
                let b = raw.buffer_i32(&data)?;
                raw.set_mem(&rk, 0, b.get())?;
                raw.set(&rk, 1, &(n as u64))?;
                raw.set(&rk, 3, &(n as i32))?;
                for &x in &steps {
                    raw.set(&rk, 2, &x)?;
                    raw.enqueue_no_event(&rk, n, None)?;
                }
                raw.read_i32(&b, &mut raw_out)
            },
            || Ok(()),
        )?;
        if raw_out != expect {
            return Err("raw bitonic sort gave a wrong result".into());
        }
        rep.add(
            format!("bitonic sort 64Ki i32 ({} launches + read)", steps.len()),
            ours * 1e3,
            theirs * 1e3,
            "ms",
            "raw opencl3, same kernel",
        );
    }

    // --- bandwidth ---------------------------------------------------------------------
    let n: usize = if quick { 1 << 22 } else { 1 << 28 };
    let reps = if quick { 5 } else { 20 };
    let host: Vec<f32> = (0..n)
        .map(|i| ((i * 7919) % 1000) as f32 / 1000.0 - 0.5)
        .collect();
    let copy_gbs = {
        let a = raw.buffer_f32(&host)?;
        let b = unsafe {
            opencl3::memory::Buffer::<f32>::create(
                &raw.ctx,
                opencl3::memory::CL_MEM_READ_WRITE,
                n,
                std::ptr::null_mut(),
            )
        }
        .map_err(|e| format!("{e:?}"))?;
        let c1 = raw.kernel(raw::COPY1, "copy1")?;
        raw.set_mem(&c1, 0, a.get())?;
        raw.set_mem(&c1, 1, b.get())?;
        raw.set(&c1, 2, &(n as u32))?;
        let t1 = per_run(
            trials,
            reps,
            || raw.enqueue_no_event(&c1, n.div_ceil(256) * 256, Some(256)),
            || raw.finish(),
        )?;
        let c4 = raw.kernel(raw::COPY4, "copy4")?;
        let r4 = raw.kernel(raw::READ4, "read4")?;
        let r4_out = raw.buffer_f32(&[0.0])?;
        raw.set_mem(&r4, 1, r4_out.get())?;
        raw.set_mem(&c4, 0, a.get())?;
        raw.set_mem(&c4, 1, b.get())?;
        raw.set(&c4, 2, &((n / 4) as u32))?;
        let cu = info.compute_units as usize;
        let g4 = (n / 4).min(cu * 2048).div_ceil(256) * 256;
        let t4 = per_run(
            trials,
            reps,
            || raw.enqueue_no_event(&c4, g4, Some(256)),
            || raw.finish(),
        )?;
        let hc = raw.kernel(raw::CHAIN8, "chain8")?;
        raw.set_mem(&hc, 0, a.get())?;
        raw.set_mem(&hc, 1, b.get())?;
        raw.set(&hc, 2, &((n / 4) as u32))?;
        let th = per_run(
            trials,
            reps,
            || raw.enqueue_no_event(&hc, g4, Some(256)),
            || raw.finish(),
        )?;
        let bytes = 8.0 * n as f64;
        let (g1, g4s, gh) = (bytes / t1 / 1e9, bytes / t4 / 1e9, bytes / th / 1e9);
        eprintln!("  raw copy1 {g1:.1} GB/s, copy4 {g4s:.1} GB/s, hand chain8 {gh:.1} GB/s");
        let best = g1.max(g4s);
        let x = lz(ctx.from_slice(&host))?;
        let sync = || lz(ctx.synchronize());
        let tf = per_run(trials, reps, || lz(chain8(&x).eval().map(|_| ())), sync)?;
        rep.add(
            format!("fused 8-op chain f32, n=2^{}", n.trailing_zeros()),
            bytes / tf / 1e9,
            best,
            "GB/s",
            "raw copy (best of 1/4 per item)",
        );
        rep.add(
            "hand-written single chain kernel (raw)",
            gh,
            best,
            "GB/s",
            "raw copy (best of 1/4 per item)",
        );
        let op_by_op = per_run(
            trials,
            reps.div_ceil(4),
            || {
                let mut y = &x * 1.5;
                for step in 0..7 {
                    lz(y.eval().map(|_| ()))?;
                    y = match step {
                        0 => y + 2.0,
                        1 => y * &x,
                        2 => y - 0.25,
                        3 => y.abs(),
                        4 => y + 1.0,
                        5 => y.sqrt(),
                        _ => ((y * 3.0) / 7.0 - &x).tanh(),
                    };
                }
                lz(y.eval().map(|_| ()))
            },
            sync,
        )?;
        rep.add(
            "8-op chain evaluated op by op (eval after each)",
            bytes / op_by_op / 1e9,
            best,
            "GB/s",
            "raw copy (best of 1/4 per item)",
        );

        // Reductions.
        let ts = per_run(trials, reps, || lz((&x * &x).sum().eval().map(|_| ())), sync)?;
        rep.add(
            format!("sum(x*x) f32, n=2^{}", n.trailing_zeros()),
            4.0 * n as f64 / ts / 1e9,
            best,
            "GB/s",
            "raw copy (best of 1/4 per item)",
        );
        let shapes: &[(usize, usize)] = if quick {
            &[(20000, 100), (2000, 1000), (320, 2530), (20000, 20)]
        } else {
            &[(200000, 100), (20000, 1000), (3200, 25300), (2000000, 20)]
        };
        for &(rows, cols) in shapes {
            let m = lz(ctx.from_shape_slice([rows, cols], &host[..rows * cols]))?;
            let mbuf = raw.buffer_f32(&host[..rows * cols])?;
            let v = lz(ctx.from_slice(&host[..cols]))?;
            let u = lz(ctx.from_slice(&host[..rows]))?;
            let bytes = 4.0 * (rows * cols + rows + cols) as f64;
            // The practical bandwidth at this size: a float4 copy of the matrix.
            let n4 = rows * cols / 4;
            raw.set(&c4, 2, &(n4 as u32))?;
            let g = n4.min(cu * 2048).div_ceil(256) * 256;
            let tc = per_run(
                trials,
                reps,
                || raw.enqueue_no_event(&c4, g, Some(256)),
                || raw.finish(),
            )?;
            let same = 8.0 * (n4 * 4) as f64 / tc / 1e9;
            // What one pass over the same bytes can reach: a raw read-only kernel, and a
            // lazycl full sum of the matrix.
            raw.set_mem(&r4, 0, mbuf.get())?;
            raw.set(&r4, 2, &(n4 as u32))?;
            let tr = per_run(
                trials,
                reps,
                || raw.enqueue_no_event(&r4, g, Some(256)),
                || raw.finish(),
            )?;
            let tsum = per_run(trials, reps, || lz(m.sum().eval().map(|_| ())), sync)?;
            rep.add(
                format!("m.sum(), {rows}x{cols}"),
                4.0 * (rows * cols) as f64 / tsum / 1e9,
                4.0 * (n4 * 4) as f64 / tr / 1e9,
                "GB/s",
                "raw float4 read of the matrix",
            );
            rep.add(
                format!("raw float4 read of the matrix, {rows}x{cols}"),
                4.0 * (n4 * 4) as f64 / tr / 1e9,
                same,
                "GB/s",
                "raw float4 copy of the matrix",
            );
            let t = per_run(
                trials,
                reps,
                || lz((&m * &v).sum_axis(1).eval().map(|_| ())),
                sync,
            )?;
            rep.add(
                format!("(m * v).sum_axis(1), {rows}x{cols}"),
                bytes / t / 1e9,
                same,
                "GB/s",
                "raw float4 copy of the matrix",
            );
            // The same product four times per flush: the host's planning cost is shared, so
            // this shows the kernel's own bandwidth when the host is not the limit.
            let t4 = per_run(
                trials,
                reps,
                || {
                    let p: Vec<Array<f32>> = (0..4).map(|_| (&m * &v).sum_axis(1)).collect();
                    lz(lazycl::eval(&p))
                },
                sync,
            )?;
            rep.add(
                format!("(m * v).sum_axis(1), {rows}x{cols}, 4 per flush"),
                4.0 * bytes / t4 / 1e9,
                same,
                "GB/s",
                "raw float4 copy of the matrix",
            );
            let ut = u.insert_axis(1);
            let t4 = per_run(
                trials,
                reps,
                || {
                    let p: Vec<Array<f32>> = (0..4).map(|_| (&m * &ut).sum_axis(0)).collect();
                    lz(lazycl::eval(&p))
                },
                sync,
            )?;
            rep.add(
                format!("(m * u[:, None]).sum_axis(0), {rows}x{cols}, 4 per flush"),
                4.0 * bytes / t4 / 1e9,
                same,
                "GB/s",
                "raw float4 copy of the matrix",
            );
            let t = per_run(
                trials,
                reps,
                || lz((&m * &ut).sum_axis(0).eval().map(|_| ())),
                sync,
            )?;
            rep.add(
                format!("(m * u[:, None]).sum_axis(0), {rows}x{cols}"),
                bytes / t / 1e9,
                same,
                "GB/s",
                "raw float4 copy of the matrix",
            );
        }
        best
    };
    views::rows(&mut rep, &ctx, &host, copy_gbs, quick, trials, reps)?;

    // --- a scalar operand right after a long kernel ------------------------------------
    {
        let spin = lz(Kernel::bind(&ctx, &SPIN))?;
        let items = (info.compute_units as usize * 256).max(256);
        let buf = lz(ctx.full(items, 1.0f32))?;
        let b = lz(buf.kernel_arg())?;
        let target = 0.080;
        let (iters, spin_time) = calibrate_spin(target, |iters| {
            lz(spin.launch(
                Dims::from(items),
                None,
                &[b.mem(), KernelArg::Scalar(lazycl::Element::to_arg_bits(iters))],
            ))?;
            lz(ctx.synchronize())
        })?;
        let x = lz(ctx.from_slice(&host[..1 << 16]))?;
        // Build the three kernels first: this row is about waiting, not compiling.
        lz((2.0 * &x).eval().map(|_| ()))?;
        lz(x.lt(0.0).eval().map(|_| ()))?;
        lz((&x / 3.0).eval().map(|_| ()))?;
        lz(ctx.synchronize())?;
        let mut worst: f64 = 0.0;
        for _ in 0..3 {
            lz(spin.launch(
                Dims::from(items),
                None,
                &[b.mem(), KernelArg::Scalar(lazycl::Element::to_arg_bits(iters))],
            ))?;
            let t = Instant::now();
            let y = 2.0 * &x;
            lz(y.eval().map(|_| ()))?;
            let m = x.lt(0.0);
            lz(m.eval().map(|_| ()))?;
            let z = &x / 3.0;
            lz(z.eval().map(|_| ()))?;
            worst = worst.max(t.elapsed().as_secs_f64() / 3.0);
            lz(ctx.synchronize())?;
        }
        rep.add(
            "host time of `2.0 * &x` + eval after a long kernel (worst of 3)",
            worst * 1e6,
            spin_time * 1e6,
            "µs",
            "the long kernel's duration",
        );

        // A read of a small result while a long kernel runs on another queue: it waits
        // for the result's own kernel only. The long kernel is one work-item, so that it
        // keeps one core of a CPU device busy, not all of them.
        let slow_q = lz(ctx.new_queue())?;
        let mut busy = lz(ctx.full(1, 1.0f32))?;
        let small = lz(ctx.from_slice(&host[..256]))?;
        lz((&small * 3.0 + 1.0).to_vec().map(drop))?;
        let on_slow_q = LaunchOptions {
            queue: Some(&slow_q),
            ..LaunchOptions::new(Dims::from(1))
        };
        let mut spin_one = |iters: u32| -> R<()> {
            let ba = lz(busy.kernel_arg_mut())?;
            let args = [ba.mem(), KernelArg::Scalar(lazycl::Element::to_arg_bits(iters))];
            lz(spin.submit(&on_slow_q, &args, &[&ba], false).map(drop))
        };
        let (iters, spin_time) = calibrate_spin(target, |iters| {
            spin_one(iters)?;
            lz(ctx.synchronize())
        })?;
        let mut worst: f64 = 0.0;
        for _ in 0..3 {
            spin_one(iters)?;
            let t = Instant::now();
            let v = lz((&small * 3.0 + 1.0).to_vec())?;
            worst = worst.max(t.elapsed().as_secs_f64());
            if v[0] != host[0] * 3.0 + 1.0 {
                return Err("the small result is wrong".into());
            }
            lz(ctx.synchronize())?;
        }
        rep.add(
            "host time to compute + read a small result while a long kernel runs on another queue (worst of 3)",
            worst * 1e6,
            spin_time * 1e6,
            "µs",
            "the long kernel's duration",
        );
    }

    // --- one iteration of each workload example ------------------------------------------
    {
        let reps = if quick { 5 } else { 20 };
        let (lr32, lr64) = if quick {
            ((20_000, 100), (3_600, 126))
        } else {
            ((200_000, 100), (36_000, 126))
        };
        workloads::logistic_regression::<f32>(&mut rep, &ctx, &raw, lr32.0, lr32.1, trials, reps)?;
        workloads::logistic_regression::<f64>(&mut rep, &ctx, &raw, lr64.0, lr64.1, trials, reps)?;
        let km = if quick {
            (20_000, 16, 16)
        } else {
            (1_000_000, 16, 16)
        };
        workloads::kmeans(&mut rep, &ctx, &raw, km, trials, reps)?;
        let n = if quick { 1_000_000 } else { 10_000_000 };
        workloads::gaussian_logp::<f32>(&mut rep, &ctx, &raw, n, trials, reps)?;
    }

    gemm::rows(&mut rep, &ctx, quick, trials)?;
    arrays::rows(&mut rep, &ctx, quick, trials)?;
    random::rows(&mut rep, &ctx, &raw, quick, trials)?;
    cache_rows(&mut rep, trials)?;

    rep.finish(&out)?;
    if !out.json {
        println!("\n{}", ctx.stats());
    }
    Ok(())
}
