//! `LAZYCL_DUMP_DOT=dir` (`ContextBuilder::dump_dot`): each flush that builds a kernel —
//! one of its plans not yet in the context's kernel cache — writes its picture (`dot`)
//! to `dir/flush-<n>.dot`, `n` the flush's number in the process. Flushes that only
//! launch cached kernels (a training loop's steady state) write nothing, so the
//! directory holds one picture per new structure. Writing is best effort: the directory
//! is created, and the first failure warns on stderr (once per process); a flush never
//! fails for its picture.
//!
//! A matrix product whose tile a search chose was built by that search before this
//! check, so its flush counts as cached unless another kernel is new.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use super::dot::{render, Picture};
use super::is_cached;
use crate::backend::context::ContextInner;
use crate::plan::{GNode, KernelPlan};

/// Set once a failure has been reported.
static WARNED: AtomicBool = AtomicBool::new(false);

/// Writes the picture of flush `number` into `dir` if one of its `kernels` (of `kinds`,
/// `plan::describe`) is new.
pub(super) fn dump(
    dir: &Path,
    number: u64,
    ctx: &ContextInner,
    graph: &[GNode],
    roots: &[usize],
    kernels: &[KernelPlan],
    kinds: &[String],
) {
    let cached: Vec<bool> = kernels.iter().map(|p| is_cached(ctx, p)).collect();
    if cached.iter().all(|&c| c) {
        return;
    }
    let picture = Picture {
        graph,
        roots,
        kernels,
        cached: &cached,
        kinds,
    };
    let text = render(&picture, &format!("flush {number} on {}", ctx.device.name));
    let path = dir.join(format!("flush-{number}.dot"));
    let written = std::fs::create_dir_all(dir).and_then(|()| std::fs::write(&path, text));
    if let Err(e) = written {
        if !WARNED.swap(true, Ordering::Relaxed) {
            eprintln!(
                "lazycl: LAZYCL_DUMP_DOT: cannot write {}: {e} (further failures are not reported)",
                path.display()
            );
        }
    }
}
