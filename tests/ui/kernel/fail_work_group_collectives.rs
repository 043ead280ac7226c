use lazycl::prelude::*;

#[device_fn]
fn group_total(v: f32) -> f32 {
    work_group_reduce_add(v)
}

#[kernel]
fn k(x: &[f32], flags: &[bool], y: &mut [f32]) {
    let i = global_id(0);
    let a = work_group_reduce_max(flags[i]);
    let b = work_group_reduce_add(x[i], x[i]);
    let c = work_group_broadcast(x[i]);
    let d = work_group_broadcast(x[i], 1.5);
    y[i] = x[i];
}

fn main() {}
