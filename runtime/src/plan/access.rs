//! How a kernel reads each value of its cone: an [`Access`] maps the kernel's
//! coordinates (its full-rank iteration space) to the value's coordinates, and says where
//! the value is read at all (inside one source of a `concatenate` or `pad`). Broadcasting,
//! views and the sources of regions each compose one more map; a load's map, applied to
//! its buffer's row-major strides, is an affine element offset ([`Affine`]), and the
//! kernel's dims collapse where every load's offset allows ([`collapse`]).
//!
//! Pure arithmetic on plan-time values: which loads are plain, broadcast or strided is
//! decided here, and that decision (not the offsets, strides or bounds, which are kernel
//! arguments) is what the cache key records.

use smallvec::SmallVec;

use crate::graph::view::{SourceAxis, ViewMap};

/// Kernel coordinates `lo <= c[axis] < hi`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Bound {
    pub(crate) axis: usize,
    pub(crate) lo: i64,
    pub(crate) hi: i64,
}

/// How a kernel reads one value: `map` gives the value's coordinates from the kernel's
/// (`from` names a kernel axis), and the value is read only where every bound holds.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Access {
    pub(crate) map: ViewMap,
    pub(crate) bounds: SmallVec<[Bound; 2]>,
}

impl Access {
    /// A value read at the kernel's own coordinates (its iteration space has `rank` axes).
    pub(crate) fn identity(rank: usize) -> Access {
        Access {
            map: ViewMap::identity(rank),
            bounds: SmallVec::new(),
        }
    }

    /// How an operand of shape `input` is read when this access reads the value of shape
    /// `output` it is broadcast into (numpy's rules: trailing axes align, a size-1 axis is
    /// read at 0).
    pub(crate) fn broadcast(&self, output: &[usize], input: &[usize]) -> Access {
        let off = output.len() - input.len();
        let axes = input
            .iter()
            .enumerate()
            .map(|(k, &n)| {
                if n == 1 && output[k + off] != 1 {
                    fixed(0)
                } else {
                    self.map.axes[k + off]
                }
            })
            .collect();
        Access {
            map: ViewMap { axes },
            bounds: self.bounds.clone(),
        }
    }

    /// How the source of a view with map `view` is read when this access reads the view.
    pub(crate) fn view(&self, view: &ViewMap) -> Access {
        Access {
            map: self.map.then(view),
            bounds: self.bounds.clone(),
        }
    }

    /// How a source placed at `offset` along each axis of a region (a `concatenate`'s
    /// part, a `pad`'s interior) is read, and only where the region's coordinates are
    /// inside it (`extent` elements from `offset`): `None` when this access never reads
    /// there.
    pub(crate) fn part(&self, offset: &[usize], extent: &[usize], kernel_dims: &[usize]) -> Option<Access> {
        let mut bounds = self.bounds.clone();
        for (d, (&o, &n)) in offset.iter().zip(extent).enumerate() {
            let (lo, hi) = (o as i64, (o + n) as i64);
            let a = self.map.axes[d];
            match a.from {
                None if a.start < lo as isize || a.start >= hi as isize => return None,
                None => {}
                Some(k) => restrict(
                    &mut bounds,
                    k,
                    a.start as i64,
                    a.step as i64,
                    lo,
                    hi,
                    kernel_dims[k] as i64,
                )?,
            }
        }
        let axes = self
            .map
            .axes
            .iter()
            .zip(offset)
            .map(|(a, &o)| SourceAxis {
                start: a.start - o as isize,
                ..*a
            })
            .collect();
        Some(Access {
            map: ViewMap { axes },
            bounds,
        })
    }

    /// The element offset this access reads in a row-major buffer of `shape`, per axis
    /// of a kernel of rank `rank`.
    pub(crate) fn affine(&self, shape: &[usize], rank: usize) -> Affine {
        let mut base = 0i64;
        let mut stride: SmallVec<[i64; 4]> = smallvec::smallvec![0; rank];
        let mut row = 1i64;
        for (d, a) in self.map.axes.iter().enumerate().rev() {
            base += a.start as i64 * row;
            if let Some(k) = a.from {
                stride[k] += a.step as i64 * row;
            }
            row *= shape[d] as i64;
        }
        Affine {
            base,
            stride,
            bounds: self.bounds.clone(),
        }
    }
}

/// A source axis fixed at index `i`.
fn fixed(i: isize) -> SourceAxis {
    SourceAxis {
        from: None,
        start: i,
        step: 1,
    }
}

/// Adds to `bounds` that kernel axis `k` (of `n` coordinates) is read only where
/// `lo <= start + step * c < hi`. `None` when no coordinate satisfies it; no bound is
/// added when every coordinate does.
fn restrict(
    bounds: &mut SmallVec<[Bound; 2]>,
    k: usize,
    start: i64,
    step: i64,
    lo: i64,
    hi: i64,
    n: i64,
) -> Option<()> {
    // Solve for c: ceil division that works for negative numerators.
    let ceil = |a: i64, b: i64| a.div_euclid(b) + i64::from(a.rem_euclid(b) != 0);
    let (c_lo, c_hi) = if step > 0 {
        (ceil(lo - start, step), ceil(hi - start, step))
    } else {
        let s = -step;
        // start - s c >= lo  <=>  c <= (start - lo) / s ; start - s c < hi <=> c > (start - hi) / s
        ((start - hi).div_euclid(s) + 1, (start - lo).div_euclid(s) + 1)
    };
    let existing = bounds.iter().position(|b| b.axis == k);
    let (old_lo, old_hi) = existing.map_or((0, n), |i| (bounds[i].lo, bounds[i].hi));
    let (new_lo, new_hi) = (c_lo.max(old_lo), c_hi.min(old_hi));
    if new_lo >= new_hi {
        return None;
    }
    if let Some(i) = existing {
        bounds.remove(i);
    }
    if new_lo > 0 || new_hi < n {
        bounds.push(Bound {
            axis: k,
            lo: new_lo,
            hi: new_hi,
        });
        bounds.sort_by_key(|b| b.axis);
    }
    Some(())
}

/// An element offset over a kernel's coordinates: `base + Σ stride[k] * c[k]`, read
/// only where the bounds hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Affine {
    pub(crate) base: i64,
    pub(crate) stride: SmallVec<[i64; 4]>,
    pub(crate) bounds: SmallVec<[Bound; 2]>,
}

impl Affine {
    /// Neighbouring elements along the innermost dim are neighbours in memory (a slice
    /// with step 1): no stride argument there, and vector loads where nothing guards.
    pub(crate) fn unit_innermost(&self) -> bool {
        self.stride.last() == Some(&1)
    }

    /// Lanes of a vector step can read this as one vector load.
    pub(crate) fn vectorizable(&self) -> bool {
        self.unit_innermost() && self.bounds.is_empty()
    }

    /// Whether every offset this computes over `dims` (the collapsed dims; also outside
    /// its guard, where it is computed but not read) and every bound fits a 32-bit `int`.
    pub(crate) fn fits_int(&self, dims: &[usize]) -> bool {
        let (mut lo, mut hi) = (self.base as i128, self.base as i128);
        for (k, &s) in self.stride.iter().enumerate() {
            let span = s as i128 * (dims.get(k).copied().unwrap_or(1) as i128 - 1).max(0);
            lo += span.min(0);
            hi += span.max(0);
        }
        let int = |v: i128| v >= i32::MIN as i128 && v <= i32::MAX as i128;
        int(lo) && int(hi) && self.bounds.iter().all(|b| int(b.lo as i128) && int(b.hi as i128))
    }

    /// The dims whose stride is a kernel argument: those it moves along, but the
    /// innermost where that one is a unit stride.
    pub(crate) fn stride_args(&self) -> impl Iterator<Item = usize> + '_ {
        let last = self.stride.len() - 1;
        (0..self.stride.len()).filter(move |&k| self.stride[k] != 0 && !(k == last && self.stride[k] == 1))
    }
}

/// How a kernel loads one input after its dims are collapsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum LoadKind {
    /// Element for element in the kernel's row-major order (`mask` 0), or broadcast
    /// along the dims whose bit is set in `mask`, every other dim in row-major order.
    Plain { mask: u32 },
    /// Anything else: `base + Σ stride[k] * i_k` (strides may be negative or zero) with
    /// the bounds as a guard (a guarded load reads 0 outside them).
    Strided(Affine),
}

impl LoadKind {
    /// The broadcast mask of a plain load; for a strided one, the dims it does not move
    /// along (stride 0).
    pub(crate) fn mask(&self) -> u32 {
        match self {
            LoadKind::Plain { mask } => *mask,
            LoadKind::Strided(a) => a
                .stride
                .iter()
                .enumerate()
                .fold(0, |m, (k, &s)| if s == 0 { m | 1 << k } else { m }),
        }
    }
}

/// A kernel's collapsed dims: its size-1 dims dropped, and neighbouring dims merged
/// wherever every load's offset and the pattern `fixed` (one flag per dim, e.g. the
/// reduced dims) allow. Dims `d` and `d + 1` merge when no load or box is bounded on
/// either and each load's stride on `d` is its stride on `d + 1` times the extent of
/// `d + 1`.
pub(crate) struct Collapsed {
    /// The collapsed dims, outermost first (never empty).
    pub(crate) dims: Vec<usize>,
    /// The kernel dims each collapsed dim merges, outermost first.
    groups: Vec<Vec<usize>>,
    /// Every load is strided ([`Collapsed::explicit`]).
    explicit: bool,
}

impl Collapsed {
    /// Collapses `shape` for `loads` (offsets, and the boxes a region tests, whose
    /// bounds alone matter).
    pub(crate) fn new<'a>(
        shape: &[usize],
        loads: impl Iterator<Item = &'a Affine> + Clone,
        fixed: Option<&[bool]>,
    ) -> Collapsed {
        let bounded = |d: usize| loads.clone().any(|l| l.bounds.iter().any(|b| b.axis == d));
        let mut groups: Vec<Vec<usize>> = Vec::new();
        for d in (0..shape.len()).filter(|&d| shape[d] != 1) {
            if let Some(g) = groups.last_mut() {
                let inner = g[g.len() - 1];
                let mergeable = !bounded(inner)
                    && !bounded(d)
                    && fixed.is_none_or(|f| f[inner] == f[d])
                    && loads
                        .clone()
                        .all(|l| l.stride[inner] == l.stride[d] * shape[d] as i64);
                if mergeable {
                    g.push(d);
                    continue;
                }
            }
            groups.push(vec![d]);
        }
        let dims = if groups.is_empty() {
            vec![1]
        } else {
            groups
                .iter()
                .map(|g| g.iter().map(|&d| shape[d]).product())
                .collect()
        };
        Collapsed {
            dims,
            groups,
            explicit: false,
        }
    }

    /// No collapse: every dim of `shape` is its own (size 1 too), and every load is a
    /// strided one over them. A GEMM kernel's phases address their elements by explicit
    /// coordinates (a tile's row and column), never by a flat index.
    pub(crate) fn explicit(shape: &[usize]) -> Collapsed {
        Collapsed {
            dims: if shape.is_empty() { vec![1] } else { shape.to_vec() },
            groups: (0..shape.len()).map(|d| vec![d]).collect(),
            explicit: true,
        }
    }

    /// Whether collapsed dim `k` is one of the `fixed` ones (its kernel dims all are).
    pub(crate) fn reduced(&self, k: usize, fixed: &[bool]) -> bool {
        self.groups.get(k).is_some_and(|g| fixed[g[0]])
    }

    /// The collapsed dim kernel dim `axis` belongs to.
    fn dim_of(&self, axis: usize) -> usize {
        self.groups.iter().position(|g| g.contains(&axis)).unwrap_or(0)
    }

    /// Bounds over the kernel's dims as bounds over the collapsed dims (a bounded dim is
    /// never merged).
    pub(crate) fn bounds(&self, bounds: &[Bound]) -> SmallVec<[Bound; 2]> {
        bounds
            .iter()
            .map(|b| Bound {
                axis: self.dim_of(b.axis),
                ..*b
            })
            .collect()
    }

    /// How a load with offset `a` reads over the collapsed dims.
    /// `a` over the collapsed dims as a strided load, whatever its pattern.
    pub(crate) fn strided(&self, a: &Affine) -> LoadKind {
        match self.kind(a) {
            LoadKind::Strided(s) => LoadKind::Strided(s),
            LoadKind::Plain { .. } => {
                let stride: SmallVec<[i64; 4]> = if self.groups.is_empty() {
                    smallvec::smallvec![0]
                } else {
                    self.groups.iter().map(|g| a.stride[g[g.len() - 1]]).collect()
                };
                LoadKind::Strided(Affine {
                    base: a.base,
                    stride,
                    bounds: self.bounds(&a.bounds),
                })
            }
        }
    }

    pub(crate) fn kind(&self, a: &Affine) -> LoadKind {
        let stride: SmallVec<[i64; 4]> = if self.groups.is_empty() {
            smallvec::smallvec![0]
        } else {
            // A merged group moves like its innermost dim.
            self.groups.iter().map(|g| a.stride[g[g.len() - 1]]).collect()
        };
        let a = Affine {
            base: a.base,
            stride,
            bounds: self.bounds(&a.bounds),
        };
        match self.explicit {
            true => LoadKind::Strided(a),
            false => classify(&self.dims, a),
        }
    }
}

/// A plain load when the offset is the row-major order of the dims it moves along.
fn classify(dims: &[usize], a: Affine) -> LoadKind {
    if a.base != 0 || !a.bounds.is_empty() {
        return LoadKind::Strided(a);
    }
    let mut row = 1i64;
    let mut mask = 0u32;
    for k in (0..dims.len()).rev() {
        match a.stride[k] {
            0 if dims[k] != 1 => mask |= 1 << k,
            0 => {}
            s if s == row => row *= dims[k] as i64,
            _ => return LoadKind::Strided(a),
        }
    }
    LoadKind::Plain { mask }
}

#[cfg(test)]
#[path = "access_tests.rs"]
mod tests;
