use lazycl::prelude::*;

// Shifts are defined for the integer instances, not for the float ones.
#[kernel]
fn halve<T: Numeric>(y: &mut [T]) {
    let i = global_id(0);
    if i < y.len() {
        y[i] = y[i] >> 1;
    }
}

fn main() {}
