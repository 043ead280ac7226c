//! Opening multi-device contexts on whatever the machine has; the helpers of the other
//! test binary (`tests/it/common.rs`), whose property tests run here again on two
//! devices.
#![allow(dead_code)]

use std::sync::Once;

use lazycl::{Context, ContextBuilder, DeviceSelector};

#[path = "../it/common.rs"]
mod shared;
pub use shared::{cases, check_property, rng, Random};

/// The property tests' context: two devices.
pub fn ctx() -> Context {
    multi(2)
}

/// The property tests' builder: two devices.
pub fn builder() -> ContextBuilder {
    multi_builder(2)
}

static DEVICES: Once = Once::new();

/// A context over `n` devices: the first `n` of the default device's platform (PoCL is
/// asked for three CPU devices), a device named again where the platform has fewer (two
/// contexts of one device are two devices to lazycl).
pub fn multi(n: usize) -> Context {
    let ctx = multi_builder(n).build().expect("a multi-device context");
    assert_eq!(ctx.device_count(), n);
    ctx
}

/// A builder for [`multi`]'s context.
pub fn multi_builder(n: usize) -> ContextBuilder {
    DEVICES.call_once(|| {
        if std::env::var_os("POCL_DEVICES").is_none() {
            std::env::set_var("POCL_DEVICES", "pthread pthread pthread");
        }
    });
    let first = Context::new().expect("an OpenCL device");
    let platform = first.device().platform_index;
    let on_platform = lazycl::devices()
        .unwrap()
        .into_iter()
        .filter(|d| d.platform_index == platform)
        .count();
    let list = (0..n)
        .map(|k| DeviceSelector::Index {
            platform,
            device: k % on_platform,
        })
        .collect();
    Context::builder().device(DeviceSelector::List(list)).quiet(true)
}

/// Deterministic pseudo-random values in [-1, 1).
pub fn values(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        })
        .collect()
}
