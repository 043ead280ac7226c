//! Choosing each GEMM kernel's tiles before it is generated: the tile a test forces
//! (`Tuning::gemm_tile`), else the one remembered for its shape class on this device
//! (chosen by a search in this process, or read from the disk cache's table, so a second
//! process searches nothing), else — for a product large enough to be worth it, unless
//! `LAZYCL_TUNE=off` — a search now, else the fixed default (`plan::gemm::tiles`).
//!
//! The table is a file, so user input: an entry is used only if its tile fits the device
//! (`tiles::fits`: work-group, local memory, the values its work-items keep live, the size
//! of its code) and is known to run on it. An entry not known to run (written by hand, or
//! by an older lazycl) is tried once first: marked `trial` in the table, its kernel built
//! and checked against its work-group, launched once on zeroed buffers and waited for,
//! within [`TRIAL_LIMIT`]; then marked `ok`. An entry that does not fit, or whose trial
//! fails, is marked `bad`, and one left marked `trial` (the process did not survive its
//! trial) counts as bad: neither is used or tried again, and the product takes the search
//! or the default as if there were no entry (`gemm_tiles_discarded`, `gemm_tile_trials`).
//!
//! A search times the kernel itself, on buffers of the right sizes filled with zeros:
//! each candidate tile is built (through the kernel cache, so the winner is built once),
//! launched once to warm up, then timed over enough launches to fill a few milliseconds.
//! A candidate that fails to build or launch is passed over.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::backend::context::ContextInner;
use crate::backend::queue::QueueInner;
use crate::backend::tile_table::TileState;
use crate::dtype::ScalarBits;
use crate::error::Result;
use crate::layout::GemmTile;
use crate::plan::gemm::set_tile;
use crate::plan::gemm::tiles::{self, GemmClass, SEARCH_FROM};
use crate::plan::{GNode, KernelKind, KernelPlan};
use crate::stats::{Counters, WaitReason};

use super::scalars_of;
use super::tile_runs::{Buffers, TileRun};

/// How long a search times each candidate, at least (one launch when that takes longer).
const TIMED: Duration = Duration::from_millis(10);

/// How long the trial of a tile from the table may take, its build included
/// (`Tuning::tile_trial_limit` overrides): a GEMM kernel builds in seconds on PoCL and
/// launches in far less; a tile past this is not worth its compile.
pub(crate) const TRIAL_LIMIT: Duration = Duration::from_secs(60);

/// Chooses the tile of every GEMM kernel of a flush that has none, searching where a
/// search is due (on `queue`, before the flush's kernels are enqueued).
pub(crate) fn choose_tiles(
    ctx: &Arc<ContextInner>,
    queue: &Arc<QueueInner>,
    graph: &[GNode],
    plans: &mut [KernelPlan],
) -> Result<()> {
    for plan in plans.iter_mut() {
        if matches!(&plan.kind, KernelKind::Gemm(g) if g.tile.is_none()) {
            let tile = choose(ctx, Some(OnDevice { queue, graph }), plan)?;
            set_tile(plan, tile, &ctx.profile);
        }
    }
    Ok(())
}

/// Where a search may time its candidates: the flush's queue, and its graph (whose
/// scalars the launches bind).
#[derive(Clone, Copy)]
pub(crate) struct OnDevice<'a> {
    queue: &'a Arc<QueueInner>,
    graph: &'a [GNode],
}

/// The tile for GEMM plan `plan` (see the module's rules); with no `device`, never a new
/// search or trial, and nothing written (`explain` shows what a launch would use, short
/// of a search).
pub(crate) fn choose(
    ctx: &Arc<ContextInner>,
    device: Option<OnDevice<'_>>,
    plan: &KernelPlan,
) -> Result<GemmTile> {
    let KernelKind::Gemm(g) = &plan.kind else {
        return Err(crate::error::Error::Internal(
            "a tile for a kernel that is no GEMM".into(),
        ));
    };
    let profile = &ctx.profile;
    let class = GemmClass::of(g);
    // A kernel that reduces its rows needs a tile that covers them (those of any
    // length of its class, so that the class's remembered tile serves all of them).
    let rows = class.rows as usize;
    let usable = |t: &GemmTile| match rows {
        0 => tiles::fits(t, profile, g.dtype),
        n => tiles::covers_rows(t, profile, g.dtype, n),
    };
    if let Some(t) = profile.tuning.gemm_tile.filter(usable) {
        return Ok(t);
    }
    let words = class.words();
    if let Some(t) = remembered(ctx, device, plan, &words, &usable) {
        return Ok(t);
    }
    match device {
        Some(device) if g.work() >= SEARCH_FROM && searching()? => {
            let t = search(ctx, device, plan, &class)?;
            ctx.set_tile(&words, t, TileState::Checked);
            Ok(t)
        }
        _ => Ok(fallback(profile, &class)),
    }
}

/// The table's tile for shape class `words`, where it may be used (the module's rules):
/// it fits, and is known to run or passes its trial now. With no `device`, a tile that
/// fits, known to run or not (what a launch would try).
fn remembered(
    ctx: &Arc<ContextInner>,
    device: Option<OnDevice<'_>>,
    plan: &KernelPlan,
    words: &str,
    usable: &dyn Fn(&GemmTile) -> bool,
) -> Option<GemmTile> {
    let entry = ctx.tile_entry(words)?;
    let tile = entry.tile;
    match entry.state {
        TileState::Bad | TileState::OnTrial => return None,
        TileState::Checked | TileState::Unchecked => {}
    }
    let Some(device) = device else {
        return usable(&tile).then_some(tile);
    };
    if !usable(&tile) {
        discard(ctx, words, tile);
        return None;
    }
    if entry.state == TileState::Checked {
        return Some(tile);
    }
    // Marked first: should the trial never end, no process tries it again.
    ctx.set_tile(words, tile, TileState::OnTrial);
    Counters::add(&ctx.counters.gemm_tile_trials, 1);
    if trial(ctx, device, plan, tile) {
        ctx.set_tile(words, tile, TileState::Checked);
        Some(tile)
    } else {
        discard(ctx, words, tile);
        None
    }
}

/// Marks the table's `tile` for class `words` bad: never used or tried again.
fn discard(ctx: &ContextInner, words: &str, tile: GemmTile) {
    ctx.set_tile(words, tile, TileState::Bad);
    Counters::add(&ctx.counters.gemm_tiles_discarded, 1);
}

/// Whether `plan` runs with `tile`: its kernel builds and takes the tile's work-group,
/// one launch on zeroed buffers completes, and all of it within the trial's limit.
fn trial(ctx: &Arc<ContextInner>, device: OnDevice<'_>, plan: &KernelPlan, tile: GemmTile) -> bool {
    let limit = ctx.profile.tuning.tile_trial_limit.unwrap_or(TRIAL_LIMIT);
    let start = Instant::now();
    let mut trial = plan.clone();
    set_tile(&mut trial, tile, &ctx.profile);
    let ran = (|| -> Result<()> {
        let scalars = scalars_of(&trial, device.graph)?;
        let buffers = Buffers::for_plan(ctx, device.queue, &trial)?;
        TileRun::new(ctx, device.queue, &trial, &buffers, &scalars)?.launch()?;
        device.queue.finish(WaitReason::Search)
    })();
    ran.is_ok() && start.elapsed() <= limit
}

/// The tile without a search: the default table's, or for a kernel that reduces its rows
/// the narrowest that covers them.
pub(crate) fn fallback(profile: &crate::plan::DeviceProfile, class: &GemmClass) -> GemmTile {
    match class.rows {
        0 => tiles::default_tile(profile, class),
        n => tiles::covering(profile, class.dtype, n as usize),
    }
}

/// Whether searches are on (`LAZYCL_TUNE`, on unless `off`).
fn searching() -> Result<bool> {
    Ok(crate::env::switch("LAZYCL_TUNE")? != Some(false))
}

/// Times every candidate tile for `plan` and returns the fastest.
fn search(
    ctx: &Arc<ContextInner>,
    device: OnDevice<'_>,
    plan: &KernelPlan,
    class: &GemmClass,
) -> Result<GemmTile> {
    let queue = device.queue;
    let scalars = scalars_of(plan, device.graph)?;
    let candidates = tiles::candidates(&ctx.profile, class);
    if let [only] = candidates[..] {
        return Ok(only);
    }
    Counters::add(&ctx.counters.gemm_searches, 1);
    let buffers = Buffers::for_plan(ctx, queue, plan)?;
    let mut best: Option<(Duration, GemmTile)> = None;
    for tile in candidates {
        let mut trial = plan.clone();
        set_tile(&mut trial, tile, &ctx.profile);
        let Ok(time) = time(ctx, queue, &trial, &buffers, &scalars) else {
            continue;
        };
        Counters::add(&ctx.counters.gemm_candidates, 1);
        if best.is_none_or(|(b, _)| time < b) {
            best = Some((time, tile));
        }
    }
    Ok(best.map_or_else(|| fallback(&ctx.profile, class), |(_, t)| t))
}

/// The time of one launch of `plan`'s kernel.
fn time(
    ctx: &Arc<ContextInner>,
    queue: &Arc<QueueInner>,
    plan: &KernelPlan,
    buffers: &Buffers,
    scalars: &[ScalarBits],
) -> Result<Duration> {
    let mut run = TileRun::new(ctx, queue, plan, buffers, scalars)?;
    run.launch()?;
    queue.finish(WaitReason::Search)?;
    let start = Instant::now();
    run.launch()?;
    queue.finish(WaitReason::Search)?;
    let once = start.elapsed();
    let reps = (TIMED.as_secs_f64() / once.as_secs_f64().max(1e-6)).clamp(1.0, 50.0) as u32;
    let start = Instant::now();
    for _ in 0..reps {
        run.launch()?;
    }
    queue.finish(WaitReason::Search)?;
    Ok(start.elapsed() / reps)
}
