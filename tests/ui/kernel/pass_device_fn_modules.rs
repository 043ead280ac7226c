//! Device functions are visible in child modules defined after them, and can call each
//! other; a kernel and a device function can share a name with other items.

use lazycl::prelude::*;

#[device_fn]
fn sq(v: f64) -> f64 {
    v * v
}

#[device_fn]
fn norm2(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..x.len() {
        s += sq(x[i]);
    }
    s
}

// Device functions defined inside a module are visible after it when the module is
// declared `#[macro_use]` (they are `macro_rules!` underneath).
#[macro_use]
mod helpers {
    use lazycl::prelude::*;

    #[device_fn]
    pub fn halve(v: f64) -> f64 {
        v * 0.5
    }
}

mod inner {
    use lazycl::prelude::*;

    #[kernel]
    pub fn norms(x: &[f64], out: &mut [f64]) {
        if global_id(0) == 0 {
            out[0] = halve(norm2(x).sqrt());
        }
    }
}

fn main() {
    let src = inner::norms::SOURCE;
    // Each device function appears once, even though both the kernel and `norm2` need `sq`.
    assert_eq!(src.matches("double lzc_fn_sq(double v) {").count(), 1, "{src}");
    assert!(src.find("lzc_fn_sq(double v) {") < src.find("lzc_fn_norm2(__global"));
}
