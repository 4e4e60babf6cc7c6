//! Prefix lookups of one request on one cached table: which columns a table can serve prefix
//! lookups on, decoding every prefix first (400 naming the prefix index and column), then all
//! prefixes in flight at once, each answer capped at the request's rows per prefix.
//!
//! Fluss serves a prefix lookup from one bucket, so the prefix must pin the bucket: it is
//! exactly the table's bucket key (plus its partition columns, which pin the partition), and
//! that bucket key must be a proper leading part of the primary key. A table created without
//! such a bucket key cannot serve prefix lookups at all (400, saying why).

use std::sync::Arc;

use fluss_pool::{Deadline, PooledConnection, TableHandle};
use gateway_core::GatewayError;
use gateway_core::codec::RowRef;
use gateway_core::wire::PrefixLookupResult;

use super::common::{Claim, Keys, ensure_primary_key_table, ensure_settled_leaders, input_index};
use super::fanout::all_in_flight;

/// The key layout of a table, as prefix lookups need it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct KeyLayout<'a> {
    /// `database.table`, for messages.
    pub(crate) table: &'a str,
    /// Primary-key columns (partition columns included).
    pub(crate) primary_key: &'a [String],
    /// Bucket-key columns.
    pub(crate) bucket_key: &'a [String],
    /// Partition columns.
    pub(crate) partition_keys: &'a [String],
}

/// Checks `columns` (the request's `prefix_columns`) against `layout`: 400 when the table
/// cannot serve prefix lookups, or when `columns` is not its partition columns plus its bucket
/// key (bucket-key columns in key order; no repeats, nothing else). The message names the
/// columns expected.
pub(crate) fn check_prefix_columns(
    layout: &KeyLayout<'_>,
    columns: &[String],
) -> Result<(), GatewayError> {
    let is_partition = |c: &String| layout.partition_keys.contains(c);
    let physical: Vec<&String> = layout
        .primary_key
        .iter()
        .filter(|c| !is_partition(c))
        .collect();
    let bucket: Vec<&String> = layout.bucket_key.iter().collect();
    if bucket.is_empty() || bucket.len() >= physical.len() || !physical.starts_with(&bucket) {
        // Say how to get a table that can serve them, when its key has a proper prefix at all.
        let hint = match physical.first() {
            Some(first) if physical.len() > 1 => format!(
                " (create the table with a leading part of the key as bucket key, e.g. \
                 `\"distribution\":{{\"bucket_keys\":[\"{first}\"]}}`)"
            ),
            _ => " (a one-column key has no proper prefix)".to_owned(),
        };
        return Err(GatewayError::invalid(format!(
            "table `{}` cannot serve prefix lookups: its bucket key {} is not a proper leading \
             part of its primary key {}{hint}",
            layout.table,
            list(layout.bucket_key.iter()),
            list(physical.iter().copied()),
        )));
    }
    let expected: Vec<&String> = layout
        .partition_keys
        .iter()
        .chain(bucket.iter().copied())
        .collect();
    let in_bucket_order: Vec<&String> = columns.iter().filter(|c| !is_partition(c)).collect();
    let mut seen = std::collections::HashSet::new();
    let valid = columns.len() == expected.len()
        && columns
            .iter()
            .all(|c| seen.insert(c) && expected.contains(&c))
        && in_bucket_order == bucket;
    if valid {
        Ok(())
    } else {
        let what = if layout.partition_keys.is_empty() {
            "its bucket key"
        } else {
            "its partition columns and its bucket key, in bucket-key order"
        };
        Err(GatewayError::invalid(format!(
            "`prefix_columns` must be {} for table `{}` ({what}); got {}",
            list(expected.iter().copied()),
            layout.table,
            list(columns.iter()),
        )))
    }
}

/// `[a, b]` with backquoted names.
fn list<'a>(names: impl Iterator<Item = &'a String>) -> String {
    let names: Vec<String> = names.map(|n| format!("`{n}`")).collect();
    format!("[{}]", names.join(", "))
}

/// Runs the prefix lookups of a request on `handle`: at most `max_rows` rows per prefix, with
/// `truncated` set when more matched. `Err` fails the whole request; so does a bucket leader
/// change of the table moments ago (503: a listing then may lack acknowledged rows).
pub(crate) async fn lookup_prefixes(
    conn: &PooledConnection,
    handle: &Arc<TableHandle>,
    columns: &[String],
    prefixes: Keys<'_>,
    max_rows: usize,
    deadline: &Deadline,
) -> Result<Vec<PrefixLookupResult>, GatewayError> {
    ensure_primary_key_table(handle)?;
    let info = handle.info();
    let table = handle.path().to_string();
    check_prefix_columns(
        &KeyLayout {
            table: &table,
            primary_key: &info.primary_keys,
            bucket_key: &info.bucket_keys,
            partition_keys: &info.partition_keys,
        },
        columns,
    )?;
    let codec = handle.codec();
    // Every name was checked against the key columns above.
    let positions: Vec<usize> = columns
        .iter()
        .filter_map(|c| codec.column_position(c))
        .collect();
    let rows = prefixes
        .decode(|(i, prefix)| codec.decode_columns(RowRef::Prefix(i), prefix, &positions))?;
    // Made before any task starts, so all prefixes reach fluss-rs's queue in one window.
    let lookupers = rows
        .iter()
        .map(|_| handle.prefix_lookuper(columns))
        .collect::<Result<Vec<_>, _>>()?;
    let answers = all_in_flight(
        conn,
        deadline,
        lookupers.into_iter().zip(rows).collect(),
        |(mut lookuper, prefix)| {
            let handle = handle.clone();
            async move {
                let result = lookuper.lookup(&prefix).await?;
                let rows = result.get_rows()?;
                let truncated = rows.len() > max_rows;
                let encoded = rows
                    .iter()
                    .take(max_rows)
                    .map(|row| handle.codec().encode(row))
                    .collect::<Result<Vec<_>, _>>()?;
                Ok((encoded, truncated))
            }
        },
    )
    .await?;
    ensure_settled_leaders(conn, handle, Claim::Listing)?;
    Ok(answers
        .into_iter()
        .enumerate()
        .map(|(i, (rows, truncated))| PrefixLookupResult {
            input_index: input_index(i),
            row_count: input_index(rows.len()),
            truncated,
            rows,
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    fn check(pk: &[&str], bucket: &[&str], parts: &[&str], cols: &[&str]) -> Result<(), String> {
        let (pk, bucket, parts) = (names(pk), names(bucket), names(parts));
        check_prefix_columns(
            &KeyLayout {
                table: "db.t",
                primary_key: &pk,
                bucket_key: &bucket,
                partition_keys: &parts,
            },
            &names(cols),
        )
        .map_err(|e| e.message().to_owned())
    }

    #[test]
    fn the_bucket_key_is_the_prefix() {
        assert_eq!(
            check(&["tenant", "id"], &["tenant"], &[], &["tenant"]),
            Ok(())
        );
        assert_eq!(
            check(&["a", "b", "c"], &["a", "b"], &[], &["a", "b"]),
            Ok(())
        );
    }

    #[test]
    fn partition_columns_are_part_of_the_prefix_in_any_position() {
        let pk = ["dt", "tenant", "id"];
        assert_eq!(check(&pk, &["tenant"], &["dt"], &["dt", "tenant"]), Ok(()));
        assert_eq!(check(&pk, &["tenant"], &["dt"], &["tenant", "dt"]), Ok(()));
        let e = check(&pk, &["tenant"], &["dt"], &["tenant"]).unwrap_err();
        assert!(e.contains("must be [`dt`, `tenant`]"), "{e}");
        assert!(e.contains("partition columns"), "{e}");
    }

    #[test]
    fn other_column_lists_are_rejected_naming_the_expected_columns() {
        let pk = ["a", "b", "c"];
        for cols in [
            &["a"][..],
            &["b", "a"],
            &["a", "b", "c"],
            &["a", "a"],
            &["a", "x"],
            &[],
        ] {
            let e = check(&pk, &["a", "b"], &[], cols).unwrap_err();
            assert!(
                e.contains("must be [`a`, `b`] for table `db.t`"),
                "{cols:?}: {e}"
            );
        }
    }

    #[test]
    fn a_table_bucketed_by_its_whole_key_cannot_serve_prefix_lookups() {
        for bucket in [&["id", "v"][..], &["v"], &[]] {
            let e = check(&["id", "v"], bucket, &[], &["id"]).unwrap_err();
            assert!(e.contains("cannot serve prefix lookups"), "{bucket:?}: {e}");
            assert!(e.contains("primary key [`id`, `v`]"), "{e}");
        }
        let e = check(&["id"], &["id"], &[], &["id"]).unwrap_err();
        assert!(e.contains("a one-column key has no proper prefix"), "{e}");
        let e = check(&["id", "v"], &["id", "v"], &[], &["id"]).unwrap_err();
        assert!(e.contains(r#""bucket_keys":["id"]"#), "{e}");
        // Partition columns are not part of the physical key the bucket key must lead.
        let e = check(&["dt", "id"], &["id"], &["dt"], &["dt", "id"]).unwrap_err();
        assert!(e.contains("cannot serve prefix lookups"), "{e}");
    }
}
