//! The texts of a body's JSON numbers that the parser reads as doubles, so DECIMAL values sent
//! as JSON numbers are stored exactly as sent, as the Fluss Gateway stores them.
//!
//! The streaming decoder reads a DECIMAL column's number as its text (`RawValue`). The
//! reference path parses rows into `serde_json::Value`, whose numbers with a fraction or an
//! exponent are doubles: `0.1000000000000000001` would reach the codec as `0.1`. Its texts
//! come from one scan of the body's bytes ([`NumberTexts::scan`]), found again by the double
//! they parse to. Two different values that read as the same double cannot be told apart in a
//! `Value`: such a number is refused for DECIMAL (sent as a string, it is kept exact).
//!
//! The texts reach the value rules through a scope set around a synchronous decode
//! ([`NumberTexts::in_scope`]); nothing is awaited inside one.

use std::cell::RefCell;
use std::collections::HashMap;
use std::str::FromStr;
use std::sync::Arc;

use bigdecimal::BigDecimal;

use crate::wire::{has_nonzero_mantissa, number_token, string_end};

/// The texts of a body's numbers that parse to doubles, by the double's bits.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct NumberTexts {
    by_bits: HashMap<u64, Seen>,
}

#[derive(Debug, Clone, PartialEq)]
enum Seen {
    /// Every number of the body with these bits has this value (written this way once).
    One(Box<str>),
    /// Numbers of different values read as this double.
    Several,
}

/// What a double of a decoded value was sent as.
#[derive(Debug, PartialEq)]
pub(super) enum Text {
    /// The number's text as sent.
    Sent(Box<str>),
    /// The body holds different numbers that read as this double: which one this is is lost.
    Several,
    /// The decode runs where the texts are not at hand but the reference path has them (the
    /// streaming decoder's nested values): refuse, and the reference path decides.
    Deferred,
    /// No texts at all (a row built in code, an event record parsed elsewhere): the double's
    /// shortest text is all there is.
    Unknown,
}

enum Scope {
    Texts(Arc<NumberTexts>),
    Deferred,
}

thread_local! {
    static SCOPE: RefCell<Option<Scope>> = const { RefCell::new(None) };
}

/// Restores the enclosing scope when a decode ends, a panic included.
struct Restore(Option<Scope>);

impl Drop for Restore {
    fn drop(&mut self) {
        let previous = self.0.take();
        SCOPE.with(|s| *s.borrow_mut() = previous);
    }
}

fn with_scope<R>(scope: Option<Scope>, f: impl FnOnce() -> R) -> R {
    let previous = SCOPE.with(|s| std::mem::replace(&mut *s.borrow_mut(), scope));
    let _restore = Restore(previous);
    f()
}

impl NumberTexts {
    /// The numbers of a JSON document (already accepted by the parser) that parse to doubles:
    /// those with a fraction or an exponent, and integers beyond 64 bits. One pass over the
    /// bytes, outside strings; on bytes that are not JSON it answers something, never panics.
    pub fn scan(json: &[u8]) -> Arc<Self> {
        let mut texts = NumberTexts::default();
        let mut i = 0;
        while let Some(&b) = json.get(i) {
            match b {
                b'"' => i = string_end(json, i + 1),
                b'-' | b'0'..=b'9' => {
                    let token = number_token(json, i);
                    i += token.len() - 1;
                    if let Ok(text) = std::str::from_utf8(token) {
                        texts.record(text);
                    }
                }
                _ => {}
            }
            i += 1;
        }
        Arc::new(texts)
    }

    /// The texts of several documents written together (an event's records in one batch): a
    /// double read from different values in different documents is refused (several values).
    /// `None` when there is none.
    pub fn merged<'a>(all: impl IntoIterator<Item = &'a Arc<NumberTexts>>) -> Option<Arc<Self>> {
        let mut all = all.into_iter();
        let first = all.next()?;
        let mut merged: Option<NumberTexts> = None;
        for texts in all {
            let merged = merged.get_or_insert_with(|| (**first).clone());
            for (bits, seen) in &texts.by_bits {
                match (merged.by_bits.get_mut(bits), seen) {
                    (None, _) => {
                        merged.by_bits.insert(*bits, seen.clone());
                    }
                    (Some(Seen::One(a)), Seen::One(b)) if a == b || same_value(a, b) => {}
                    (Some(mine), _) => *mine = Seen::Several,
                }
            }
        }
        Some(merged.map_or_else(|| Arc::clone(first), Arc::new))
    }

    fn record(&mut self, text: &str) {
        let integer = !text.contains(['.', 'e', 'E']);
        if integer && (text.parse::<i64>().is_ok() || text.parse::<u64>().is_ok()) {
            return;
        }
        let Ok(double) = text.parse::<f64>() else {
            return;
        };
        let seen = self
            .by_bits
            .entry(double.to_bits())
            .or_insert_with(|| Seen::One(text.into()));
        if let Seen::One(first) = seen
            && **first != *text
            && !same_value(first, text)
        {
            *seen = Seen::Several;
        }
    }

    /// Runs `decode` with `texts` at hand for the value rules (`None`: a decode whose rows were
    /// not parsed from bytes; the double's shortest text is used, as before).
    pub fn in_scope<R>(texts: Option<&Arc<NumberTexts>>, decode: impl FnOnce() -> R) -> R {
        with_scope(texts.map(|t| Scope::Texts(Arc::clone(t))), decode)
    }

    /// Runs the streaming decoder's `decode`, where a double in a nested value is refused so
    /// that the reference path, which has the texts, decides it.
    pub(super) fn deferred<R>(decode: impl FnOnce() -> R) -> R {
        with_scope(Some(Scope::Deferred), decode)
    }
}

/// Whether two number texts of one double are the same value (`1.5`, `1.50`, `15e-1`).
fn same_value(a: &str, b: &str) -> bool {
    // Zero in any spelling is zero. Compared as decimals, `0e-999999999` would be rescaled
    // to `0.0`'s scale through a power of ten with a billion digits.
    let (a_zero, b_zero) = (!has_nonzero_mantissa(a), !has_nonzero_mantissa(b));
    if a_zero || b_zero {
        return a_zero && b_zero;
    }
    // Normalised (trailing zeros dropped), two equal values have the same digits and scale;
    // two different ones of one double are within a few digits of each other.
    match (BigDecimal::from_str(a), BigDecimal::from_str(b)) {
        (Ok(a), Ok(b)) => a.normalized() == b.normalized(),
        _ => false,
    }
}

/// What the double `value` of the decode in progress was sent as.
pub(super) fn text_of(value: f64) -> Text {
    SCOPE.with(|s| match &*s.borrow() {
        None => Text::Unknown,
        Some(Scope::Deferred) => Text::Deferred,
        Some(Scope::Texts(texts)) => match texts.by_bits.get(&value.to_bits()) {
            Some(Seen::One(text)) => Text::Sent(text.clone()),
            Some(Seen::Several) => Text::Several,
            // Not in this body (cannot happen for a row parsed from it): the shortest text.
            None => Text::Unknown,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts_of(json: &str) -> Arc<NumberTexts> {
        NumberTexts::scan(json.as_bytes())
    }

    #[test]
    fn doubles_are_found_by_their_bits_and_strings_and_small_integers_are_skipped() {
        let t = texts_of(
            r#"{"a": 0.1000000000000000001, "b": "1.25", "c": 7, "d": [-2.50, 1e2],
                "e": 100000000000000000001, "f": "\"3.5\\\" 4.5"}"#,
        );
        let scoped = |v: f64| NumberTexts::in_scope(Some(&t), || text_of(v));
        assert_eq!(scoped(0.1), Text::Sent("0.1000000000000000001".into()));
        assert_eq!(scoped(-2.5), Text::Sent("-2.50".into()));
        assert_eq!(scoped(100.0), Text::Sent("1e2".into()));
        assert_eq!(scoped(1e20), Text::Sent("100000000000000000001".into()));
        // Inside strings: not numbers of the body.
        assert_eq!(scoped(1.25), Text::Unknown);
        assert_eq!(scoped(3.5), Text::Unknown);
        assert_eq!(scoped(4.5), Text::Unknown);
        assert_eq!(text_of(0.1), Text::Unknown, "no scope outside");
        assert_eq!(NumberTexts::deferred(|| text_of(0.1)), Text::Deferred);
    }

    #[test]
    fn different_values_of_one_double_are_several_and_spellings_of_one_value_are_not() {
        let t = texts_of("[0.1, 0.1000000000000000001, 1.5, 1.50, 15e-1]");
        let scoped = |v: f64| NumberTexts::in_scope(Some(&t), || text_of(v));
        assert_eq!(scoped(0.1), Text::Several);
        assert_eq!(scoped(1.5), Text::Sent("1.5".into()));
        // Zero with an exponent of a billion is zero, and costs no rescaling to say so.
        let t = texts_of("[0.0, 0e-999999999]");
        let scoped = |v: f64| NumberTexts::in_scope(Some(&t), || text_of(v));
        assert_eq!(scoped(0.0), Text::Sent("0.0".into()));
    }

    #[test]
    fn merged_documents_keep_one_text_per_double_unless_their_values_differ() {
        let (a, b) = (
            texts_of("[0.1, 2.50]"),
            texts_of("[2.5, 0.100000000000000001]"),
        );
        let merged = NumberTexts::merged([&a, &b]).unwrap();
        let scoped = |v: f64| NumberTexts::in_scope(Some(&merged), || text_of(v));
        assert_eq!(scoped(2.5), Text::Sent("2.50".into()));
        assert_eq!(scoped(0.1), Text::Several);
        assert!(Arc::ptr_eq(&NumberTexts::merged([&a]).unwrap(), &a));
        assert_eq!(NumberTexts::merged([]), None);
    }

    #[test]
    fn a_scope_ends_with_its_decode_even_when_it_panics() {
        let t = texts_of("[2.5]");
        let outcome = std::panic::catch_unwind(|| {
            NumberTexts::in_scope(Some(&t), || panic!("decode failed"));
        });
        assert!(outcome.is_err());
        assert_eq!(text_of(2.5), Text::Unknown);
    }
}
