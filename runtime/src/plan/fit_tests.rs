//! Table-driven tests of `fit`'s heuristics over several device profiles: no device.
use super::*;
use crate::dtype::DType;
use crate::plan::VectorLoads;
use crate::profile::Tuning;

/// An H200 as NVIDIA's OpenCL reports it, PoCL on a 2-core CPU, and a small GPU.
const H200: DeviceProfile = DeviceProfile {
    gpu: true,
    compute_units: 132,
    max_group: 1024,
    local_mem_bytes: 48 * 1024,
    private_bytes: 1 << 20,
    parameter_bytes: 4352,
    tuning: Tuning {
        combine_pass_only: false,
        shared_rows_anywhere: false,
        tiles_anywhere: false,
        gemm_tile: None,
        tile_trial_limit: None,
        row_items: None,
        row_work_items: None,
        rows_per_group: None,
        row_width: None,
        rows_online: false,
        serial_builds: false,
        topk_by_sort: false,
    },
};
const POCL: DeviceProfile = DeviceProfile {
    gpu: false,
    compute_units: 2,
    max_group: 4096,
    local_mem_bytes: 256 * 1024,
    private_bytes: 1 << 20,
    parameter_bytes: 1024,
    ..H200
};
const SMALL_GPU: DeviceProfile = DeviceProfile {
    compute_units: 8,
    max_group: 256,
    local_mem_bytes: 16 * 1024,
    private_bytes: 1 << 20,
    parameter_bytes: 256,
    ..H200
};
const PROFILES: [DeviceProfile; 3] = [H200, POCL, SMALL_GPU];

/// A reduction plan as `plan_kernel` makes it, before `fit`: the column layout for
/// `lanes == 0`, else lanes with vector loads.
fn plan(op: ReduceOp, lanes: u32, n_out: usize, n_red: usize, dtype: DType) -> ReducePlan {
    let columns = lanes == 0;
    let layout = if columns {
        let width = if n_out.is_multiple_of(VECTOR_WIDTH) {
            VECTOR_WIDTH
        } else {
            1
        };
        Layout::Columns(Columns {
            width,
            tile: REDUCE_GROUP as usize,
            rows: ColumnRows::Plain,
        })
    } else {
        Layout::Lanes {
            lanes,
            vector: Some(VectorLoads {
                width: VECTOR_WIDTH,
                aligned: n_red.is_multiple_of(VECTOR_WIDTH),
                contiguous: false,
            }),
        }
    };
    ReducePlan {
        op,
        red_mask: if columns { 1 } else { 2 },
        n_out,
        n_red,
        in_dtype: dtype,
        layout,
        segments: 1,
        finish: Finish::Single,
        compensated: false,
        row: None,
        row_total: None,
    }
}

/// Whether the lanes of a plan read contiguous runs.
fn contiguous_lanes(r: &ReducePlan) -> bool {
    matches!(
        r.layout,
        Layout::Lanes {
            vector: Some(VectorLoads { contiguous: true, .. }),
            ..
        }
    )
}

/// How a column reduction's rows are shared.
fn rows(r: &ReducePlan) -> ColumnRows {
    r.columns().expect("the column layout").rows
}

#[test]
fn device_limits_give_the_group_size_argument_budget_and_grid() {
    for (p, group, args, cap) in [
        (H200, 256, 96, 132 * 2048),
        (POCL, 256, 88, 1 << 30),
        (SMALL_GPU, 256, 8, 8 * 2048),
        (
            DeviceProfile {
                max_group: 200,
                ..SMALL_GPU
            },
            128,
            8,
            8 * 2048,
        ),
    ] {
        assert_eq!(p.reduce_group_size(), group, "{p:?}");
        assert_eq!(p.max_args(), args, "{p:?}");
        assert_eq!(p.work_items_cap(), cap, "{p:?}");
    }
    assert_eq!(H200.grid(1000), (1024, Some(256)), "GPUs: explicit groups");
    assert_eq!(POCL.grid(1000), (1024, None), "CPUs: the driver's choice");
    assert_eq!(H200.grid(0), (256, Some(256)));
}

#[test]
fn shared_rows_are_fused_on_gpus_or_when_tuned() {
    assert_eq!(
        widest_shared_row(&H200),
        1024,
        "a group of 512 holding two vectors each"
    );
    assert_eq!(
        widest_shared_row(&SMALL_GPU),
        256,
        "16 KiB of local memory: a group of 128"
    );
    assert_eq!(widest_shared_row(&POCL), 0, "barriers are loops on PoCL");
    let tuned = DeviceProfile {
        tuning: Tuning {
            shared_rows_anywhere: true,
            ..POCL.tuning
        },
        ..POCL
    };
    assert!(widest_shared_row(&tuned) > 0);
}

#[test]
fn full_sums_finish_in_their_kernel_unless_told_not_to() {
    for p in PROFILES {
        let group = p.reduce_group_size();
        let mut r = plan(ReduceOp::Sum, group, 1, 1 << 24, DType::F32);
        fit_reduction(&p, &mut r, group, false);
        assert!(r.segments > 1, "{p:?}: a long sum is split to fill the device");
        assert_eq!(
            r.finish,
            Finish::InKernel,
            "{p:?}: its last work-group finishes it"
        );
        assert_eq!(
            r.compensated,
            serial_steps(&r, group) > COMPENSATE_AFTER,
            "{p:?}: float sums are compensated where a work-item adds many steps"
        );
        if p == H200 || p == POCL {
            assert_eq!(
                r.compensated,
                p == POCL,
                "the H200 spreads 2^24 elements thin, PoCL not"
            );
        }
        assert_eq!(contiguous_lanes(&r), !p.gpu, "{p:?}: contiguous runs on CPUs");
        let no_finish = DeviceProfile {
            tuning: Tuning {
                combine_pass_only: true,
                ..p.tuning
            },
            ..p
        };
        let mut c = plan(ReduceOp::Sum, group, 1, 1 << 24, DType::F32);
        fit_reduction(&no_finish, &mut c, group, false);
        assert!(c.finish != Finish::InKernel && c.segments == r.segments, "{p:?}");
        let mut i = plan(ReduceOp::Sum, group, 1, 1 << 24, DType::I32);
        fit_reduction(&p, &mut i, group, false);
        assert!(!i.compensated, "integer sums are exact");
    }
}

#[test]
fn segments_leave_every_lane_enough_work() {
    for p in PROFILES {
        let group = p.reduce_group_size();
        for (lanes, n_out, n_red) in [
            (group, 1, 1000),
            (8, 200_000, 100),
            (2, 2_000_000, 20),
            (64, 3200, 25_300),
        ] {
            let mut r = plan(ReduceOp::Sum, lanes, n_out, n_red, DType::F32);
            fit_reduction(&p, &mut r, group, false);
            assert!(r.segments >= 1);
            assert!(
                r.segments == 1 || n_red / r.segments >= lanes as usize * 16,
                "{p:?}: {lanes} lanes, {n_red} elements in {} segments",
                r.segments
            );
        }
        // The column layout: each work-item reads at least 16 rows of its segment.
        for (n_out, n_red) in [
            (100usize, 200_000usize),
            (1000, 20_000),
            (25_300, 3200),
            (20, 2_000_000),
        ] {
            let mut r = plan(ReduceOp::Sum, 0, n_out, n_red, DType::F32);
            fit_reduction(&p, &mut r, group, false);
            let c = r.columns().expect("the column layout");
            let (_, rows_at_once, tiles) = c.geometry(r.n_out, group as usize);
            assert!(c.tile >= 1 && tiles >= 1);
            assert!(
                r.segments == 1 || n_red / r.segments >= rows_at_once * 16,
                "{p:?}: {n_out} columns, {n_red} rows in {} segments",
                r.segments
            );
        }
    }
}

#[test]
fn rows_inside_columns_take_the_layout_their_width_asks_for() {
    for p in PROFILES {
        let group = p.reduce_group_size();
        // Short rows (20 f32): one work-item reads each row whole, with a combine pass.
        let mut short = plan(ReduceOp::Sum, 0, 20, 2_000_000, DType::F32);
        assert!(short.rows_fit_one_item() && !wants_group_rows(&short, group));
        fit_reduction(&p, &mut short, group, true);
        assert_eq!(rows(&short), ColumnRows::RowsPerItem { vectors: 5 }, "{p:?}");
        assert!(short.finish != Finish::InKernel && !short.compensated);
        // Rows of 1000 f64 (250 vectors): a work-group shares each row.
        let mut wide = plan(ReduceOp::Sum, 0, 1000, 20_000, DType::F64);
        assert!(wants_group_rows(&wide, group));
        let g = fit_group_rows(&p, &mut wide);
        let ColumnRows::GroupRows { vectors_per_item } = rows(&wide) else {
            panic!(
                "{p:?}: rows of 250 vectors shared by a work-group, not {:?}",
                rows(&wide)
            );
        };
        assert!(g.is_power_of_two() && g as usize >= 250usize.div_ceil(vectors_per_item));
        assert!(g as usize <= largest_group(&p), "{p:?}");
        assert!(wide.segments >= 20_000usize.div_ceil(COMPENSATE_AFTER));
        assert!(wide.segments <= 20_000 / GROUP_ROWS_LEAST_ROWS);
        // Rows of 100 f32 (25 vectors): a row of work-items of the column layout.
        let mid = plan(ReduceOp::Sum, 0, 100, 200_000, DType::F32);
        assert!(!mid.rows_fit_one_item() && !wants_group_rows(&mid, group));
    }
}

#[test]
fn row_kernels_take_the_layout_their_device_measured_best() {
    use crate::plan::row_kernel::{rows_layout, Hold, RowShape};
    let shape = |rows, len| RowShape {
        rows,
        len,
        innermost: len,
    };
    // (rows, length, device) -> (work-items a row, group, elements a load, runs of them
    // held or reread)
    let cases = [
        (65536, 1024, H200, 64, 64, 4, Some(4)),
        (4096, 32768, H200, 1024, 1024, 4, None),
        (64, 32768, H200, 1024, 1024, 4, Some(8)),
        (4096, 8192, H200, 512, 512, 4, Some(4)),
        (100_000, 64, H200, 4, 64, 4, Some(4)),
        (1000, 5, H200, 1, 64, 1, Some(5)),
        (4096, 1024, POCL, 256, 256, 1, Some(4)),
        (16, 40_000, POCL, 1024, 1024, 1, None),
    ];
    for (rows, len, profile, per_row, group, width, items) in cases {
        let l = rows_layout(shape(rows, len), DType::F32, &profile).expect("a row kernel");
        let hold = match items {
            Some(items) => Hold::Registers { items },
            None => Hold::Reread,
        };
        assert_eq!(
            (l.per_row, l.group, l.width, l.hold),
            (per_row, group, width, hold),
            "{rows}x{len} on a {} device",
            if profile.gpu { "GPU" } else { "CPU" }
        );
    }
    // Vector loads only where a row's innermost dim is a multiple of their width.
    let split = RowShape {
        rows: 4096,
        len: 1024,
        innermost: 2,
    };
    assert_eq!(rows_layout(split, DType::F32, &H200).map(|l| l.width), Some(1));
    // Rows too long for registers and too few to fill the device: no row kernel.
    assert_eq!(rows_layout(shape(2, 1 << 20), DType::F32, &H200), None);
    assert_eq!(rows_layout(shape(0, 8), DType::F32, &H200), None);
    assert_eq!(rows_layout(shape(8, 0), DType::F32, &H200), None);
}
