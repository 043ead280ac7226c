//! `explain_dot`'s pictures (clusters per kernel, the reduction kept on the device, the
//! root marked; Graphviz renders them), `LAZYCL_DUMP_DOT` (a picture per flush that
//! builds a kernel, none for a cached one), and `explain` of arrays with nothing left to
//! compute (what made them).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use lazycl::prelude::*;

use crate::common::{child_test, ctx, rng, run_child, Random};

/// A node of a DOT picture: its id and attribute text.
struct DotNode {
    id: String,
    attrs: String,
}

/// A kernel's cluster: its attribute text and its nodes.
struct Cluster {
    attrs: String,
    nodes: Vec<DotNode>,
}

/// What a test reads of a picture (lazycl writes one statement per line).
struct Dot {
    clusters: Vec<Cluster>,
    outside: Vec<DotNode>,
    /// (from, to, attribute text)
    edges: Vec<(String, String, String)>,
}

fn parse(dot: &str) -> Dot {
    let mut picture = Dot {
        clusters: Vec::new(),
        outside: Vec::new(),
        edges: Vec::new(),
    };
    let mut inside = false;
    for line in dot.lines().map(str::trim) {
        if line.starts_with("subgraph cluster_") {
            inside = true;
            picture.clusters.push(Cluster {
                attrs: String::new(),
                nodes: Vec::new(),
            });
        } else if line == "}" {
            inside = false;
        } else if let Some(attrs) = line.strip_prefix("graph [") {
            if inside {
                picture.clusters.last_mut().unwrap().attrs = attrs.to_string();
            }
        } else if let Some((from, rest)) = line.split_once(" -> ") {
            let (to, attrs) = rest.split_once(' ').unwrap_or((rest.trim_end_matches(';'), ""));
            picture
                .edges
                .push((from.to_string(), to.to_string(), attrs.to_string()));
        } else if let Some((id, attrs)) = line.split_once(" [") {
            if id == "node" || id == "edge" {
                continue;
            }
            let node = DotNode {
                id: id.to_string(),
                attrs: attrs.to_string(),
            };
            match inside {
                true => picture.clusters.last_mut().unwrap().nodes.push(node),
                false => picture.outside.push(node),
            }
        }
    }
    picture
}

/// The value of attribute `name` in `attrs` (quoted or not), unescaped.
fn attr(attrs: &str, name: &str) -> Option<String> {
    let at = attrs.find(&format!("{name}="))? + name.len() + 1;
    let rest = &attrs[at..];
    match rest.strip_prefix('"') {
        Some(quoted) => {
            let mut out = String::new();
            let mut chars = quoted.chars();
            while let Some(c) = chars.next() {
                match c {
                    '\\' => match chars.next()? {
                        'n' => out.push('\n'),
                        other => out.push(other),
                    },
                    '"' => return Some(out),
                    c => out.push(c),
                }
            }
            None
        }
        None => Some(rest.split([',', ']']).next()?.trim().to_string()),
    }
}

fn classes(attrs: &str) -> Vec<String> {
    attr(attrs, "class")
        .unwrap_or_default()
        .split(' ')
        .map(str::to_string)
        .collect()
}

/// `x`, `s = x.sum()` and `y = (x - s) * 0.5`: a reduction kernel whose 0-d result
/// stays on the device, and an elementwise kernel that reads it.
fn centered(ctx: &Context, xs: &[f32]) -> (Array<f32>, Array<f32>, Array<f32>) {
    let x = ctx.from_slice(xs).unwrap();
    let s = x.sum();
    let y = (&x - &s) * 0.5f32;
    (x, s, y)
}

fn centered_host(xs: &[f32]) -> Vec<f64> {
    let s: f64 = xs.iter().map(|&v| v as f64).sum();
    xs.iter().map(|&v| (v as f64 - s) * 0.5).collect()
}

fn assert_close(got: &[f32], want: &[f64], scale: f64) {
    assert_eq!(got.len(), want.len());
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g as f64 - w).abs() <= 1e-5 * scale,
            "element {i}: {g} against {w} (scale {scale})"
        );
    }
}

#[test]
fn dot_of_a_reduction_and_its_reader_has_two_kernel_clusters() {
    let ctx = ctx();
    let xs = f32::random_vec(&mut rng(41), 5000);
    let (_x, _s, y) = centered(&ctx, &xs);
    let text = y.explain().unwrap();
    assert_eq!(
        text.lines().filter(|l| l.starts_with("kernel ")).count(),
        2,
        "the planner splits it into two kernels:\n{text}"
    );
    let dot = y.explain_dot().unwrap();
    assert_eq!(dot, y.explain_dot().unwrap(), "the picture is deterministic");
    let picture = parse(&dot);
    assert_eq!(picture.clusters.len(), 2, "{dot}");
    assert_eq!(dot.matches("subgraph cluster_").count(), 2, "{dot}");

    // The reduction is in the first cluster, labelled as one, and stays on the device.
    let reduction = &picture.clusters[0];
    let label = attr(&reduction.attrs, "label").unwrap();
    assert!(
        label.contains("Sum reduction of 5000 elements to one value"),
        "{label}"
    );
    assert!(label.contains("new"), "nothing was built yet: {label}");
    let sum = reduction
        .nodes
        .iter()
        .find(|n| attr(&n.attrs, "label").unwrap().starts_with("sum over axes 0"))
        .unwrap_or_else(|| panic!("no sum node in the reduction's cluster:\n{dot}"));
    assert!(
        classes(&sum.attrs).contains(&"device-scalar".to_string()),
        "{dot}"
    );
    assert_eq!(attr(&sum.attrs, "peripheries").as_deref(), Some("2"), "{dot}");
    assert!(picture.clusters[1]
        .nodes
        .iter()
        .all(|n| !attr(&n.attrs, "label").unwrap().starts_with("sum")));

    // The root is marked, in the elementwise cluster, and reads the sum from memory.
    let elementwise = &picture.clusters[1];
    assert!(attr(&elementwise.attrs, "label")
        .unwrap()
        .contains("elementwise over [5000]"));
    let roots: Vec<&DotNode> = picture
        .clusters
        .iter()
        .flat_map(|c| &c.nodes)
        .chain(&picture.outside)
        .filter(|n| classes(&n.attrs).contains(&"root".to_string()))
        .collect();
    assert_eq!(roots.len(), 1, "{dot}");
    assert!(elementwise.nodes.iter().any(|n| n.id == roots[0].id), "{dot}");
    assert!(attr(&roots[0].attrs, "label")
        .unwrap()
        .contains("materialized (root)"));
    let reads_sum = picture
        .edges
        .iter()
        .find(|(from, to, _)| *from == sum.id && elementwise.nodes.iter().any(|n| n.id == *to))
        .unwrap_or_else(|| panic!("no edge from the sum into the elementwise kernel:\n{dot}"));
    assert!(classes(&reads_sum.2).contains(&"memory".to_string()), "{dot}");

    // The upload is drawn outside the kernels, read by both.
    let upload = picture
        .outside
        .iter()
        .find(|n| classes(&n.attrs) == ["upload"])
        .unwrap_or_else(|| panic!("no upload:\n{dot}"));
    assert_eq!(attr(&upload.attrs, "shape").as_deref(), Some("cylinder"));
    for cluster in &picture.clusters {
        assert!(picture
            .edges
            .iter()
            .any(|(from, to, _)| *from == upload.id && cluster.nodes.iter().any(|n| n.id == *to)));
    }

    // It computes what it shows; afterwards the same structure is drawn as cached.
    let scale: f64 = xs.iter().map(|&v| v.abs() as f64).sum();
    assert_close(&y.to_vec().unwrap(), &centered_host(&xs), scale);
    let (_, _, again) = centered(&ctx, &xs);
    let cached = parse(&again.explain_dot().unwrap());
    for cluster in &cached.clusters {
        assert_eq!(classes(&cluster.attrs), ["cached"], "{}", cluster.attrs);
    }
}

/// Runs Graphviz's `dot -Tsvg` on `dot`; the SVG.
fn render_svg(dot: &str) -> String {
    let child = Command::new("dot")
        .arg("-Tsvg")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => panic!(
            "Graphviz's `dot` cannot be run ({e}): run `make setup` (scripts/setup.sh installs \
             Graphviz, as `make test` does)"
        ),
    };
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(dot.as_bytes()).unwrap();
    }
    let out = child.wait_with_output().unwrap();
    let svg = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "dot -Tsvg failed: {}\n{dot}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        svg.starts_with("<?xml") && svg.contains("<svg"),
        "not an SVG: {}",
        &svg[..svg.len().min(200)]
    );
    svg
}

#[test]
fn graphviz_renders_the_pictures_of_every_kind_of_kernel() {
    // Only planned, never built: pictures cost no compilation.
    let ctx = ctx();
    let mut r = rng(42);
    let xs = f32::random_vec(&mut r, 5000);
    let (_, _, y) = centered(&ctx, &xs);
    let svg = render_svg(&y.explain_dot().unwrap());
    assert!(svg.contains("class=\"node root\""), "the classes reach the SVG");
    assert!(svg.contains("class=\"cluster new\""), "the classes reach the SVG");

    let m = ctx
        .from_shape_slice([64, 100], &f32::random_vec(&mut r, 6400))
        .unwrap();
    let w = ctx
        .from_shape_slice([100, 8], &f32::random_vec(&mut r, 800))
        .unwrap();
    let i = ctx.from_slice(&[3u32, 0, 7]).unwrap();
    let pictures = [
        ("row kernel", m.softmax(1)),
        ("matrix product", (m.matmul(&w) + 1.0f32).max(0.0f32).sum_axis(1)),
        ("scan", (&m * 2.0f32).cumsum(1)),
        ("region", concatenate(0, &[&m, &m.t().t()]).unwrap() * 3.0f32),
        ("take", m.take(1, &i).exp()),
    ];
    for (kind, a) in &pictures {
        let dot = a.explain_dot().unwrap();
        assert!(dot.contains(kind), "{kind}:\n{dot}");
        render_svg(&dot);
    }
    // An array with nothing to compute is one node, the root.
    let dot = m.explain_dot().unwrap();
    let picture = parse(&dot);
    assert!(picture.clusters.is_empty(), "{dot}");
    assert_eq!(picture.outside.len(), 1, "{dot}");
    assert_eq!(classes(&picture.outside[0].attrs), ["upload"]);
    assert_eq!(
        attr(&picture.outside[0].attrs, "peripheries").as_deref(),
        Some("2")
    );
    render_svg(&dot);
}

/// A fresh directory for this process and test.
fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("lazycl-dot-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn dot_files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

#[test]
fn dump_dot_writes_a_picture_per_flush_that_builds_a_kernel() {
    let dir = temp_dir("dump").join("not-yet-made");
    let ctx = Context::builder().dump_dot(Some(dir.clone())).build().unwrap();
    let mut r = rng(43);
    let xs = f32::random_vec(&mut r, 5000);
    let (_, s, y) = centered(&ctx, &xs);
    y.eval().unwrap();
    ctx.wait_dispatched().unwrap(); // the flush that draws may run on the dispatch thread
    let files = dot_files(&dir);
    assert_eq!(files.len(), 1, "{files:?}");
    // `explain` of what that flush computed names the flush, and so its picture.
    let text = y.explain().unwrap();
    let number = text
        .split("of flush ")
        .nth(1)
        .and_then(|t| t.split(',').next())
        .unwrap_or_else(|| panic!("{text}"));
    assert_eq!(files[0], format!("flush-{number}.dot"), "{text}");
    let picture = std::fs::read_to_string(dir.join(&files[0])).unwrap();
    assert_eq!(parse(&picture).clusters.len(), 2, "{picture}");
    assert!(picture.contains(&format!("flush {number} on")), "{picture}");
    assert!(s.explain().unwrap().contains("kernel 0 (Sum reduction"));

    // The same structure again, on new data: cached kernels, no picture.
    let xs2 = f32::random_vec(&mut r, 5000);
    let (_, _, y2) = centered(&ctx, &xs2);
    let scale: f64 = xs2.iter().map(|&v| v.abs() as f64).sum();
    assert_close(&y2.to_vec().unwrap(), &centered_host(&xs2), scale);
    assert_eq!(dot_files(&dir).len(), 1, "a cached flush draws nothing");

    // A directory that cannot be made warns and never fails the flush.
    let blocked = temp_dir("blocked");
    std::fs::write(&blocked, b"a file where the directory would go").unwrap();
    let ctx = Context::builder()
        .dump_dot(Some(blocked.join("dots")))
        .build()
        .unwrap();
    let (_, _, y3) = centered(&ctx, &xs);
    let scale: f64 = xs.iter().map(|&v| v.abs() as f64).sum();
    assert_close(&y3.to_vec().unwrap(), &centered_host(&xs), scale);
    let _ = std::fs::remove_file(&blocked);
    let _ = std::fs::remove_dir_all(dir.parent().unwrap());
}

#[test]
fn lazycl_dump_dot_names_the_directory() {
    let dir = temp_dir("env");
    let text =
        run_child(child_test("explain::child_flushes_with_its_environment").env("LAZYCL_DUMP_DOT", &dir));
    let files = dot_files(&dir);
    assert_eq!(files.len(), 1, "{files:?}\n{text}");
    assert!(files[0].starts_with("flush-") && files[0].ends_with(".dot"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// The child of `lazycl_dump_dot_names_the_directory`: a flush that builds kernels,
/// under the `LAZYCL_DUMP_DOT` its parent set.
#[test]
#[ignore = "run by lazycl_dump_dot_names_the_directory in a child process"]
fn child_flushes_with_its_environment() {
    let xs = f32::random_vec(&mut rng(44), 5000);
    let (_, _, y) = centered(&ctx(), &xs);
    let scale: f64 = xs.iter().map(|&v| v.abs() as f64).sum();
    assert_close(&y.to_vec().unwrap(), &centered_host(&xs), scale);
    println!("child: ok");
}

#[test]
fn explain_says_what_made_a_materialized_array() {
    let ctx = ctx();
    let mut r = rng(45);
    let xs = f32::random_vec(&mut r, 5000);
    let (x, s, y) = centered(&ctx, &xs);
    let upload = x.explain().unwrap();
    assert!(
        upload.starts_with("already materialized: an upload from the host"),
        "{upload}"
    );
    assert!(upload.contains("nothing to compute"), "{upload}");
    let reshaped = x.reshape([50, 100]).explain().unwrap();
    assert!(reshaped.contains("an upload from the host"), "{reshaped}");
    let fill = ctx.zeros::<f32>([3, 4]).unwrap().explain().unwrap();
    assert!(
        fill.starts_with("already materialized: a fill on the device"),
        "{fill}"
    );

    // Lazy: the kernels; computed: the kernel and flush that did it.
    let lazy = y.explain().unwrap();
    let first = lazy.lines().next().unwrap_or_default();
    assert!(first.contains("recorded at tests/it/explain.rs:"), "{lazy}");
    assert!(
        lazy.lines().nth(1).unwrap_or_default().starts_with("kernel 0: "),
        "{lazy}"
    );
    y.eval().unwrap();
    let computed = y.explain().unwrap();
    assert!(
        computed
            .starts_with("already materialized: computed by kernel 1 (elementwise over [5000]) of flush "),
        "{computed}"
    );
    assert!(computed.contains("which launched 2 kernels"), "{computed}");
    assert!(
        computed.contains("\n  kernel 0: Sum reduction of 5000 elements to one value"),
        "{computed}"
    );
    let sum = s.explain().unwrap();
    assert!(
        sum.starts_with("already materialized: computed by kernel 0 (Sum reduction"),
        "{sum}"
    );
    let scale: f64 = xs.iter().map(|&v| v.abs() as f64).sum();
    let host_sum: f64 = xs.iter().map(|&v| v as f64).sum();
    assert!((s.item().unwrap() as f64 - host_sum).abs() <= 1e-5 * scale);

    // Written in place after it was made.
    let mut z = ctx.from_slice(&xs).unwrap();
    z.slice_mut(s![..10]).assign(2.0f32).unwrap();
    let written = z.explain().unwrap();
    assert!(
        written.starts_with("already materialized: last written in place by slice_mut(..).assign"),
        "{written}"
    );
    let got = z.to_vec().unwrap();
    assert!(got[..10].iter().all(|&v| v == 2.0) && got[10..] == xs[10..]);
}
