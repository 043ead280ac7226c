//! The report's rows for sorting and compaction: sorts in Gkeys/s (keys per
//! second), compactions in ms, against torch and JAX measured in the same call by
//! `benches/reference/arrays_reference.py --json` (`LAZYCL_ARRAYS_REFERENCE`); with
//! `--quick` (PoCL), small sizes against the host's stable sort and filter.

use lazycl::{Array, Context};
use opencl3::memory::ClMem;

use crate::raw::{Raw, R};
use crate::reference::Reference;
use crate::{bitonic_steps, lz, median, per_run, swap_pairs, Report};

/// What a sort row sorts.
#[derive(Clone, Copy, PartialEq)]
enum Sorted {
    /// Values (`sort`).
    Keys,
    /// Positions (`argsort`).
    Positions,
}

/// One sort row: its name (the reference script's), rows and row length, key type.
struct SortRow {
    name: &'static str,
    rows: usize,
    len: usize,
    float: bool,
    what: Sorted,
}

fn sort_rows_of(quick: bool) -> Vec<SortRow> {
    let row = |name, rows, len, float, what| SortRow {
        name,
        rows,
        len,
        float,
        what,
    };
    use Sorted::*;
    if quick {
        vec![
            row("sort i32 2^20", 1, 1 << 20, false, Keys),
            row("sort f32 2^20", 1, 1 << 20, true, Keys),
            row("argsort f32 2^20", 1, 1 << 20, true, Positions),
            row("sort f32 1024 rows of 1024", 1024, 1024, true, Keys),
        ]
    } else {
        vec![
            row("sort i32 2^20", 1, 1 << 20, false, Keys),
            row("sort i32 2^26", 1, 1 << 26, false, Keys),
            row("sort f32 2^20", 1, 1 << 20, true, Keys),
            row("sort f32 2^26", 1, 1 << 26, true, Keys),
            row("argsort f32 2^26", 1, 1 << 26, true, Positions),
            row("sort f32 16384 rows of 4096", 16384, 4096, true, Keys),
            row("sort f32 256 rows of 262144", 256, 1 << 18, true, Keys),
        ]
    }
}

/// Adds the sort and compaction rows.
pub fn rows(rep: &mut Report, ctx: &Context, refs: &Reference, quick: bool, trials: usize) -> R<()> {
    for s in sort_rows_of(quick) {
        let n = s.rows * s.len;
        let bits = |i: u64| (i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 32) as u32;
        let (t, host_t) = if s.float {
            let host: Vec<f32> = (0..n as u64).map(|i| bits(i) as f32 / 1e5 - 2e4).collect();
            time_both(ctx, &s, &host, quick, trials, |a, b| a.total_cmp(b))?
        } else {
            let host: Vec<i32> = (0..n as u64).map(|i| bits(i) as i32).collect();
            time_both(ctx, &s, &host, quick, trials, |a, b| a.cmp(b))?
        };
        if quick {
            rep.add(
                s.name,
                n as f64 / t / 1e9,
                n as f64 / host_t / 1e9,
                "Gkeys/s",
                "the host's stable sort",
            );
            continue;
        }
        let ours = n as f64 / t / 1e9;
        let torch = if s.what == Sorted::Keys {
            "torch.sort(stable=True) (same call)"
        } else {
            "torch.argsort(stable=True) (same call)"
        };
        rep.add(
            s.name,
            ours,
            refs.get(&format!("torch {}", s.name), "gkeys"),
            "Gkeys/s",
            torch,
        );
        rep.add(
            format!("{} (against JAX)", s.name),
            ours,
            refs.get(&format!("jax {}", s.name), "gkeys"),
            "Gkeys/s",
            "JAX jit sort (same call)",
        );
    }
    compact_rows(rep, ctx, refs, quick, trials)
}

/// Seconds of the row's sort on the device, and (with `quick`) of the host's stable sort
/// of `host` (else 0).
fn time_both<T: lazycl::Numeric + Copy>(
    ctx: &Context,
    s: &SortRow,
    host: &[T],
    quick: bool,
    trials: usize,
    cmp: impl Fn(&T, &T) -> std::cmp::Ordering,
) -> R<(f64, f64)> {
    let a: Array<T> = lz(ctx.from_shape_slice([s.rows, s.len], host))?;
    let t = per_run(
        trials,
        3,
        || match s.what {
            Sorted::Keys => lz(a.sort().map(drop)),
            Sorted::Positions => lz(a.argsort().map(drop)),
        },
        || lz(ctx.synchronize()),
    )?;
    let host_t = if quick {
        host_sort(host, s.len, trials, cmp)
    } else {
        0.0
    };
    Ok((t, host_t))
}

/// Seconds of the host's stable sort of rows of `len` (median of `trials`).
fn host_sort<T: Copy>(
    host: &[T],
    len: usize,
    trials: usize,
    cmp: impl Fn(&T, &T) -> std::cmp::Ordering,
) -> f64 {
    median(
        (0..trials)
            .map(|_| {
                let mut v = host.to_vec();
                let t = std::time::Instant::now();
                for row in v.chunks_mut(len) {
                    row.sort_by(&cmp);
                }
                std::hint::black_box(&v);
                t.elapsed().as_secs_f64()
            })
            .collect(),
    )
}

/// `compress` and `nonzero` of half the elements, in ms.
fn compact_rows(rep: &mut Report, ctx: &Context, refs: &Reference, quick: bool, trials: usize) -> R<()> {
    let n: usize = if quick { 1 << 22 } else { 1 << 26 };
    let name = format!("compress f32 2^{} by a mask of half", n.trailing_zeros());
    let nz = format!("nonzero 2^{} mask of half", n.trailing_zeros());
    let host: Vec<f32> = (0..n).map(|i| (i % 1000) as f32 - 500.0).collect();
    let keep: Vec<bool> = (0..n as u64)
        .map(|i| (i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 63) == 1)
        .collect();
    let x: Array<f32> = lz(ctx.from_slice(&host))?;
    let m: Array<bool> = lz(ctx.from_slice(&keep))?;
    let sync = || lz(ctx.synchronize());
    let t = per_run(trials, 5, || lz(x.compress(&m).map(drop)), sync)?;
    let tz = per_run(trials, 5, || lz(m.nonzero().map(drop)), sync)?;
    if quick {
        let host_t = median(
            (0..trials)
                .map(|_| {
                    let t = std::time::Instant::now();
                    let v: Vec<f32> = host
                        .iter()
                        .zip(&keep)
                        .filter(|(_, &k)| k)
                        .map(|(&x, _)| x)
                        .collect();
                    std::hint::black_box(&v);
                    t.elapsed().as_secs_f64()
                })
                .collect(),
        );
        rep.add(name, t * 1e3, host_t * 1e3, "ms", "a filter on the host");
        return Ok(());
    }
    let torch = [
        "torch x[mask] (same call; it waits for the count)",
        "torch.nonzero (same call; it waits for the count)",
    ];
    for ((row, ours), torch) in [(&name, t), (&nz, tz)].into_iter().zip(torch) {
        rep.add(
            row.clone(),
            ours * 1e3,
            refs.get(&format!("torch {row}"), "ms"),
            "ms",
            torch,
        );
        rep.add(
            format!("{row} (against JAX)"),
            ours * 1e3,
            refs.get(&format!("jax {row}"), "ms"),
            "ms",
            "JAX jit nonzero(size=n) (same call)",
        );
    }
    Ok(())
}

/// A bitonic sort of 64Ki `i32` by a `#[kernel]` (136 launches and one read) against the
/// same kernel launched raw.
pub fn bitonic(rep: &mut Report, ctx: &Context, raw: &Raw, trials: usize) -> R<()> {
    let n = 64 * 1024;
    let data: Vec<i32> = (0..n as u64)
        .map(|i| (i.wrapping_mul(2654435761) % 1000003) as i32 - 500000)
        .collect();
    let steps = bitonic_steps(n);
    let k = lz(swap_pairs::bind(ctx))?;
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
    Ok(())
}
