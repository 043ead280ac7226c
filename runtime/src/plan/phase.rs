//! A *phase* of a kernel planned over explicit coordinates: the cone of some targets
//! (and of an extra value) over a space, every load strided, bound into a plan that
//! other phases share (inputs, scalars, key). A GEMM kernel has three (each operand's
//! tile loads, the epilogue); a scan with consumers two (the operand, the epilogue). A
//! `product` is the value of its kernel's own computation (the accumulators, the scanned
//! element), read in the epilogue at its own coordinates only.

use super::access::{Access, Affine, Collapsed, LoadKind};
use super::collect::GNode;
use super::cone::Cone;
use super::kernel_plan::KernelPlan;
use super::reads;
use super::{values, Store};

/// One phase: the cone of `targets` (and of `extra`, broadcast into the space) over
/// `space`, its loads strided over explicit coordinates.
pub(super) struct Phase<'a> {
    pub(super) targets: &'a [usize],
    pub(super) extra: Option<usize>,
    pub(super) space: Vec<usize>,
    pub(super) product: Option<usize>,
    pub(super) store: Option<&'a Store>,
    /// Reuse the input slots of earlier phases ([`values::Binder::share_slots`]).
    pub(super) share_slots: bool,
}

/// What binding a phase gave.
pub(super) struct Bound {
    /// The value of `extra` (an operand phase's operand).
    pub(super) value: usize,
    /// Every load's offset over the phase's coordinates.
    pub(super) offsets: Vec<Affine>,
    /// The product is read only at the phase's own coordinates (or not at all).
    pub(super) product_plain: bool,
}

impl Phase<'_> {
    pub(super) fn bind(&self, graph: &[GNode], mat: &[bool], plan: &mut KernelPlan) -> Bound {
        let cone = Cone::of(graph, mat, self.targets, self.extra, false, None, self.product);
        let walked = cone.view(graph);
        let space = &self.space;
        let rank = space.len();
        let reads = reads::walk(&walked, self.targets, self.extra, space);
        let offsets: Vec<Affine> = reads
            .loads
            .iter()
            .map(|l| l.access.affine(&l.shape, rank))
            .collect();
        let collapsed = Collapsed::explicit(space);
        let kinds: Vec<LoadKind> = offsets.iter().map(|o| collapsed.kind(o)).collect();
        let store = self.store.map(|s| {
            let offset = Access::identity(rank).view(&s.map).affine(&s.shape, rank);
            (s.node, collapsed.kind(&offset))
        });
        let product_plain = self.product.is_none_or(|p| {
            let at = reads.accesses(p);
            at.len() <= 1 && at.iter().all(|a| *a == Access::identity(rank))
        });
        let binder = values::Binder {
            walked: &walked,
            is_target: &cone.is_target,
            reads: &reads,
            kinds: &kinds,
            collapsed: &collapsed,
            space,
            store,
            share_slots: self.share_slots,
        };
        let value_of = binder.bind(plan, |j| (graph[j].node.dtype, j));
        Bound {
            value: self.extra.map_or(usize::MAX, value_of),
            offsets,
            product_plain,
        }
    }
}

/// Where an axis kernel's (a scan's, a transform pass's) values are: its operand's, the
/// value the loads compute, and the first of its epilogue's.
pub(crate) struct AxisValues {
    pub(crate) value: usize,
    pub(crate) epilogue: usize,
}

/// Binds the two phases of the kernel of axis operation `members[0]` (`what` it is, for
/// a broken plan's message) over operand `operand`: the loads, then the epilogue of the
/// elementwise points `members[1..]` that joined it (and the operation itself where
/// `stored`), whose product is the operation's element, read only at its own coordinates.
#[allow(clippy::too_many_arguments)]
pub(crate) fn axis_phases(
    graph: &[GNode],
    mat: &[bool],
    plan: &mut KernelPlan,
    members: &[usize],
    operand: usize,
    stored: bool,
    store: Option<&Store>,
    what: &str,
) -> AxisValues {
    let node = members[0];
    let space: Vec<usize> = graph[node].node.shape.to_vec();
    let loads = Phase {
        targets: &[],
        extra: Some(operand),
        space: space.clone(),
        product: None,
        store: None,
        share_slots: false,
    };
    let value = loads.bind(graph, mat, plan).value;
    let start = plan.values.len();
    super::key::scan_epilogue(&mut plan.key, start);
    let mut targets = members[1..].to_vec();
    if stored {
        targets.insert(0, node);
    }
    let epilogue = Phase {
        targets: &targets,
        extra: None,
        space,
        product: Some(node),
        store,
        share_slots: false,
    };
    if !epilogue.bind(graph, mat, plan).product_plain {
        plan.broken.get_or_insert_with(|| {
            format!("the epilogue of {what} {node} reads it elsewhere than at its own coordinates")
        });
    }
    // (Loads over explicit coordinates: offsets stay `long`.)
    super::key::offsets(&mut plan.key, false);
    values::mark_branch_loads(plan);
    AxisValues {
        value,
        epilogue: start,
    }
}
