//! Diagnostics: the source range every IR node and error carries, and the collection of
//! errors a translation reports together. The bottom of the crate: it depends on nothing
//! else in it.

use proc_macro2::{Span, TokenStream, TokenTree};
use quote::ToTokens;

/// A source range: the first and last token of a node. (On stable Rust a proc macro
/// cannot join spans; an error built from two tokens still underlines the whole range.)
#[derive(Clone, Copy, Debug)]
pub struct Sp {
    pub start: Span,
    pub end: Span,
}

impl From<Span> for Sp {
    fn from(s: Span) -> Sp {
        Sp { start: s, end: s }
    }
}

impl Sp {
    /// An error underlining the whole range.
    pub fn error(self, msg: impl std::fmt::Display) -> syn::Error {
        let mut ts = TokenStream::new();
        ts.extend([TokenTree::Ident(proc_macro2::Ident::new("a", self.start))]);
        ts.extend([TokenTree::Ident(proc_macro2::Ident::new("b", self.end))]);
        syn::Error::new_spanned(ts, msg)
    }
}

/// The source range of any syntax node (replaces `syn::spanned::Spanned`).
pub trait Spanned {
    fn span(&self) -> Sp;
}

impl<T: ToTokens + ?Sized> Spanned for T {
    fn span(&self) -> Sp {
        let ts = self.to_token_stream();
        let mut it = ts.into_iter();
        let first = it.next().map(|t| t.span()).unwrap_or_else(Span::call_site);
        let last = it.last().map(|t| t.span()).unwrap_or(first);
        Sp {
            start: first,
            end: last,
        }
    }
}

/// Several `syn::Error`s collected into one. A translation goes on after an error, so
/// that one compilation reports every problem; the order of the errors is the order in
/// which they were found.
#[derive(Default)]
pub struct Errors {
    inner: Option<syn::Error>,
}

impl Errors {
    pub fn push(&mut self, e: syn::Error) {
        match &mut self.inner {
            Some(all) => all.combine(e),
            None => self.inner = Some(e),
        }
    }

    pub fn add(&mut self, span: impl Into<Sp>, msg: impl std::fmt::Display) {
        self.push(span.into().error(msg));
    }

    pub fn is_empty(&self) -> bool {
        self.inner.is_none()
    }

    pub fn into_error(self) -> Option<syn::Error> {
        self.inner
    }
}
