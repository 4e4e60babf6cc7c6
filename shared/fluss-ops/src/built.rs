//! Rows their producer built in a table's column order (the OTLP receiver's), handed to the
//! write path as they are: [`crate::write::append_rows`].

use std::sync::Mutex;

use fluss::metadata::RowType;
use fluss::row::GenericRow;
use gateway_core::GatewayError;

/// [`BuiltRows`] as a write of a shorter lifetime takes them.
pub trait TakeRows<'w>: Sync {
    /// The row type the rows were built for.
    fn row_type(&self) -> &RowType;
    /// The rows, handed over once, built again after that.
    fn take(&self) -> Result<Vec<GenericRow<'w>>, GatewayError>;
}

impl std::fmt::Debug for dyn TakeRows<'_> + '_ {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TakeRows")
    }
}

/// Makes a table's built rows again.
pub type Rebuild<'a, 'r> = &'r (dyn Fn() -> Result<Vec<GenericRow<'a>>, GatewayError> + Sync);

/// Rows their producer built in a table's column order, for [`crate::write::append_rows`]:
/// appended as they are when the table's row type is the one they were built for
/// (`RowCodec::append_rows`). They are handed over once; a resend gets them from `rebuild`.
pub struct BuiltRows<'a, 'r> {
    rows: Mutex<Option<Vec<GenericRow<'a>>>>,
    len: usize,
    row_type: &'r RowType,
    rebuild: Rebuild<'a, 'r>,
}

impl std::fmt::Debug for BuiltRows<'_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BuiltRows").field("len", &self.len).finish()
    }
}

impl<'a, 'r> BuiltRows<'a, 'r> {
    /// `rows` built for `row_type`; `rebuild` makes the same rows again.
    pub fn new(rows: Vec<GenericRow<'a>>, row_type: &'r RowType, rebuild: Rebuild<'a, 'r>) -> Self {
        BuiltRows {
            len: rows.len(),
            rows: Mutex::new(Some(rows)),
            row_type,
            rebuild,
        }
    }

    /// How many rows.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl<'w, 'a: 'w, 'r: 'w> TakeRows<'w> for BuiltRows<'a, 'r> {
    fn row_type(&self) -> &RowType {
        self.row_type
    }

    fn take(&self) -> Result<Vec<GenericRow<'w>>, GatewayError> {
        let taken = self.rows.lock().ok().and_then(|mut rows| rows.take());
        taken.map_or_else(|| (self.rebuild)(), Ok)
    }
}
