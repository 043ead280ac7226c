//! The table of GEMM tiles chosen per shape class on one device, as kept in the disk
//! cache's `gemm-tiles-<device>.txt` (`DiskCache::read_table`): after the line naming the
//! device, a line per shape class,
//!
//! ```text
//! f32 cc 3 3 3 0 | 64 128 8 8 16 4 0 | ok
//! ```
//!
//! its class's words, its tile's seven words (`GemmTile::words`) and its state
//! ([`TileState`]: nothing, `ok`, `trial` or `bad`). The file is user input: a line that
//! is not of this form (any garbage) is skipped, never an error. Whether a tile is sound
//! for the device is not this file's job (`exec::tune` checks every entry against the
//! device's limits and tries an unchecked one before using it).

use std::collections::HashMap;

use crate::layout::GemmTile;

/// What is known of a table entry's tile on this device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TileState {
    /// Not known to run (a line without a state: written by hand or by an older
    /// lazycl): tried once before it is used.
    Unchecked,
    /// Chosen by a search, or passed its trial (`ok`).
    Checked,
    /// Its trial began and never ended (`trial`): the process died or was stopped during
    /// it, so it is never tried again.
    OnTrial,
    /// Outside the device's limits, or its trial failed (`bad`): never used again.
    Bad,
}

impl TileState {
    fn word(self) -> &'static str {
        match self {
            TileState::Unchecked => "",
            TileState::Checked => "ok",
            TileState::OnTrial => "trial",
            TileState::Bad => "bad",
        }
    }

    fn parse(word: Option<&str>) -> Option<TileState> {
        Some(match word.map(str::trim) {
            None | Some("") => TileState::Unchecked,
            Some("ok") => TileState::Checked,
            Some("trial") => TileState::OnTrial,
            Some("bad") => TileState::Bad,
            Some(_) => return None,
        })
    }

    /// Which of two states of one tile a merge keeps: `bad` over everything, then `ok`,
    /// then `trial`, then none.
    fn rank(self) -> u8 {
        match self {
            TileState::Unchecked => 0,
            TileState::OnTrial => 1,
            TileState::Checked => 2,
            TileState::Bad => 3,
        }
    }
}

/// One shape class's entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TileEntry {
    pub(crate) tile: GemmTile,
    pub(crate) state: TileState,
}

/// The longest line read (a class's words and a tile's are far shorter).
const MAX_LINE: usize = 256;

/// The table: entries by shape class (its words).
#[derive(Debug, Default, Clone)]
pub(crate) struct TileTable {
    entries: HashMap<String, TileEntry>,
}

impl TileTable {
    /// The table of a file's lines (those after the one naming the device). Lines that
    /// are not `class | tile` or `class | tile | state` are skipped.
    pub(crate) fn parse(text: &str) -> TileTable {
        let entries = text.lines().filter_map(parse_line).collect();
        TileTable { entries }
    }

    pub(crate) fn get(&self, class: &str) -> Option<TileEntry> {
        self.entries.get(class).copied()
    }

    pub(crate) fn set(&mut self, class: &str, entry: TileEntry) {
        self.entries.insert(class.to_string(), entry);
    }

    /// Takes in what another process wrote (`disk`), except for `class`, this process's
    /// own news: another process's tile for a class replaces this one's; of two states
    /// of one tile the merge keeps the one ranked higher (a `bad` mark is never lost).
    pub(crate) fn merge(&mut self, disk: TileTable, class: &str) {
        for (c, theirs) in disk.entries {
            if c == class {
                continue;
            }
            let kept = match self.entries.get(&c) {
                Some(mine) if mine.tile == theirs.tile && mine.state.rank() > theirs.state.rank() => *mine,
                _ => theirs,
            };
            self.entries.insert(c, kept);
        }
    }

    /// The table's lines, sorted.
    pub(crate) fn render(&self) -> String {
        let mut lines: Vec<String> = self
            .entries
            .iter()
            .map(|(c, e)| match e.state {
                TileState::Unchecked => format!("{c} | {}\n", e.tile.words()),
                s => format!("{c} | {} | {}\n", e.tile.words(), s.word()),
            })
            .collect();
        lines.sort();
        lines.concat()
    }
}

fn parse_line(line: &str) -> Option<(String, TileEntry)> {
    if line.len() > MAX_LINE {
        return None;
    }
    let mut fields = line.split(" | ");
    let class = fields.next()?.trim();
    let words: Vec<&str> = fields.next()?.split_whitespace().collect();
    let state = TileState::parse(fields.next())?;
    if class.is_empty() || fields.next().is_some() {
        return None;
    }
    let tile = GemmTile::parse(&words)?;
    Some((class.to_string(), TileEntry { tile, state }))
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: GemmTile = GemmTile::new(64, 64, 8, 4, 4, 4);
    const U: GemmTile = GemmTile::new(32, 32, 8, 2, 2, 2);

    #[test]
    fn lines_are_read_back_as_written() {
        let mut t = TileTable::default();
        for (class, state) in [
            ("f32 cc 1 1 1 0", TileState::Unchecked),
            ("f32 cc 2 2 2 0", TileState::Checked),
            ("f64 rc 3 3 3 0 rows 64", TileState::OnTrial),
            ("i32 cr 4 4 4 1", TileState::Bad),
        ] {
            t.set(class, TileEntry { tile: T, state });
        }
        let again = TileTable::parse(&t.render());
        assert_eq!(again.entries, t.entries);
        assert!(t.render().contains("f32 cc 2 2 2 0 | 64 64 8 4 4 4 0 | ok\n"));
        assert!(t.render().contains("f32 cc 1 1 1 0 | 64 64 8 4 4 4 0\n"));
    }

    #[test]
    fn garbage_lines_are_skipped() {
        let long = format!("f32 cc 2 2 2 0 | 64 64 8 4 4 4 0{}", " ".repeat(300));
        let text = [
            "",
            "|",
            " | ",
            "f32 cc 2 2 2 0",
            "f32 cc 2 2 2 0 |",
            "f32 cc 2 2 2 0 | 64 64 8 4 4 4",
            "f32 cc 2 2 2 0 | 64 64 8 4 4 4 0 0",
            "f32 cc 2 2 2 0 | 64 64 8 4 -4 4 0",
            "f32 cc 2 2 2 0 | 64 64 8 4 70000 4 0",
            "f32 cc 2 2 2 0 | 64 64 8 4 4.0 4 0",
            "f32 cc 2 2 2 0 | 64 64 8 4 4 4 0 | maybe",
            "f32 cc 2 2 2 0 | 64 64 8 4 4 4 0 | ok | ok",
            " | 64 64 8 4 4 4 0",
            "\u{0}\u{1}\u{fffd} | \u{7f}",
            &long,
            "f32 cc 1 1 1 0 | 32 32 8 2 2 2 0 | ok",
        ]
        .join("\n");
        let t = TileTable::parse(&text);
        assert_eq!(t.entries.len(), 1, "{:?}", t.entries);
        assert_eq!(
            t.get("f32 cc 1 1 1 0"),
            Some(TileEntry {
                tile: U,
                state: TileState::Checked
            })
        );
    }

    #[test]
    fn a_merge_takes_other_processes_news_and_never_loses_a_bad_mark() {
        let entry = |tile, state| TileEntry { tile, state };
        let mut mine = TileTable::default();
        mine.set("a", entry(T, TileState::Checked));
        mine.set("b", entry(T, TileState::Checked));
        mine.set("c", entry(T, TileState::Bad));
        mine.set("d", entry(T, TileState::Checked));
        let mut disk = TileTable::default();
        disk.set("a", entry(T, TileState::Bad));
        disk.set("b", entry(U, TileState::Checked));
        disk.set("c", entry(T, TileState::Unchecked));
        disk.set("d", entry(U, TileState::Bad));
        disk.set("e", entry(U, TileState::Unchecked));
        mine.merge(disk, "d");
        assert_eq!(mine.get("a"), Some(entry(T, TileState::Bad)));
        assert_eq!(mine.get("b"), Some(entry(U, TileState::Checked)));
        assert_eq!(mine.get("c"), Some(entry(T, TileState::Bad)));
        assert_eq!(mine.get("d"), Some(entry(T, TileState::Checked)), "its own news");
        assert_eq!(mine.get("e"), Some(entry(U, TileState::Unchecked)));
    }
}
