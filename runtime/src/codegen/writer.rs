//! The source writer every printer writes through: lines at the current depth (four
//! spaces a level), blocks that open and close a level.

use std::fmt::{Display, Write};

/// One level of indentation.
const INDENT: &str = "    ";

/// OpenCL C text being written, and the depth its next line starts at.
pub(super) struct Src {
    text: String,
    depth: usize,
}

impl Src {
    /// An empty text whose lines start `depth` levels in.
    pub(super) fn at(depth: usize) -> Self {
        Src {
            text: String::new(),
            depth,
        }
    }

    /// One line at the current depth.
    pub(super) fn line(&mut self, line: impl Display) {
        for _ in 0..self.depth {
            self.text.push_str(INDENT);
        }
        let _ = writeln!(self.text, "{line}");
    }

    /// A line that opens a block (`for (...) {`): the lines after it stand a level in.
    pub(super) fn open(&mut self, head: impl Display) {
        self.line(head);
        self.depth += 1;
    }

    /// The `}` that closes the innermost open block.
    pub(super) fn close(&mut self) {
        self.close_with("}");
    }

    /// A line that closes the innermost open block (`}`, or anything that starts with the
    /// closing brace).
    pub(super) fn close_with(&mut self, tail: impl Display) {
        self.depth -= 1;
        self.line(tail);
    }

    /// A line that closes the innermost open block and opens another (`} else {`).
    pub(super) fn reopen(&mut self, line: impl Display) {
        self.close_with(line);
        self.depth += 1;
    }

    /// Text written by another [`Src`], at its own depth, appended as it stands.
    pub(super) fn text(&mut self, text: &str) {
        self.text.push_str(text);
    }

    /// Writes with `f` `levels` deeper than the current depth (shallower where negative),
    /// without a block, then goes back. For the places where the generated code's
    /// indentation does not follow its blocks: a body shared by layouts that nest it
    /// differently stands at one depth in all of them, and some blocks stand at the depth
    /// of the `if` or loop around them.
    pub(super) fn shifted<R>(&mut self, levels: isize, f: impl FnOnce(&mut Self) -> R) -> R {
        let before = self.depth;
        self.depth = before.saturating_add_signed(levels);
        let result = f(self);
        self.depth = before;
        result
    }

    /// The text written.
    pub(super) fn into_string(self) -> String {
        self.text
    }
}
