//! Multi-device contexts (`Context::multi`): arrays split by rows across two and three
//! devices, against the host. A binary of its own: it asks PoCL for three CPU devices
//! (`POCL_DEVICES`) before OpenCL is loaded, which would change the device list every
//! other test binary sees.

mod common;
mod counters;
mod semantics;
mod three;

// The property tests of tests/it, on two devices against the same host references.
#[path = "../it/lazy_property.rs"]
mod lazy_property;
#[path = "../it/views_property.rs"]
mod views_property;
