//! The entry a write body decodes into ([`DecodedEntry`]), apart from the parent module so that
//! the seeds that build it (`body`) never depend back on the decoder that runs them.

use fluss::row::GenericRow;

use crate::wire::WriteOp;

/// One write entry decoded against the table: its id, its operation and its row. The row may
/// borrow its string values from the body it was decoded from (`'body`): copying each into a
/// `String` of its own, then freeing it once the row is submitted, was a tenth of the decoder's
/// work on rows with a few string columns.
#[derive(Debug, Clone, PartialEq)]
pub struct DecodedEntry<'body> {
    /// The caller's id, echoed in the outcome.
    pub id: String,
    /// The operation, already checked against the table's kind.
    pub op: WriteOp,
    /// The row: every column for append and upsert (the target columns of a partial update),
    /// the key columns for delete.
    pub row: GenericRow<'body>,
}
