//! The integration tests, one binary (`cargo test --test it`): a module per feature, all
//! on the default OpenCL device (PoCL in CI), run concurrently like the tests of any one
//! binary. Two groups keep binaries of their own: `tests/timing/` (`queues` and
//! `no_sync` assert that something did *not* wait for a long kernel, which needs the
//! device to themselves) and `tests/device_selection.rs` (it sets `LAZYCL_DEVICE` in its
//! process, which would make the other tests' `Context::new` fail or pick another device).
//!
//! A test that needs a process of its own (its environment, an empty cache) runs a child:
//! an `#[ignore]`d test of this binary, spawned with `--ignored --exact module::name`
//! (`common::child_test`, `common::run_child`), so that a plain run never counts it as
//! passed without running it (`-- --ignored` runs the children too, without the setup
//! their parents give them).

mod axes;
mod cold_start;
mod common;
mod compact;
mod compact_lazy;
mod complex;
mod constructors;
mod dispatch;
mod display;
mod error_texts;
mod everyday;
mod everyday_indexed;

mod explain;
mod expr_complex;
mod expr_device_fn;
mod expr_fusion;
mod expr_generic;
mod expr_ops;
mod expr_runtime;
mod fft;
mod fft_real;
mod finish_in_consumer;
mod foundation;
mod frequencies;
mod generic_kernels;
mod gradients;
mod gradients_api;
mod gradients_expr;
mod gradients_property;
mod graph_property;
mod histogram;
mod house_words;
mod indexing;
mod kernel_complex;
mod kernel_complex_methods;
mod kernel_features;
mod kernel_narrow;
mod kernel_ops;
mod kernel_smoke;
mod layers;
mod layouts;
mod lazy_counters;
mod lazy_ops;
mod lazy_property;
mod masks;
mod math;
mod matmul;
mod matmul_tiles;
mod memory;
mod narrow_ops;
mod narrow_types;
mod narrow_vectors;
mod program_cache;
mod program_cache_files;
mod random;
mod recompute;
mod recorded_at;
mod reductions;
mod regions_many;
mod replay;
mod row_column;
mod row_kernels;
mod row_total;
mod safety;
mod scans;
mod sets;
mod sets_by_key;
mod sort;
mod stats;
mod step;
mod topk;
mod ui_api;
mod ui_expr;
mod ui_kernel;
mod views;
mod views_property;
