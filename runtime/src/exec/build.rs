//! Finding and building kernels: a plan's in the context's cache (`kernel_for`), the
//! helper kernels some layouts launch beside it (`cached_kernel`), and what a new flush
//! needs before it launches anything: the plans whose kernels are not cached are
//! generated and built together, one thread per core (an OpenCL build
//! releases the calling thread; NVIDIA's compiles to machine code there, PoCL compiles
//! to LLVM IR there and to machine code when each kernel first runs), and a build phase
//! that outlasts the context's notice threshold says so on stderr, once per context.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Instant;

use crate::backend::context::ContextInner;
use crate::backend::kernel::CompiledKernel;
use crate::backend::program::{build_options, obtain};
use crate::codegen::{combine_source, fused_source, COMBINE_KERNEL_NAME, FUSED_KERNEL_NAME};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::graph::ReduceOp;
use crate::plan::describe::operations;
use crate::plan::{key, KernelKind, KernelPlan};
use crate::stats::Counters;

/// Finds or builds the kernel for a plan. A hit builds no string and no program.
pub(super) fn kernel_for(ctx: &ContextInner, plan: &KernelPlan) -> Result<Arc<CompiledKernel>> {
    cached_kernel_for(
        ctx,
        &plan.key,
        FUSED_KERNEL_NAME,
        || fused_source_checked(ctx, plan),
        || operations(plan),
    )
}

/// Generates and builds the kernel for a plan, without looking in the cache.
fn new_kernel(ctx: &ContextInner, plan: &KernelPlan) -> Result<Arc<CompiledKernel>> {
    let source = fused_source_checked(ctx, plan)?;
    build_kernel(ctx, FUSED_KERNEL_NAME, &source).map_err(|e| generated_build_failed(e, || operations(plan)))
}

/// A build failure of a kernel lazycl generated (`what` it computes, in users' words) as
/// what it is: a bug in lazycl, not in the user's code, with the build log and the
/// source. Other errors pass unchanged.
pub(super) fn generated_build_failed(e: Error, what: impl FnOnce() -> String) -> Error {
    match e {
        Error::Build {
            name,
            log,
            source_code,
        } => Error::Internal(format!(
            "the OpenCL compiler rejected the kernel `{name}` that lazycl generated for {}; \
             the operations are valid, the generated code is not\n--- build log ---\n{log}\n\
             --- source ---\n{source_code}",
            what()
        )),
        e => e,
    }
}

/// The source of a plan's kernel, once the device is known to hold its types.
fn fused_source_checked(ctx: &ContextInner, plan: &KernelPlan) -> Result<String> {
    for v in &plan.values {
        ctx.check_dtype(v.dtype)?;
    }
    fused_source(plan)
        .ok_or_else(|| Error::Internal("a GEMM kernel was generated before its tile was chosen".into()))
}

/// Whether a plan launches anything (an empty result launches nothing).
pub(super) fn has_work(plan: &KernelPlan) -> bool {
    match &plan.kind {
        KernelKind::Reduction(r) => r.n_out > 0,
        _ => plan.numel > 0,
    }
}

/// The second-pass kernel of a split reduction.
pub(super) fn combine_kernel(
    ctx: &ContextInner,
    op: ReduceOp,
    dtype: DType,
    group: u32,
    lanes: u32,
) -> Result<Arc<CompiledKernel>> {
    let key = key::combine(op, dtype, group, lanes);
    cached_kernel(ctx, &key, COMBINE_KERNEL_NAME, || {
        Ok(combine_source(op, dtype, group, lanes))
    })
}

/// Finds or builds a helper kernel of lazycl's own algorithms (a sort's, a compaction's,
/// a reduction's second pass) under `key`.
pub(super) fn cached_kernel(
    ctx: &ContextInner,
    key: &[u32],
    name: &str,
    source: impl FnOnce() -> Result<String>,
) -> Result<Arc<CompiledKernel>> {
    let what = || format!("its own step `{name}` (of a sort, a compaction or a reduction)");
    cached_kernel_for(ctx, key, name, source, what)
}

/// Finds or builds the kernel `name` under `key`; `what` says what it computes, should
/// the compiler reject it.
fn cached_kernel_for(
    ctx: &ContextInner,
    key: &[u32],
    name: &str,
    source: impl FnOnce() -> Result<String>,
    what: impl FnOnce() -> String,
) -> Result<Arc<CompiledKernel>> {
    if let Some(k) = ctx
        .fused_kernels
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(key)
    {
        Counters::add(&ctx.counters.kernel_cache_hits, 1);
        return Ok(k.clone());
    }
    Counters::add(&ctx.counters.kernel_cache_misses, 1);
    let source = source()?;
    // Built outside the cache lock: launches of cached kernels on other threads go on.
    let fused = build_kernel(ctx, name, &source).map_err(|e| generated_build_failed(e, what))?;
    let mut cache = ctx.fused_kernels.lock().unwrap_or_else(|e| e.into_inner());
    Ok(cache.entry(key.to_vec()).or_insert(fused).clone())
}

/// Builds (or loads from the disk cache) the program of `source` and its kernel `name`.
fn build_kernel(ctx: &ContextInner, name: &str, source: &str) -> Result<Arc<CompiledKernel>> {
    let options = build_options(ctx, true);
    let program = obtain(ctx, name, source, options)?;
    Ok(Arc::new(CompiledKernel::create(
        ctx, program, name, source, options,
    )?))
}

/// The kernels built for a flush, by plan index (`None`: cached, no work, or a plan whose
/// key an earlier plan of the flush shares).
pub(super) struct Prebuilt(Vec<Option<Arc<CompiledKernel>>>);

impl Prebuilt {
    /// Nothing built: every plan finds its kernel in the cache when launched (no
    /// allocation: a replayed flush takes this path every time).
    pub(super) fn none() -> Prebuilt {
        Prebuilt(Vec::new())
    }

    /// The kernel built for plan `i`, if one was.
    pub(super) fn take(&mut self, i: usize) -> Option<Arc<CompiledKernel>> {
        self.0.get_mut(i).and_then(Option::take)
    }
}

/// Builds the kernels of `plans` that the context has not cached (each key once), in
/// parallel, and caches them. Every build runs to its end; the first error in plan order
/// is returned, after the kernels that did build are cached.
pub(super) fn build_missing(ctx: &ContextInner, plans: &[KernelPlan]) -> Result<Prebuilt> {
    let missing: Vec<usize> = {
        let cache = ctx.fused_kernels.lock().unwrap_or_else(|e| e.into_inner());
        let mut keys: Vec<&[u32]> = Vec::new();
        (0..plans.len())
            .filter(|&i| {
                let key = plans[i].key.as_slice();
                let new = has_work(&plans[i]) && !cache.contains_key(key) && !keys.contains(&key);
                if new {
                    keys.push(key);
                }
                new
            })
            .collect()
    };
    if missing.is_empty() {
        return Ok(Prebuilt::none());
    }
    Counters::add(&ctx.counters.kernel_cache_misses, missing.len() as u64);
    let start = Instant::now();
    let built = with_notice(ctx, missing.len(), || {
        let threads = if ctx.profile.tuning.serial_builds {
            1
        } else {
            threads(missing.len())
        };
        parallel_map(&missing, threads, |&i| new_kernel(ctx, &plans[i]))
    });
    Counters::add(&ctx.counters.build_wall_us, start.elapsed().as_micros() as u64);
    let mut prebuilt = Prebuilt(vec![None; plans.len()]);
    let mut first_error = None;
    let mut cache = ctx.fused_kernels.lock().unwrap_or_else(|e| e.into_inner());
    for (&i, result) in missing.iter().zip(built) {
        match result {
            Ok(kernel) => {
                let kernel = cache.entry(plans[i].key.clone()).or_insert(kernel).clone();
                prebuilt.0[i] = Some(kernel);
            }
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    match first_error {
        Some(e) => Err(e),
        None => Ok(prebuilt),
    }
}

/// Threads for `jobs` builds: one per core, no more than there are builds.
fn threads(jobs: usize) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    cores.min(jobs).max(1)
}

/// `f` of every item, computed by `threads` threads taking the next item as they finish
/// one (builds differ a lot in length), in the items' order.
fn parallel_map<I: Sync, R: Send>(items: &[I], threads: usize, f: impl Fn(&I) -> R + Sync) -> Vec<R> {
    if threads <= 1 {
        return items.iter().map(f).collect();
    }
    let next = AtomicUsize::new(0);
    let mut done: Vec<(usize, R)> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let k = next.fetch_add(1, Ordering::Relaxed);
                        let Some(item) = items.get(k) else { break mine };
                        mine.push((k, f(item)));
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
            .collect()
    });
    done.sort_by_key(|(k, _)| *k);
    done.into_iter().map(|(_, r)| r).collect()
}

/// Runs `build` (building `programs` programs); if it is still running after the
/// context's notice threshold and the context has not said so before (and is not quiet),
/// prints one line on stderr saying what is being built.
fn with_notice<R>(ctx: &ContextInner, programs: usize, build: impl FnOnce() -> R) -> R {
    let Some(after) = ctx.build_notice.after else {
        return build();
    };
    if ctx.build_notice.given.load(Ordering::Relaxed) {
        return build();
    }
    let done = (Mutex::new(false), Condvar::new());
    std::thread::scope(|s| {
        s.spawn(|| {
            let (lock, cvar) = &done;
            let guard = lock.lock().unwrap_or_else(|e| e.into_inner());
            let (guard, _) = cvar
                .wait_timeout_while(guard, after, |finished| !*finished)
                .unwrap_or_else(|e| e.into_inner());
            if !*guard && !ctx.build_notice.given.swap(true, Ordering::Relaxed) {
                Counters::add(&ctx.counters.build_notices, 1);
                eprintln!("{}", notice_text(programs, &ctx.cl.device.name));
            }
        });
        let r = build();
        let (lock, cvar) = &done;
        *lock.lock().unwrap_or_else(|e| e.into_inner()) = true;
        cvar.notify_all();
        r
    })
}

/// The notice: what is being built, for which device, and that it happens once.
fn notice_text(programs: usize, device: &str) -> String {
    let kernels = if programs == 1 { "kernel" } else { "kernels" };
    format!("lazycl: building {programs} {kernels} for {device} (first run; cached afterwards)…")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_generated_kernel_the_compiler_rejects_is_an_internal_error_naming_its_operations() {
        let build = Error::Build {
            name: FUSED_KERNEL_NAME.into(),
            log: "error: use of undeclared identifier 'v9'".into(),
            source_code: "__kernel void k() { v9; }".into(),
        };
        let e = generated_build_failed(build, || "elementwise over [7] computing +, exp".into());
        assert!(matches!(e, Error::Internal(_)), "{e:?}");
        let msg = e.to_string();
        for w in [
            "internal error (a bug in lazycl",
            "elementwise over [7] computing +, exp",
            "use of undeclared identifier 'v9'",
            "__kernel void k()",
        ] {
            assert!(msg.contains(w), "{w:?} missing in: {msg}");
        }
        // Any other error passes unchanged.
        let other = generated_build_failed(Error::InvalidShape("x".into()), || unreachable!());
        assert!(matches!(other, Error::InvalidShape(_)));
    }
}
