//! The tests that assert that something did *not* wait for a long kernel: a read on one
//! queue while another queue runs one (`queues`), scalar operands next to one (`no_sync`).
//! They hold only when no other test's kernels occupy the device's cores (PoCL on two
//! cores: a one-work-item kernel on one, the read on the other), so they are a binary of
//! their own, not modules of `tests/it`, where the tests of every module run concurrently
//! (and the trybuild runs' compilers use the cores too), and they run one at a time.
//!
//! Making them robust inside `tests/it` would need every other test, in every module, to
//! hold a shared lock for its whole run (each context creation, the builder's included,
//! and threads that tests spawn), which the timing tests take exclusively: more machinery
//! than the second binary it saves.

#[path = "../it/common.rs"]
mod common;

mod no_sync;
mod queues;
mod recycled;
mod spin;

/// The tests of this binary run one at a time: each holds this for its whole run.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn exclusive() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}
