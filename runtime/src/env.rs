//! The environment variables lazycl reads, each read through one of these functions so
//! that a value lazycl cannot use is an [`Error::InvalidEnvironment`] naming the variable,
//! never silently treated as unset.
//!
//! Rules: an unset or empty variable means "not set"; a value that is not UTF-8 is an
//! error, except for paths (`LAZYCL_CACHE_DIR`, `LAZYCL_DUMP_DOT`), which are used as the
//! operating system gives them, since a path need not be UTF-8 on Unix. The default cache
//! directory is `dirs::cache_dir()`'s, which reads `XDG_CACHE_HOME` and `HOME` itself, as
//! paths too (a relative `XDG_CACHE_HOME` is ignored, as the XDG specification says).

use std::env::VarError;
use std::ffi::OsString;

use crate::error::{Error, Result};

/// The value of `variable` as text, `None` when unset or empty.
pub(crate) fn text(variable: &'static str) -> Result<Option<String>> {
    match std::env::var(variable) {
        Ok(v) if v.is_empty() => Ok(None),
        Ok(v) => Ok(Some(v)),
        Err(VarError::NotPresent) => Ok(None),
        Err(VarError::NotUnicode(raw)) => Err(Error::InvalidEnvironment {
            variable,
            value: raw.to_string_lossy().into_owned(),
            reason: "is not valid UTF-8".into(),
        }),
    }
}

/// An on/off switch: `1 true on yes` or `0 false off no` (any case); `None` when unset.
pub(crate) fn switch(variable: &'static str) -> Result<Option<bool>> {
    let Some(v) = text(variable)? else {
        return Ok(None);
    };
    match v.to_ascii_lowercase().as_str() {
        "1" | "true" | "on" | "yes" => Ok(Some(true)),
        "0" | "false" | "off" | "no" => Ok(Some(false)),
        _ => Err(Error::InvalidEnvironment {
            variable,
            value: v,
            reason:
                "is not a switch: use 1, true, on or yes to turn it on, 0, false, off or no to turn it off"
                    .into(),
        }),
    }
}

/// A path, `None` when unset or empty; any bytes are accepted.
pub(crate) fn path(variable: &'static str) -> Option<OsString> {
    std::env::var_os(variable).filter(|v| !v.is_empty())
}
