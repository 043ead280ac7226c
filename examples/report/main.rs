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
mod bandwidth;
mod builds;
mod cache;
mod chart;
mod fft;
mod first_op;
mod footprint;
mod gemm;
mod grad;
mod host;
mod multi;
mod narrow;
mod nodes;
mod random;
mod raw;
mod reference;
mod rows;
mod sorting;
mod table;
mod timing;
mod views;
mod waits;
mod workloads;

use std::path::PathBuf;

use clap::{ArgGroup, Parser};
use lazycl::KernelSource;
use lazycl::{Array, Context, DType};
use raw::{Raw, R};
use table::{Output, Report};
use timing::{calibrate_spin, median, per_call, per_run};

/// The side-by-side report: lazycl next to a raw-opencl3 baseline (or a reference
/// script's figures), in one process, on one device. Prints a markdown table, or one JSON
/// object per row.
#[derive(Parser)]
#[command(
    group(ArgGroup::new("only").args(["arrays", "rows", "rows_sweep", "random", "gemm", "narrow", "grad", "fft", "builds", "host", "nodes", "multi"])),
    after_help = "LAZYCL_EXAMPLE_SMALL=1 implies --quick. LAZYCL_DEVICE picks the device. \
                  LAZYCL_ARRAYS_REFERENCE, LAZYCL_GEMM_REFERENCE and LAZYCL_NARROW_REFERENCE \
                  name files of JSON lines written by benches/reference/arrays_reference.py \
                  --json, gemm_reference.py --json and narrow_reference.py --json in the \
                  same call: the torch, JAX and cuBLAS baselines of the full-size array, \
                  row, random-number, GEMM and 16-bit float rows \
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
    /// Only the 16-bit floats' rows (the fused chain, a sum, softmax, GEMM)
    #[arg(long)]
    narrow: bool,
    /// Only the gradient rows (training steps by `grad` against the hand-written ones)
    #[arg(long)]
    grad: bool,
    /// Only the Fourier transforms' rows (batched 1-D and 2-D transforms, a windowed power
    /// spectrum, a convolution by transforms) against a copy of the same data
    #[arg(long)]
    fft: bool,
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

fn run() -> R<()> {
    let cli = Cli::parse();
    if cli.first_result {
        return cache::first_result();
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
    if cli.narrow {
        narrow::rows(&mut rep, &ctx, &raw, quick, trials)?;
        return rep.finish(&out);
    }
    if cli.grad {
        grad::rows(&mut rep, &ctx, quick, trials)?;
        return rep.finish(&out);
    }
    if cli.fft {
        fft::rows(&mut rep, &ctx, quick, trials)?;
        return rep.finish(&out);
    }

    // --- the host's own cost: launches, flushes, a training step, after a long kernel --
    host::rows(&mut rep, &ctx, &raw, quick, trials)?;
    nodes::nodes(&mut rep, quick, trials)?;

    sorting::bitonic(&mut rep, &ctx, &raw, trials)?;

    // --- bandwidth ---------------------------------------------------------------------
    let n: usize = if quick { 1 << 22 } else { 1 << 28 };
    let reps = if quick { 5 } else { 20 };
    let host: Vec<f32> = (0..n)
        .map(|i| ((i * 7919) % 1000) as f32 / 1000.0 - 0.5)
        .collect();
    let copy_gbs = bandwidth::rows(&mut rep, &ctx, &raw, &host, quick, trials, reps)?;
    views::rows(&mut rep, &ctx, &host, copy_gbs, quick, trials, reps)?;
    waits::rows(&mut rep, &ctx, &host)?;

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
    narrow::rows(&mut rep, &ctx, &raw, quick, trials)?;
    grad::rows(&mut rep, &ctx, quick, trials)?;
    arrays::rows(&mut rep, &ctx, quick, trials)?;
    random::rows(&mut rep, &ctx, &raw, quick, trials)?;
    cache::rows(&mut rep, trials)?;

    rep.finish(&out)?;
    if !out.json {
        println!("\n{}", ctx.stats());
    }
    Ok(())
}
