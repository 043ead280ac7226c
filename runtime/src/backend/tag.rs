//! Which context an object belongs to, so that objects of two contexts are never mixed.

use std::sync::Arc;

use crate::backend::device::DeviceInfo;
use crate::error::{Error, Result};

/// Which context an object belongs to: a number unique in the process (never reused, so
/// a freed context's number cannot match a new one) and a description for errors.
#[derive(Clone)]
pub(crate) struct ContextTag {
    id: u64,
    label: Arc<str>,
}

impl ContextTag {
    pub(crate) fn new(device: &DeviceInfo) -> ContextTag {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        let id = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let label = format!(
            "context {id} (device {:?}, platform {:?})",
            device.name, device.platform_name
        );
        ContextTag {
            id,
            label: label.into(),
        }
    }

    /// Whether both belong to one context.
    #[inline]
    pub(crate) fn same(&self, other: &ContextTag) -> bool {
        self.id == other.id
    }

    /// `Ok` if `other` belongs to this context, else [`Error::ContextMismatch`] for the
    /// user's operation `op`, naming `what` (the object of the other context) and both
    /// contexts. Nothing is formatted unless the check fails.
    #[inline]
    pub(crate) fn check(
        &self,
        other: &ContextTag,
        op: impl FnOnce() -> String,
        what: impl FnOnce() -> String,
    ) -> Result<()> {
        if self.same(other) {
            return Ok(());
        }
        Err(Error::ContextMismatch {
            op: op(),
            expected: self.label.to_string(),
            found: format!("{} of {}", what(), other.label),
        })
    }
}
