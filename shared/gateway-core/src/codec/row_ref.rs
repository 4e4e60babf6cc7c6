//! Which row of a request a value belongs to ([`RowRef`]): the words every decoding error
//! starts with. A leaf: the decoder and its value errors both name rows with it.

use std::fmt;

/// Which row of a request a value belongs to, for error messages.
#[derive(Debug, Clone, Copy)]
pub enum RowRef<'a> {
    /// A write entry, by its caller-chosen id.
    Entry(&'a str),
    /// A lookup key, by its index in the request.
    Key(usize),
    /// A prefix-lookup prefix, by its index in the request.
    Prefix(usize),
}

impl fmt::Display for RowRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RowRef::Entry(id) => write!(f, "entry `{id}`"),
            RowRef::Key(i) => write!(f, "key {i}"),
            RowRef::Prefix(i) => write!(f, "prefix {i}"),
        }
    }
}
