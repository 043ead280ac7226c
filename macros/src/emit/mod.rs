//! Typed IR → OpenCL C 1.2 text, with Rust's semantics where OpenCL C differs (wrapping
//! signed arithmetic, division by zero, shift widths, saturating float→int casts, ...).
//! The snippets and helper functions the runtime writes too (wrapping operators, the
//! `lzc_div_int`-style helpers, include guards, pragmas) come from `lazycl-clc`, so an
//! `expr!` inside a runtime kernel shares its helpers with the kernel.
//!
//! This file holds the emitter's state (temporaries, the helper functions the text
//! needs, whether it uses `double`) and the two entry points: a whole function
//! (`#[kernel]`, `#[device_fn]`) and one expression (`expr!`, where `let` bindings are
//! inlined, since OpenCL C has no statement expressions). The files beside it emit one
//! construct each and mirror those of `lower`: `stmt`, `loops`, `expr`, `ops`, `place`,
//! `literal`, `calls`, `complex`. An expression that needs statements first (a value `if` with
//! statements in a branch, a block) emits them to a `pre` list and returns its value.

mod calls;
mod complex;
mod expr;
mod intrinsics;
mod literal;
mod loops;
mod ops;
mod place;
mod stmt;

use std::collections::{BTreeMap, HashMap};

use lazycl_clc::Helper;

use crate::ir::*;

/// The OpenCL C text the runtime writes too (`lazycl-clc`): include guards and pragmas.
pub use lazycl_clc::{guarded, pragmas, FP64_PRAGMA};

/// Emits OpenCL C for one function or expression.
struct Emitter<'a> {
    infer: &'a Infer,
    tmp: u32,
    /// Helper functions the code needs (`lazycl-clc`'s), by name.
    helpers: BTreeMap<String, Helper>,
    /// Whether `double` appears (needs the `cl_khr_fp64` pragma).
    uses_f64: bool,
    /// The `__local` scratch arrays of the work-group collectives called, by name.
    scratch: BTreeMap<String, DType>,
    ret_is_value: bool,
    /// Expression mode (`expr!`): `let` bindings are inlined at their uses instead of
    /// declared (OpenCL C has no statement expressions); name → parenthesized value.
    inline: Option<HashMap<String, String>>,
}

/// Appends `inner` to `lines`, one level deeper.
fn indent(lines: &mut Vec<String>, inner: Vec<String>) {
    lines.extend(inner.into_iter().map(|l| format!("    {l}")));
}

impl<'a> Emitter<'a> {
    fn new(infer: &'a Infer, ret_is_value: bool) -> Self {
        Emitter {
            infer,
            tmp: 0,
            helpers: BTreeMap::new(),
            uses_f64: false,
            scratch: BTreeMap::new(),
            ret_is_value,
            inline: None,
        }
    }

    /// The final scalar type of `t`, noting `double` (`f64`, `c64`).
    fn scalar(&mut self, t: Ty) -> Scalar {
        let s = self.infer.scalar(t).unwrap_or(Scalar::I32);
        if s.needs_fp64() {
            self.uses_f64 = true;
        }
        s
    }

    /// A fresh temporary (`lzc_...` names are never user names).
    fn temp(&mut self) -> String {
        self.tmp += 1;
        format!("lzc_t{}", self.tmp)
    }

    /// A scalar's OpenCL C type, noting `double`.
    fn cl(&mut self, s: Scalar) -> &'static str {
        if s.needs_fp64() {
            self.uses_f64 = true;
        }
        s.cl()
    }

    /// The OpenCL C type of the elements of a local or constant array of `s`: its values'
    /// (`float` for a 16-bit float; `uchar` for `bool`), noting `double`.
    fn array_value(&mut self, s: Scalar) -> &'static str {
        self.cl(s);
        s.elem().cl_name()
    }

    /// A call of `helper` with `args`, noting that the text needs its definition.
    fn call_helper(&mut self, helper: Helper, args: &[&str]) -> String {
        let call = helper.call(args);
        self.helpers.entry(helper.name.clone()).or_insert(helper);
        call
    }

    /// The helpers' definitions, each guarded so that several functions of one program
    /// (and a runtime kernel that calls the same helper) can include them.
    fn helper_defs(&self) -> String {
        self.helpers.values().map(Helper::guarded).collect()
    }
}

impl lazycl_clc::CallHelper for Emitter<'_> {
    fn call_helper(&mut self, helper: Helper, args: &[&str]) -> String {
        Emitter::call_helper(self, helper, args)
    }
}

/// The pieces of a translated function.
pub struct FnText {
    /// Helper definitions, each guarded so that several functions of one program can
    /// include them.
    pub helpers: String,
    /// The function itself.
    pub text: String,
    pub uses_f64: bool,
}

/// The header of a function to emit.
pub struct Header<'a> {
    /// A kernel (`ret` is `None`), else a device function.
    pub kernel: bool,
    pub cl_name: &'a str,
    pub params: &'a [Param],
    /// The kernel structs `ParamTy::Struct` indexes.
    pub structs: &'a [StructDef],
    /// The parameters' OpenCL C names (slices: pointer and length).
    pub cnames: &'a [(String, Option<String>)],
    pub ret: Option<Scalar>,
}

/// Emits a kernel or a device function.
pub fn function(header: &Header, body: &Block, infer: &Infer) -> FnText {
    let Header {
        kernel,
        cl_name,
        params,
        structs,
        cnames,
        ret,
    } = *header;
    let mut em = Emitter::new(infer, ret.is_some());
    let mut decls = Vec::new();
    let mut prologue = Vec::new();
    for (p, (cname, len)) in params.iter().zip(cnames) {
        match p.ty {
            ParamTy::Scalar(Scalar::Bool) if kernel => {
                let raw = format!("lzc_arg_{cname}");
                decls.push(format!("{} {raw}", DType::Bool.cl_arg()));
                prologue.push(format!("bool {cname} = {raw} != 0u;"));
            }
            // (Kernel arguments narrower than 32 bits travel as `int`/`uint`.)
            ParamTy::Scalar(s) if kernel && s.elem().cl_arg() != s.cl() => {
                let raw = format!("lzc_arg_{cname}");
                decls.push(format!("{} {raw}", s.elem().cl_arg()));
                prologue.push(format!("{0} {cname} = ({0}){raw};", s.cl()));
            }
            ParamTy::Scalar(s) => {
                let cl = em.cl(s);
                decls.push(format!("{cl} {cname}"));
            }
            ParamTy::Struct(k) => decls.push(format!("{} {cname}", structs[k].cl_name())),
            ParamTy::Slice { elem, mutable } => {
                em.cl(elem);
                let cl = elem.cl_storage();
                let konst = if mutable { "" } else { "const " };
                let restrict = if kernel { " restrict" } else { "" };
                decls.push(format!("__global {konst}{cl}*{restrict} {cname}"));
                decls.push(format!("ulong {}", len.clone().unwrap_or_default()));
            }
        }
    }
    let mut lines = prologue;
    em.block(body, &mut lines);
    // The collectives' scratch arrays, at kernel scope (lowering allows them in kernels
    // only).
    let scratch = em
        .scratch
        .iter()
        .map(|(name, t)| format!("__local {} {name}[{}];", t.cl_name(), lazycl_clc::GROUP_SCRATCH));
    let lines: Vec<String> = scratch.chain(lines).collect();
    let head = if kernel {
        format!("__kernel void {cl_name}({})", decls.join(", "))
    } else {
        let r = ret.map(|r| em.cl(r)).unwrap_or("void");
        format!(
            "{r} {cl_name}({})",
            if decls.is_empty() {
                "void".to_string()
            } else {
                decls.join(", ")
            }
        )
    };
    let mut text = format!("{head} {{\n");
    for l in lines {
        text.push_str("    ");
        text.push_str(&l);
        text.push('\n');
    }
    text.push_str("}\n");
    FnText {
        helpers: em.helper_defs(),
        text,
        uses_f64: em.uses_f64,
    }
}

/// The OpenCL C text of an `expr!` expression (one C expression: `let` bindings are
/// inlined), the definitions of the helpers it calls, and whether it uses `double`.
/// `Err` if the expression needs statements (the `expr!` checks rule those out first).
pub fn expression(e: &Expr, infer: &Infer) -> Result<FnText, String> {
    let mut em = Emitter::new(infer, false);
    em.inline = Some(HashMap::new());
    let mut pre = Vec::new();
    let text = em.expr(e, &mut pre);
    if !pre.is_empty() || text.is_empty() {
        return Err(format!(
            "lazycl internal error: this expression needs statements in OpenCL C: {}",
            pre.join(" ")
        ));
    }
    Ok(FnText {
        helpers: em.helper_defs(),
        text,
        uses_f64: em.uses_f64,
    })
}
