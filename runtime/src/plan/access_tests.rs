use super::*;

/// The collapsed dims and each load's kind (the pre-`Collapsed` shape of the API).
fn collapse(shape: &[usize], loads: &[Affine], fixed: Option<&[bool]>) -> (Vec<usize>, Vec<LoadKind>) {
    let c = Collapsed::new(shape, loads.iter(), fixed);
    let kinds = loads.iter().map(|l| c.kind(l)).collect();
    (c.dims, kinds)
}

fn ax(from: Option<usize>, start: isize, step: isize) -> SourceAxis {
    SourceAxis { from, start, step }
}

fn access(axes: &[SourceAxis]) -> Access {
    Access {
        map: ViewMap {
            axes: axes.iter().copied().collect(),
        },
        bounds: SmallVec::new(),
    }
}

#[test]
fn broadcast_and_full_loads_stay_plain_and_collapse_as_before() {
    let space = [2, 3, 4];
    let id = Access::identity(3);
    let full = id.affine(&space, 3);
    let row = id.broadcast(&space, &[3, 4]).affine(&[3, 4], 3);
    let (dims, kinds) = collapse(&space, &[full.clone(), row], None);
    assert_eq!(dims, vec![2, 12]);
    assert_eq!(
        kinds,
        vec![LoadKind::Plain { mask: 0 }, LoadKind::Plain { mask: 1 }]
    );
    let (dims, kinds) = collapse(&space, &[full], None);
    assert_eq!(dims, vec![24]);
    assert_eq!(kinds, vec![LoadKind::Plain { mask: 0 }]);
    let (dims, _) = collapse(&[], &[], None);
    assert_eq!(dims, vec![1]);
    // A column [2, 1, 4] broadcast along the middle dim.
    let col = id.broadcast(&space, &[2, 1, 4]).affine(&[2, 1, 4], 3);
    let (dims, kinds) = collapse(&space, &[col], None);
    assert_eq!(dims, vec![2, 3, 4]);
    assert_eq!(kinds, vec![LoadKind::Plain { mask: 0b010 }]);
}

#[test]
fn reduced_dims_do_not_merge_with_kept_ones() {
    let space = [5, 6];
    let full = Access::identity(2).affine(&space, 2);
    let (dims, _) = collapse(&space, std::slice::from_ref(&full), Some(&[false, true]));
    assert_eq!(dims, vec![5, 6]);
    let (dims, _) = collapse(&space, &[full], Some(&[true, true]));
    assert_eq!(dims, vec![30]);
}

#[test]
fn a_transposed_operand_is_strided_and_keeps_both_dims() {
    // b has shape [4, 3]; the kernel runs over [3, 4] and reads b[j, i].
    let t = Access::identity(2).view(&ViewMap {
        axes: [ax(Some(1), 0, 1), ax(Some(0), 0, 1)].into_iter().collect(),
    });
    let a = t.affine(&[4, 3], 2);
    assert_eq!((a.base, &a.stride[..]), (0, &[1i64, 3][..]));
    let (dims, kinds) = collapse(&[3, 4], &[Access::identity(2).affine(&[3, 4], 2), a], None);
    assert_eq!(dims, vec![3, 4]);
    assert_eq!(kinds[0], LoadKind::Plain { mask: 0 });
    assert!(matches!(&kinds[1], LoadKind::Strided(s) if s.stride[..] == [1, 3]));
}

#[test]
fn a_window_is_strided_with_an_offset_and_rows_of_a_slice_merge_when_whole() {
    // x[2..] of a length-10 vector, read over 8 elements.
    let w = access(&[ax(Some(0), 2, 1)]).affine(&[10], 1);
    let (dims, kinds) = collapse(&[8], &[w], None);
    assert_eq!(dims, vec![8]);
    assert!(matches!(&kinds[0], LoadKind::Strided(s) if s.base == 2 && s.stride[..] == [1]));
    // m[1..3, ..] of a [5, 7] matrix: whole rows, so the two dims merge into one run.
    let rows = access(&[ax(Some(0), 1, 1), ax(Some(1), 0, 1)]).affine(&[5, 7], 2);
    let (dims, kinds) = collapse(&[2, 7], &[rows], None);
    assert_eq!(dims, vec![14]);
    assert!(matches!(&kinds[0], LoadKind::Strided(s) if s.base == 7 && s.stride[..] == [1]));
    // m[.., 1..3]: rows of a column range do not merge.
    let cols = access(&[ax(Some(0), 0, 1), ax(Some(1), 1, 1)]).affine(&[5, 7], 2);
    let (dims, _) = collapse(&[5, 2], &[cols], None);
    assert_eq!(dims, vec![5, 2]);
}

#[test]
fn a_part_is_read_exactly_where_its_coordinates_fall_inside_it() {
    // Brute force over small maps: the bounds `part` derives select exactly the kernel
    // coordinates whose region coordinate lies in [offset, offset + extent).
    for start in -3isize..9 {
        for step in [-3isize, -2, -1, 1, 2, 3] {
            for offset in 0usize..6 {
                for extent in 0usize..5 {
                    let n = 7usize;
                    let a = access(&[ax(Some(0), start, step)]);
                    let inside = |c: i64| {
                        let v = start as i64 + step as i64 * c;
                        v >= offset as i64 && v < (offset + extent) as i64
                    };
                    let expect: Vec<bool> = (0..n as i64).map(inside).collect();
                    let got: Vec<bool> = match a.part(&[offset], &[extent], &[n]) {
                        None => vec![false; n],
                        Some(p) => (0..n as i64)
                            .map(|c| p.bounds.iter().all(|b| b.axis != 0 || (c >= b.lo && c < b.hi)))
                            .collect(),
                    };
                    assert_eq!(
                        got, expect,
                        "start {start} step {step} offset {offset} extent {extent}"
                    );
                    if let Some(p) = a.part(&[offset], &[extent], &[n]) {
                        assert_eq!(p.map.axes[0].start, start - offset as isize);
                    }
                }
            }
        }
    }
}

#[test]
fn a_fixed_coordinate_is_inside_a_part_or_never_read() {
    let a = access(&[ax(None, 4, 1)]);
    assert!(a.part(&[3], &[2], &[1]).is_some_and(|p| p.bounds.is_empty()));
    assert!(a.part(&[5], &[2], &[1]).is_none());
}
