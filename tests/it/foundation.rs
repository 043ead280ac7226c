//! Foundation: uploads and downloads of every dtype and rank, views, fills, counters.

use crate::common::{ctx, rng, Random};
use lazycl::{Context, DType, Element};
use ndarray::{s, ArrayD, IxDyn};

fn shapes_for(n: usize) -> Vec<Vec<usize>> {
    // Ranks 0..=4 where the size allows; the product is always n.
    let mut v = vec![vec![n]];
    if n == 1 {
        v.push(vec![]);
        v.push(vec![1, 1, 1, 1]);
    }
    if n == 0 {
        v.push(vec![3, 0]);
        v.push(vec![0, 2, 5, 1]);
    }
    if n == 1000 {
        v.push(vec![10, 100]);
        v.push(vec![10, 10, 10]);
        v.push(vec![2, 5, 10, 10]);
    }
    if n == 7 {
        v.push(vec![7, 1]);
        v.push(vec![1, 7, 1]);
    }
    v
}

fn round_trip<T: Element + Random>(ctx: &Context, seed: u64) {
    let mut r = rng(seed);
    for n in [0usize, 1, 7, 1000, (1 << 20) + 3] {
        for shape in shapes_for(n) {
            let data = T::random_vec(&mut r, n);
            let host = ArrayD::from_shape_vec(IxDyn(&shape), data.clone()).unwrap();
            let a = ctx.array(&host).unwrap();
            assert_eq!(a.shape(), &shape[..]);
            assert_eq!(a.dtype(), T::DTYPE);
            assert_eq!(a.to_ndarray().unwrap(), host, "{} shape {shape:?}", T::DTYPE);
            let b = ctx.from_shape_slice(shape.clone(), &data).unwrap();
            assert_eq!(b.to_vec().unwrap(), data);
        }
    }
}

#[test]
fn round_trips_every_dtype_and_rank() {
    let ctx = ctx();
    round_trip::<f32>(&ctx, 1);
    round_trip::<i32>(&ctx, 2);
    round_trip::<u32>(&ctx, 3);
    round_trip::<i64>(&ctx, 4);
    round_trip::<u64>(&ctx, 5);
    round_trip::<bool>(&ctx, 6);
    if ctx.device().fp64 {
        round_trip::<f64>(&ctx, 7);
    }
}

#[test]
fn views_transposes_and_strided_inputs_arrive_in_logical_order() {
    let ctx = ctx();
    let mut r = rng(10);
    let base = ndarray::Array::from_shape_vec((6, 8, 5), f32::random_vec(&mut r, 240)).unwrap();
    let t = base.view().reversed_axes(); // (5, 8, 6), Fortran order
    assert_eq!(
        ctx.array(&t).unwrap().to_ndarray().unwrap(),
        t.to_owned().into_dyn()
    );
    let strided = base.slice(s![..;2, 1..7;3, ..;-1]);
    assert_eq!(
        ctx.array(&strided).unwrap().to_ndarray().unwrap(),
        strided.to_owned().into_dyn()
    );
    let permuted = base.view().permuted_axes([1, 2, 0]);
    assert_eq!(
        ctx.array(&permuted).unwrap().to_ndarray().unwrap(),
        permuted.to_owned().into_dyn()
    );
    let col = base.slice(s![.., 3, 2]);
    assert_eq!(ctx.array(&col).unwrap().to_vec().unwrap(), col.to_vec());
    let typed = ctx
        .array(&base)
        .unwrap()
        .to_ndarray_dim::<ndarray::Ix3>()
        .unwrap();
    assert_eq!(typed, base);
    assert!(ctx
        .array(&base)
        .unwrap()
        .to_ndarray_dim::<ndarray::Ix2>()
        .is_err());
}

#[test]
fn zeros_full_and_slices() {
    let ctx = ctx();
    assert_eq!(ctx.zeros::<i64>([3, 4]).unwrap().to_vec().unwrap(), vec![0; 12]);
    assert_eq!(ctx.full([2, 3], 2.5f32).unwrap().to_vec().unwrap(), vec![2.5; 6]);
    assert_eq!(ctx.full(5, -7i32).unwrap().to_vec().unwrap(), vec![-7; 5]);
    assert_eq!(
        ctx.full(3, u64::MAX - 1).unwrap().to_vec().unwrap(),
        vec![u64::MAX - 1; 3]
    );
    assert_eq!(ctx.full(4, true).unwrap().to_vec().unwrap(), vec![true; 4]);
    assert_eq!(ctx.full((), 9u32).unwrap().item().unwrap(), 9);
    assert!(ctx.zeros::<f32>([0, 3]).unwrap().to_vec().unwrap().is_empty());
    assert_eq!(
        ctx.from_slice(&[1u32, 2, 3]).unwrap().to_vec().unwrap(),
        vec![1, 2, 3]
    );
    assert_eq!(ctx.from_vec(vec![1.5f32; 9]).unwrap().shape(), &[9]);
    let err = ctx.from_shape_slice([2, 2], &[1.0f32; 3]).unwrap_err();
    assert!(err.to_string().contains("[2, 2]"), "{err}");
    let err = ctx.full([2, 2], 1.0f32).unwrap().item().unwrap_err();
    assert!(err.to_string().contains("[2, 2]"), "{err}");
}

#[test]
fn counters_after_upload_and_download() {
    let ctx = ctx();
    let mut r = rng(20);
    let data = f32::random_vec(&mut r, 1000);
    let s0 = ctx.stats();
    let a = ctx.from_slice(&data).unwrap();
    let s1 = ctx.stats();
    let up = s1 - s0;
    assert_eq!(up.bytes_uploaded, 4000);
    assert_eq!(up.host_waits, 0, "an upload never waits");
    assert_eq!(up.buffers_allocated + up.buffers_reused, 1);
    let back = a.to_vec().unwrap();
    let down = ctx.stats() - s1;
    assert_eq!(back, data);
    assert_eq!(down.bytes_downloaded, 4000);
    assert_eq!(down.host_waits, 1, "a download waits exactly once");
    assert_eq!(down.bytes_uploaded, 0);
    assert_eq!(down.kernels_launched, 0);
    // Display prints a table with every counter.
    let table = ctx.stats().to_string();
    for (name, _) in ctx.stats().entries() {
        assert!(table.contains(name), "{table}");
    }
}

#[test]
fn an_upload_does_not_wait_for_queued_work() {
    let ctx = ctx();
    // Queue a lot of device work, then upload: the upload must not count a host wait.
    let x = ctx.full(1 << 20, 1.0f32).unwrap();
    let mut y = x.clone();
    for _ in 0..20 {
        y = (&y * 1.0001f32 + 0.5f32).sqrt();
        y.eval().unwrap();
    }
    let before = ctx.stats();
    let z = ctx.from_slice(&[1.0f32; 1024]).unwrap();
    assert_eq!((ctx.stats() - before).host_waits, 0);
    assert_eq!(z.len(), 1024);
    assert!(y.to_vec().unwrap().iter().all(|v| v.is_finite()));
}

#[test]
fn context_is_send_sync_and_cheap_to_clone() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Context>();
    assert_send_sync::<lazycl::Array<f32>>();
    let ctx = ctx();
    let c2 = ctx.clone();
    assert!(ctx.same(&c2));
    let h = std::thread::spawn(move || c2.full(10, 3i32).unwrap().to_vec().unwrap());
    assert_eq!(h.join().unwrap(), vec![3; 10]);
}

#[test]
fn dropping_the_context_with_work_in_flight_is_safe() {
    for _ in 0..20 {
        let ctx = ctx();
        let x = ctx.full(1 << 16, 2.0f32).unwrap();
        let y = (&x * &x).exp().sqrt();
        y.eval().unwrap();
        drop(x);
        drop(ctx);
        drop(y); // the last handle: waits for the queue, then releases everything
    }
}

#[test]
fn dtype_names() {
    assert_eq!(f32::CL_TYPE, "float");
    assert_eq!(DType::F64.cl_name(), "double");
    assert_eq!(DType::Bool.size(), 1);
    assert_eq!(u64::DTYPE.to_string(), "u64");
}
