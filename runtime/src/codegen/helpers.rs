//! The helper functions a kernel declares before itself ([`Helpers`]), and the OpenCL C
//! type of a held value ([`vt`]): what every printer of values shares (`ops`, `random`,
//! the layouts), below all of them.

use std::collections::{BTreeMap, BTreeSet};

use lazycl_clc::Helper;

use crate::dtype::DType;

/// The OpenCL C type of a value held in a kernel (bools are `uchar` 0/1).
pub(super) fn vt(d: DType) -> &'static str {
    d.cl_name()
}

/// Helper functions a kernel needs, each defined once before it: what `expr!` templates
/// include (their device functions and helpers, each guarded), then the shared helpers
/// (`lazycl-clc`) the plan's own ops call, guarded alike, so that a helper both call is
/// compiled once.
#[derive(Default)]
pub(super) struct Helpers {
    /// The templates' texts, in sorted order.
    included: BTreeSet<String>,
    /// The called helpers' guarded definitions, in the order of their definitions.
    called: BTreeMap<String, String>,
}

impl lazycl_clc::CallHelper for Helpers {
    fn call_helper(&mut self, helper: Helper, args: &[&str]) -> String {
        self.call(helper, args)
    }
}

impl Helpers {
    /// The definitions: the templates' texts, then the called helpers.
    pub(super) fn iter(&self) -> impl Iterator<Item = &str> {
        self.included
            .iter()
            .chain(self.called.values())
            .map(String::as_str)
    }

    /// Definitions an `expr!` needs (device functions), included once.
    pub(super) fn include(&mut self, text: &str) {
        if !text.trim().is_empty() {
            self.included.insert(text.to_string());
        }
    }

    /// A call of `helper`, noting its definition.
    pub(super) fn call(&mut self, helper: Helper, args: &[&str]) -> String {
        let call = helper.call(args);
        self.called
            .entry(helper.definition.clone())
            .or_insert_with(|| helper.guarded());
        call
    }
}
