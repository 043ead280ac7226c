//! The bitonic sorting network shared by `examples/bitonic_sort.rs` and the report: one
//! compare-exchange `#[kernel]` and the list of its launches.
#![allow(dead_code)]

use lazycl::prelude::*;

/// Compare-exchange of each element with its partner `i ^ x`, smaller value first.
#[kernel]
pub fn swap_pairs(arr: &mut [i32], x: i32, n: i32) {
    let i = global_id(0) as i32;
    let j = i ^ x;
    if i < j && j < n && arr[j as usize] < arr[i as usize] {
        let tmp = arr[i as usize];
        arr[i as usize] = arr[j as usize];
        arr[j as usize] = tmp;
    }
}

/// The `x` argument of every launch for `padded` elements (a power of two): for each block
/// size `k`, one "flip" step (`k - 1`) then half-cleaner steps `k/4, k/8, ..., 1` (with the
/// flip, every comparator sorts ascending, so the kernel needs no direction).
pub fn steps(padded: usize) -> Vec<i32> {
    let mut steps = Vec::new();
    let mut block = 2;
    while block <= padded {
        steps.push((block - 1) as i32);
        let mut half = block / 4;
        while half >= 1 {
            steps.push(half as i32);
            half /= 2;
        }
        block *= 2;
    }
    steps
}
