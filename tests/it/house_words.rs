//! The tree speaks of the product only, checked: no tracked text file names the period of
//! work a change was made in, points at a tracker's entry by number (`#` and one to three
//! digits, or the tracker's word and a number), names the internal tools the project is
//! built with, or speaks of borrowing machines to measure on. Figures keep their device and
//! date (RESULTS.md); how they came to be is in git. A failure names each file and line
//! and what it found: say it in product terms, do not widen the rule.
//!
//! The forbidden words are spelt here in pieces (`concat!`), so that this file passes its
//! own check.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The work-period word, matched at the start of a word (its plural too).
const PERIOD: &str = concat!("ses", "sion");
/// The tracker's word, before a number (`<word> 21`, `<word>s 19`).
const TRACKER: &str = concat!("iss", "ue");
/// Internal tool names, as whole words.
const TOOLS: &[&str] = &[concat!("fa", "rm"), concat!("stu", "dio")];
/// Loan words, as whole words.
const LENDING_WORDS: &[&str] = &[concat!("le", "nt"), concat!("len", "ding")];
/// Phrases of loaned machines and of a machine's allowance, anywhere in a line. ("Device time" alone
/// is the product's word for time spent on the device.)
const LENDING_PHRASES: &[&str] = &[
    concat!("borr", "owed machine"),
    concat!("borr", "owed gpu"),
    concat!("borr", "owed h100"),
    concat!("borr", "owed h200"),
    concat!("device time ", "ran out"),
    concat!("device time ", "was spent"),
    concat!("device time ", "left"),
    concat!("of device ", "time"),
    concat!("device-time ", "budget"),
    concat!("device time ", "budget"),
    concat!("machine ", "budget"),
    concat!("budget of a ", "machine"),
];
/// A measuring run named as an event ("the ... run"), not a script's name (`h200-run.sh`).
const RUN_EVENTS: &[&str] = &[concat!("h200 ", "run"), concat!("h100 ", "run")];

/// Files of the tree to read: the tracked ones (`git ls-files`), or, outside a git
/// checkout, every file below the root but `.git`, `target` and `devbin`.
fn tree_files(root: &Path) -> Vec<PathBuf> {
    let listed = Command::new("git")
        .arg("ls-files")
        .arg("-z")
        .current_dir(root)
        .output()
        .ok()
        .filter(|o| o.status.success());
    match listed {
        Some(out) => out
            .stdout
            .split(|&b| b == 0)
            .filter(|p| !p.is_empty())
            .map(|p| root.join(String::from_utf8_lossy(p).as_ref()))
            .collect(),
        None => {
            let mut files = Vec::new();
            walk(root, &mut files);
            files
        }
    }
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        let name = entry.file_name();
        if path.is_dir() {
            if !matches!(name.to_str(), Some(".git" | "target" | "devbin")) {
                walk(&path, out);
            }
        } else {
            out.push(path);
        }
    }
}

fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Byte offsets where `word` starts at a word boundary in `line` (and, with `whole`, ends
/// at one).
fn word_starts(line: &str, word: &str, whole: bool) -> Vec<usize> {
    let bytes = line.as_bytes();
    line.match_indices(word)
        .map(|(i, _)| i)
        .filter(|&i| i == 0 || !is_word(bytes[i - 1]))
        .filter(|&i| !whole || bytes.get(i + word.len()).is_none_or(|&b| !is_word(b)))
        .collect()
}

/// Whether `line` refers to an entry by number: `#` and one to three digits (not starting
/// with 0) standing alone, not an HTML entity (`&#123;`) and not the compiler's numbered
/// argument (`argument #` and its number); or the tracker's word (or its plural) and a
/// number.
fn numbered_reference(line: &str) -> bool {
    let bytes = line.as_bytes();
    let hash = line.match_indices('#').any(|(i, _)| {
        let digits = bytes[i + 1..].iter().take_while(|b| b.is_ascii_digit()).count();
        let after = bytes.get(i + 1 + digits);
        (1..=3).contains(&digits)
            && bytes[i + 1] != b'0'
            && after.is_none_or(|&b| !is_word(b))
            && (i == 0 || !(is_word(bytes[i - 1]) || bytes[i - 1] == b'&'))
            && !line[..i].ends_with("argument ")
    });
    hash || word_starts(line, TRACKER, false).into_iter().any(|i| {
        let after = &line[i + TRACKER.len()..];
        let rest = after.strip_prefix('s').unwrap_or(after);
        let trimmed = rest.trim_start_matches(' ');
        trimmed.len() < rest.len() && trimmed.starts_with(|c: char| c.is_ascii_digit())
    })
}

/// What `line` says about how the project is developed, if anything.
fn findings(line: &str) -> Vec<String> {
    let lower = line.to_ascii_lowercase();
    let mut found = Vec::new();
    if !word_starts(&lower, PERIOD, false).is_empty() {
        found.push(format!("the work-period word ({PERIOD:?})"));
    }
    if numbered_reference(&lower) {
        found.push("a reference by number".to_string());
    }
    for tool in TOOLS {
        if !word_starts(&lower, tool, true).is_empty() {
            found.push(format!("an internal tool's name ({tool:?})"));
        }
    }
    for word in LENDING_WORDS {
        if !word_starts(&lower, word, true).is_empty() {
            found.push(format!("a loan word ({word:?})"));
        }
    }
    for phrase in LENDING_PHRASES {
        if lower.contains(phrase) {
            found.push(format!("a loan phrase ({phrase:?})"));
        }
    }
    for event in RUN_EVENTS {
        if !word_starts(&lower, event, true).is_empty() {
            found.push(format!("a measuring run as an event ({event:?})"));
        }
    }
    found
}

#[test]
fn no_file_speaks_of_how_the_project_is_developed() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut wrong = Vec::new();
    let mut read = 0;
    for file in tree_files(root) {
        // Binary files, and files listed but not in the working tree, have no text to check.
        let Ok(bytes) = std::fs::read(&file) else { continue };
        let Ok(text) = String::from_utf8(bytes) else {
            continue;
        };
        read += 1;
        let rel = file.strip_prefix(root).unwrap_or(&file).display().to_string();
        for (n, line) in text.lines().enumerate() {
            for what in findings(line) {
                wrong.push(format!("{rel}:{}: {what}: {}", n + 1, line.trim()));
            }
        }
    }
    assert!(read > 100, "read only {read} text files under {}", root.display());
    assert!(
        wrong.is_empty(),
        "words about how the project is developed, not about the product:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_check_finds_each_kind_and_passes_product_words() {
    let period = format!("measured in the third {PERIOD}");
    let tracker = format!("as {TRACKER} 21 asked");
    let tools = format!("built on the {} machine", TOOLS[0]);
    let loaned = format!("on the {} machine", LENDING_WORDS[0]);
    let event = format!("before the {} started", RUN_EVENTS[0]);
    let (closes, see) = (format!("closes (#{}).", 24), format!("see #{}", 7));
    for bad in [
        period.as_str(),
        tracker.as_str(),
        closes.as_str(),
        see.as_str(),
        tools.as_str(),
        loaned.as_str(),
        event.as_str(),
    ] {
        assert!(!findings(bad).is_empty(), "not found in {bad:?}");
    }
    for fine in [
        "#pragma OPENCL EXTENSION cl_khr_fp64 : enable",
        "#[kernel] fn saxpy(a: f32)",
        "## 2. Reductions",
        "fill=\"#000000\" stroke=\"#E67E22\"",
        "error: argument #2 is missing",
        "&#123; and #0 and #1234",
        "host time per call, device time per run",
        "scripts/h200-run.sh report",
        "silent, excellent, possessions",
    ] {
        assert!(findings(fine).is_empty(), "{fine:?}: {:?}", findings(fine));
    }
}
