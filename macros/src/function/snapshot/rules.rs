//! A small `macro_rules!` expander for the source snapshot: enough of rustc's to expand
//! the macros that tests and examples write kernels with, and the hidden macros of device
//! functions and kernel structs (`resolve`). Matchers take literal tokens, groups,
//! `$name:fragment` (a syntactic fragment is parsed with syn, as rustc parses it) and
//! repetitions `$(...) sep? op`; the first arm that matches the whole input wins.

use proc_macro2::{Delimiter, Group, TokenStream, TokenTree};
use syn::parse::{ParseStream, Parser};

/// One `macro_rules!` definition: its arms, in order.
pub struct Rules {
    arms: Vec<(Vec<Matcher>, TokenStream)>,
}

/// A piece of an arm's matcher.
enum Matcher {
    Token(TokenTree),
    Group(Delimiter, Vec<Matcher>),
    Var {
        name: String,
        fragment: String,
    },
    Repeat {
        inner: Vec<Matcher>,
        sep: Option<TokenTree>,
        op: char,
    },
}

/// What a metavariable matched: a fragment, or one per repetition.
#[derive(Clone)]
enum Binding {
    One(Vec<TokenTree>),
    Many(Vec<Binding>),
}

type Bindings = Vec<(String, Binding)>;

impl Rules {
    /// The arms of `macro_rules! name { body }`: `(matcher) => { transcriber };`...
    pub fn parse(body: TokenStream) -> Rules {
        let trees: Vec<TokenTree> = body.into_iter().collect();
        let arms = trees
            .split(|t| matches!(t, TokenTree::Punct(p) if p.as_char() == ';'))
            .filter(|arm| !arm.is_empty())
            .map(|arm| match arm {
                [TokenTree::Group(m), TokenTree::Punct(_), TokenTree::Punct(_), TokenTree::Group(t)] => {
                    (matcher(m.stream()), t.stream())
                }
                _ => panic!(
                    "unexpected macro_rules! arm: {}",
                    TokenStream::from_iter(arm.to_vec())
                ),
            })
            .collect();
        Rules { arms }
    }

    /// The expansion of an invocation with input `input`, by the first arm that matches.
    pub fn expand(&self, input: TokenStream) -> Option<TokenStream> {
        let input: Vec<TokenTree> = input.into_iter().collect();
        self.arms.iter().find_map(|(m, transcriber)| {
            let mut bindings = Bindings::new();
            match match_seq(m, &input, 0, &mut bindings) {
                Some(end) if end == input.len() => Some(transcribe(transcriber.clone(), &bindings, &[])),
                _ => None,
            }
        })
    }
}

fn is_punct(t: Option<&TokenTree>, c: char) -> bool {
    matches!(t, Some(TokenTree::Punct(p)) if p.as_char() == c)
}

fn matcher(stream: TokenStream) -> Vec<Matcher> {
    let trees: Vec<TokenTree> = stream.into_iter().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < trees.len() {
        match (&trees[i], trees.get(i + 1)) {
            (TokenTree::Punct(p), Some(TokenTree::Ident(name))) if p.as_char() == '$' => {
                assert!(
                    is_punct(trees.get(i + 2), ':'),
                    "a metavariable without a fragment"
                );
                let fragment = trees[i + 3].to_string();
                out.push(Matcher::Var {
                    name: name.to_string(),
                    fragment,
                });
                i += 4;
            }
            (TokenTree::Punct(p), Some(TokenTree::Group(g))) if p.as_char() == '$' => {
                let (sep, op, len) = repetition_tail(&trees[i + 2..]);
                out.push(Matcher::Repeat {
                    inner: matcher(g.stream()),
                    sep,
                    op,
                });
                i += 2 + len;
            }
            (TokenTree::Group(g), _) => {
                out.push(Matcher::Group(g.delimiter(), matcher(g.stream())));
                i += 1;
            }
            (t, _) => {
                out.push(Matcher::Token(t.clone()));
                i += 1;
            }
        }
    }
    out
}

/// The separator and operator after `$(...)`, and how many tokens they take.
fn repetition_tail(rest: &[TokenTree]) -> (Option<TokenTree>, char, usize) {
    let op = |t: Option<&TokenTree>| match t {
        Some(TokenTree::Punct(p)) if "*+?".contains(p.as_char()) => Some(p.as_char()),
        _ => None,
    };
    match op(rest.first()) {
        Some(c) => (None, c, 1),
        None => (
            Some(rest[0].clone()),
            op(rest.get(1)).expect("a repetition operator"),
            2,
        ),
    }
}

fn same_token(a: &TokenTree, b: &TokenTree) -> bool {
    match (a, b) {
        (TokenTree::Punct(a), TokenTree::Punct(b)) => a.as_char() == b.as_char(),
        (TokenTree::Group(_), _) | (_, TokenTree::Group(_)) => false,
        _ => a.to_string() == b.to_string(),
    }
}

/// Matches `m` against `input` from `at`; the position after the match.
fn match_seq(m: &[Matcher], input: &[TokenTree], mut at: usize, b: &mut Bindings) -> Option<usize> {
    for piece in m {
        at = match piece {
            Matcher::Token(t) => same_token(t, input.get(at)?).then_some(at + 1)?,
            Matcher::Group(d, inner) => match input.get(at)? {
                TokenTree::Group(g) if g.delimiter() == *d => {
                    let trees: Vec<TokenTree> = g.stream().into_iter().collect();
                    (match_seq(inner, &trees, 0, b)? == trees.len()).then_some(at + 1)?
                }
                _ => return None,
            },
            Matcher::Var { name, fragment } => {
                let len = fragment_len(fragment, &input[at..])?;
                b.push((name.clone(), Binding::One(input[at..at + len].to_vec())));
                at + len
            }
            Matcher::Repeat { inner, sep, op } => match_repeat(inner, sep.as_ref(), *op, input, at, b)?,
        };
    }
    Some(at)
}

fn match_repeat(
    inner: &[Matcher],
    sep: Option<&TokenTree>,
    op: char,
    input: &[TokenTree],
    mut at: usize,
    b: &mut Bindings,
) -> Option<usize> {
    let mut rounds: Vec<Bindings> = Vec::new();
    loop {
        if op == '?' && !rounds.is_empty() {
            break;
        }
        let mut next = at;
        if let (Some(s), false) = (sep, rounds.is_empty()) {
            match input.get(next) {
                Some(t) if same_token(s, t) => next += 1,
                _ => break,
            }
        }
        let mut round = Bindings::new();
        match match_seq(inner, input, next, &mut round) {
            Some(end) if end > next || sep.is_some() => {
                rounds.push(round);
                at = end;
            }
            _ => break,
        }
        if at >= input.len() {
            break;
        }
    }
    if op == '+' && rounds.is_empty() {
        return None;
    }
    for name in var_names(inner) {
        let each = rounds
            .iter()
            .map(|r| {
                r.iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, v)| v.clone())
                    .unwrap()
            })
            .collect();
        b.push((name, Binding::Many(each)));
    }
    Some(at)
}

fn var_names(m: &[Matcher]) -> Vec<String> {
    m.iter()
        .flat_map(|piece| match piece {
            Matcher::Var { name, .. } => vec![name.clone()],
            Matcher::Group(_, inner) | Matcher::Repeat { inner, .. } => var_names(inner),
            Matcher::Token(_) => Vec::new(),
        })
        .collect()
}

/// How many tokens of `input` a fragment of kind `fragment` takes.
fn fragment_len(fragment: &str, input: &[TokenTree]) -> Option<usize> {
    match fragment {
        "tt" => (!input.is_empty()).then_some(1),
        "ident" => matches!(input.first(), Some(TokenTree::Ident(_))).then_some(1),
        "lifetime" => (is_punct(input.first(), '\'') && input.len() > 1).then_some(2),
        "literal" if is_punct(input.first(), '-') => Some(1 + fragment_len("literal", &input[1..])?),
        "literal" => matches!(input.first(), Some(TokenTree::Literal(_))).then_some(1),
        _ => {
            let stream = TokenStream::from_iter(input.iter().cloned());
            let rest = |s: ParseStream| -> syn::Result<usize> {
                match fragment {
                    "expr" => drop(s.parse::<syn::Expr>()?),
                    "ty" => drop(s.parse::<syn::Type>()?),
                    "pat" | "pat_param" => drop(syn::Pat::parse_single(s)?),
                    "path" => drop(s.parse::<syn::Path>()?),
                    "meta" => drop(s.parse::<syn::Meta>()?),
                    "block" => drop(s.parse::<syn::Block>()?),
                    "stmt" => drop(s.parse::<syn::Stmt>()?),
                    "item" => drop(s.parse::<syn::Item>()?),
                    "vis" => drop(s.parse::<syn::Visibility>()?),
                    other => panic!("fragment `{other}` is not supported"),
                }
                Ok(s.parse::<TokenStream>()?.into_iter().count())
            };
            let left = rest.parse2(stream).ok()?;
            Some(input.len() - left)
        }
    }
}

/// The transcriber with the metavariables replaced; `index` is the position in each
/// enclosing repetition.
fn transcribe(t: TokenStream, b: &Bindings, index: &[usize]) -> TokenStream {
    let trees: Vec<TokenTree> = t.into_iter().collect();
    let mut out = TokenStream::new();
    let mut i = 0;
    while i < trees.len() {
        match (&trees[i], trees.get(i + 1)) {
            (TokenTree::Punct(p), Some(TokenTree::Ident(name))) if p.as_char() == '$' => {
                match lookup(b, &name.to_string(), index) {
                    Some(Binding::One(tokens)) => out.extend(tokens.iter().cloned()),
                    Some(Binding::Many(_)) => panic!("`${name}` is still repeating here"),
                    // `$crate` and the like: kept as they are.
                    None => out.extend([trees[i].clone(), trees[i + 1].clone()]),
                }
                i += 2;
            }
            (TokenTree::Punct(p), Some(TokenTree::Group(g))) if p.as_char() == '$' => {
                let (sep, _, len) = repetition_tail(&trees[i + 2..]);
                let rounds = rounds(g.stream(), b, index).expect("a repetition of no repeating metavariable");
                for k in 0..rounds {
                    if let (Some(s), true) = (&sep, k > 0) {
                        out.extend([s.clone()]);
                    }
                    let inner: Vec<usize> = index.iter().copied().chain([k]).collect();
                    out.extend(transcribe(g.stream(), b, &inner));
                }
                i += 2 + len;
            }
            (TokenTree::Group(g), _) => {
                let mut group = Group::new(g.delimiter(), transcribe(g.stream(), b, index));
                group.set_span(g.span());
                out.extend([TokenTree::Group(group)]);
                i += 1;
            }
            (t, _) => {
                out.extend([t.clone()]);
                i += 1;
            }
        }
    }
    out
}

/// The binding of `$name` at `index`: descended through one repetition per index.
fn lookup<'a>(b: &'a Bindings, name: &str, index: &[usize]) -> Option<&'a Binding> {
    let mut v = &b.iter().rev().find(|(n, _)| n == name)?.1;
    for &k in index {
        match v {
            Binding::Many(each) => v = &each[k],
            Binding::One(_) => break,
        }
    }
    Some(v)
}

/// How many times a repetition of the transcriber runs: the length of the repeating
/// metavariables it names.
fn rounds(t: TokenStream, b: &Bindings, index: &[usize]) -> Option<usize> {
    let mut trees = t.into_iter().peekable();
    while let Some(tree) = trees.next() {
        let n = match (&tree, trees.peek()) {
            (TokenTree::Punct(p), Some(TokenTree::Ident(name))) if p.as_char() == '$' => {
                match lookup(b, &name.to_string(), index) {
                    Some(Binding::Many(each)) => Some(each.len()),
                    _ => None,
                }
            }
            (TokenTree::Group(g), _) => rounds(g.stream(), b, index),
            _ => None,
        };
        if n.is_some() {
            return n;
        }
    }
    None
}
