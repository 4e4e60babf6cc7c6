//! The one harness of the integration binaries: the gateway launcher ([`gateway`]), the lookup,
//! ingest and pool helpers, and (re-exported) the library's HTTP client and native fluss-rs
//! read-back, so a suite needs one `use crate::support::*`.

pub mod gateway;
pub mod ingest;
pub mod key_table;
pub mod lookup;
pub mod pool;

pub use gateway::{Gateway, records_url};
pub use integration_tests::http::{Answer, http, request_head, send, uuid_like};
pub use integration_tests::native::{
    assert_pk_rows, create_one_bucket_table as create_table, create_pk_table, log_rows_in_order,
    lookup, lookup_key, pk_schema, stored,
};
