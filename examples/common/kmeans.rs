//! Lloyd's k-means on the device, shared by `examples/kmeans.rs` and the report: Gaussian
//! blobs, and one iteration as lazy reductions, with the nearest centroids found by
//! broadcast distances, by one matrix product, or by a `#[kernel]` ([`Assign`]).

use lazycl::prelude::*;

// Deterministic data, reproduced bit for bit by benches/reference/torch_reference.py
// (`common/synthetic.rs`, which the including file declares as `synthetic` beside this
// module).
use super::synthetic::{normal, uniform};

const SEED_CENTERS: u64 = 11;
const SEED_LABELS: u64 = 12;
const SEED_POINTS: u64 = 13;
const CENTER_SPREAD: f64 = 4.0;

/// `n x d` points (row-major, f32): point `i` belongs to blob `floor(u_i * k)`, whose
/// center has coordinates `4 * N(0, 1)`; the point is the center plus `N(0, 1)` noise.
pub fn make_blobs(n: usize, d: usize, k: usize) -> Vec<f32> {
    let centers: Vec<f64> = (0..k * d)
        .map(|i| CENTER_SPREAD * normal(SEED_CENTERS, i as u64))
        .collect();
    let mut x = Vec::with_capacity(n * d);
    for i in 0..n {
        let blob = ((uniform(SEED_LABELS, i as u64) * k as f64) as usize).min(k - 1);
        for j in 0..d {
            x.push((centers[blob * d + j] + normal(SEED_POINTS, (i * d + j) as u64)) as f32);
        }
    }
    x
}

/// The assignment step as one hand-written kernel (`--assign kernel`): each work-item
/// finds the nearest centroid of one point, so the `[n, k]` distances are never stored.
#[kernel]
fn nearest(x: &[f32], c: &[f32], d: usize, labels: &mut [u32]) {
    let i = global_id(0);
    if i < labels.len() {
        let k = c.len() / d;
        let mut best = f32::INFINITY;
        let mut arg = 0usize;
        for j in 0..k {
            let mut s = 0.0f32;
            for t in 0..d {
                let diff = x[i * d + t] - c[j * d + t];
                s += diff * diff;
            }
            if s < best {
                best = s;
                arg = j;
            }
        }
        labels[i] = arg as u32;
    }
}

/// How a step finds each point's nearest centroid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Assign {
    /// `sum_d (x - c)^2` over the broadcast `[n, k, d]` differences (one fused
    /// reduction), then an argmin per point.
    Broadcast,
    /// `|c|^2 - 2 x c^T` (`|x|^2`, the same for every centroid of a point, does not move
    /// the argmin): one matrix product whose store adds `|c|^2`, then an argmin per point.
    Gemm,
    /// The hand-written `#[kernel]` above.
    Kernel,
}

impl Assign {
    /// The faster lazy form for points of `d` coordinates (measured on the H200,
    /// RESULTS.md#rule-kmeans-assign): the product once a point has enough coordinates to
    /// make its tiles worth it, the broadcast reduction for short points.
    pub fn for_points(d: usize) -> Assign {
        if d >= 32 {
            Assign::Gemm
        } else {
            Assign::Broadcast
        }
    }
}

/// How a step computes the centroids' sums and counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Update {
    /// Reductions over a one-hot mask of the labels (or its product with the points):
    /// lazy, no atomics, the same result on every run.
    OneHot,
    /// `scatter_add` of the points into their centroids' rows and `bincount` of the
    /// labels: each point added once, atomically.
    Scatter,
}

impl Update {
    /// The faster update on a GPU or a CPU device (measured, RESULTS.md#rule-kmeans-update):
    /// on the H200 the one-hot reductions (0.47 ms a step against 0.81 for 1,000,000 x 16,
    /// k = 16); on PoCL the scatter (0.83-0.86 of the one-hot step), whose private copies per
    /// work-group cost less than a CPU's reductions over the one-hot mask.
    #[allow(dead_code)] // (the report times both)
    pub fn for_device(gpu: bool) -> Update {
        if gpu {
            Update::OneHot
        } else {
            Update::Scatter
        }
    }
}

pub struct KMeans {
    /// Points, `[n, 1, d]` (the middle axis broadcasts against the centroids).
    x3: Array<f32>,
    /// Cluster ids `0..k` as `[1, k, 1]`, for the one-hot masks.
    ids: Array<Index>,
    /// Centroids, `[k, d]`.
    pub c: Array<f32>,
    n: usize,
    k: usize,
    d: usize,
    assign: Assign,
    /// How the centroids are updated ([`Update::OneHot`] unless set).
    pub update: Update,
    /// For [`Assign::Kernel`]: the bound kernel and the labels it writes.
    nearest: Option<(nearest::Bound, Array<Index>)>,
}

impl KMeans {
    /// Uploads `n x d` points (from `make_blobs`); the first `k` points are the initial
    /// centroids.
    pub fn new(
        ctx: &Context,
        x: &[f32],
        n: usize,
        d: usize,
        k: usize,
        assign: Assign,
    ) -> lazycl::Result<Self> {
        let ids: Vec<Index> = (0..k as Index).collect();
        Ok(KMeans {
            x3: ctx.from_shape_slice([n, 1, d], x)?,
            ids: ctx.from_shape_slice([1, k, 1], &ids)?,
            c: ctx.from_shape_slice([k, d], &x[..k * d])?,
            n,
            k,
            d,
            assign,
            update: Update::OneHot,
            nearest: if assign == Assign::Kernel {
                Some((nearest::bind(ctx)?, ctx.zeros::<Index>([n])?))
            } else {
                None
            },
        })
    }

    /// Squared distances `[n, k]` of every point to every centroid (lazy).
    pub fn distances(&self) -> Array<f32> {
        let diff = &self.x3 - &self.c.reshape([1, self.k, self.d]);
        (&diff * &diff).sum_axis(2)
    }

    /// The nearest centroid of every point (lazy), by broadcast distances or, with
    /// [`Assign::Gemm`], by one matrix product.
    pub fn labels(&self) -> Array<Index> {
        match self.assign {
            Assign::Gemm => {
                let x = self.x3.reshape([self.n, self.d]);
                let cc = (&self.c * &self.c).sum_axis(1); // [k]
                (&cc - 2.0f32 * x.matmul(&self.c.t())).argmin_axis(1)
            }
            _ => self.distances().argmin_axis(1),
        }
    }

    /// One Lloyd iteration: enqueued, not waited for.
    pub fn step(&mut self) -> lazycl::Result<()> {
        let labels = match &mut self.nearest {
            None => self.labels(), // [n]
            Some((kernel, labels)) => {
                let global = self.n.div_ceil(256) * 256;
                kernel
                    .global(global)
                    .local(256)
                    .launch(&self.x3, &self.c, self.d, labels)?;
                labels.clone()
            }
        };
        if self.update == Update::Scatter {
            let x = self.x3.reshape([self.n, self.d]);
            let mut sums = self.c.context().zeros::<f32>([self.k, self.d])?;
            lazycl::scatter_add(&mut sums, 0, &labels, &x)?;
            let counts = labels.bincount(self.k)?.cast::<f32>().reshape([self.k, 1]);
            let c = self.c.clone();
            self.c.assign(counts.gt(0.0f32).select(&sums / &counts, &c))?;
            return Ok(());
        }
        let (sums, counts) = if self.assign == Assign::Gemm {
            // The sums as a product too: onehot^T x, [k, n] . [n, d], the one-hot mask
            // computed from the labels in the product's tile loads (never stored); a long
            // k and few blocks, so it is split along n and its segments added up.
            let onehot = labels
                .reshape([self.n, 1])
                .eq(self.ids.reshape([1, self.k]))
                .cast::<f32>(); // [n, k]
            let x = self.x3.reshape([self.n, self.d]);
            (onehot.t().matmul(&x), onehot.sum_axis(0).reshape([self.k, 1]))
        } else {
            let onehot = labels.reshape([self.n, 1, 1]).eq(&self.ids); // [n, k, 1]
            let sums = onehot.select(&self.x3, 0.0f32).sum_axis(0); // [k, d]
            (sums, onehot.cast::<f32>().sum_axis(0)) // [k, 1]
        };
        let c = self.c.clone();
        self.c.assign(counts.gt(0.0f32).select(&sums / &counts, &c))?;
        Ok(())
    }
}
