//! Loops: `while` (a condition that needs statements becomes `for (;;)` with a test),
//! `loop`, and `for` over a range (no overflow at the type's maximum, and `continue`
//! still advances). C has no labelled jumps: a labelled loop's body ends in its
//! `continue` target and the loop is followed by its `break` target, which the jumps
//! reach by `goto`.

use super::expr::strip_outer;
use super::{indent, Emitter};
use crate::ir::*;

impl Emitter<'_> {
    pub(super) fn while_loop(
        &mut self,
        cond: &Expr,
        body: &Block,
        label: &Option<String>,
        lines: &mut Vec<String>,
    ) {
        let mut pre = Vec::new();
        let c = strip_outer(self.expr(cond, &mut pre));
        if pre.is_empty() {
            lines.push(format!("while ({c}) {{"));
            let inner = self.loop_body(body, label);
            indent(lines, inner);
        } else {
            lines.push("for (;;) {".into());
            let mut inner = pre;
            inner.push(format!("if (!({c})) break;"));
            inner.extend(self.loop_body(body, label));
            indent(lines, inner);
        }
        lines.push("}".into());
        break_target(lines, label);
    }

    /// `loop { .. }`.
    pub(super) fn loop_loop(&mut self, body: &Block, label: &Option<String>, lines: &mut Vec<String>) {
        lines.push("for (;;) {".into());
        let inner = self.loop_body(body, label);
        indent(lines, inner);
        lines.push("}".into());
        break_target(lines, label);
    }

    /// `for var in start..end` (or `..=`, or with a step): the bounds are evaluated once,
    /// before the loop.
    pub(super) fn for_loop(&mut self, f: &ForLoop, lines: &mut Vec<String>) {
        let t = self.scalar(f.ty);
        let cl = t.cl();
        let s = self.expr(&f.start, lines);
        let e = self.expr(&f.end, lines);
        let it = self.temp();
        let end_v = self.temp();
        lines.push("{".into());
        let mut inner = vec![format!("const {cl} {end_v} = {e};")];
        let ut = t.cl_unsigned();
        match &f.step {
            // `a..=b`: a flag decides the end, so `b == MAX` does not overflow, and the
            // advance is in the `for` increment, so `continue` works.
            _ if f.inclusive => {
                let done = self.temp();
                let step_v = self.temp();
                let sv = match &f.step {
                    Some(st) => self.expr(st, &mut inner),
                    None => "1ul".into(),
                };
                inner.push(format!("const ulong {step_v} = max({sv}, 1ul);"));
                inner.push(format!("{cl} {it} = {s};"));
                inner.push(format!("bool {done} = !({it} <= {end_v});"));
                inner.push(format!(
                    "for (; !{done}; {done} = ((ulong)(({ut}){end_v} - ({ut}){it}) < {step_v}), {it} = {done} ? {it} : ({cl})(({ut}){it} + ({ut}){step_v})) {{"
                ));
            }
            None => inner.push(format!("for ({cl} {it} = {s}; {it} < {end_v}; {it}++) {{")),
            Some(st) => {
                let sv = self.expr(st, &mut inner);
                let step_v = self.temp();
                inner.push(format!("const ulong {step_v} = max({sv}, 1ul);"));
                // Advance without overflowing: stop once the remaining distance is <= step.
                inner.push(format!(
                    "for ({cl} {it} = {s}; {it} < {end_v}; {it} = ((ulong)(({ut}){end_v} - ({ut}){it}) > {step_v}) ? ({cl})(({ut}){it} + ({ut}){step_v}) : {end_v}) {{"
                ));
            }
        }
        let mut body_lines = vec![format!("{cl} {} = {it};", f.var)];
        body_lines.extend(self.loop_body(&f.body, &f.label));
        indent(&mut inner, body_lines);
        inner.push("}".into());
        indent(lines, inner);
        lines.push("}".into());
        break_target(lines, &f.label);
    }

    /// A loop body; a labelled loop ends it with the target of `continue 'label`.
    fn loop_body(&mut self, body: &Block, label: &Option<String>) -> Vec<String> {
        let mut inner = self.sub_block(body);
        if let Some(l) = label {
            inner.push(format!("{l}_continue: ;"));
        }
        inner
    }
}

/// After a labelled loop: the target of `break 'label`.
fn break_target(lines: &mut Vec<String>, label: &Option<String>) {
    if let Some(l) = label {
        lines.push(format!("{l}_break: ;"));
    }
}
