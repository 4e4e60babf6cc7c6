//! [arrow] Columnar writes: real `pyarrow` and `polars` clients (from PyPI) write Arrow IPC
//! streams through the write route (`tests/arrow/arrow_write.py`), and every row is read back
//! from Fluss through the gateway equal to what was sent; lookups answer Arrow too; hostile
//! streams are refused with nothing written.

use std::time::Duration;

use crate::support::Gateway;
use integration_tests::{Stack, unique_name};
use serde_json::Value;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pyarrow_and_polars_write_arrow_streams_read_back_equal_and_hostile_streams_write_nothing()
{
    let stack = Stack::load();
    let gw = Gateway::all_families(&stack, &[]).await;
    let base = format!("http://{}", gw.addr);
    let suffix = unique_name("w");
    let stdout = integration_tests::run_python(
        "tests/arrow/arrow_write.py",
        &[&base, "arrow_it", &suffix],
        &[],
        Duration::from_secs(240),
    )
    .await;
    let summary: Value =
        serde_json::from_str(stdout.lines().last().unwrap_or_default()).expect("summary");
    println!("[arrow] {summary}");
    assert_eq!(summary["every_type"]["equal"], true, "{summary}");
    assert_eq!(summary["every_type"]["rows"], 60);
    assert_eq!(summary["polars"]["equal"], true, "{summary}");
    assert_eq!(summary["primary_key"]["equal"], true, "{summary}");
    assert_eq!(summary["primary_key"]["arrow_lookup_rows"], 90, "{summary}");
    let hostile = summary["hostile"].as_object().expect("hostile cases");
    assert_eq!(hostile.len(), 6, "{summary}");
    for (case, answer) in hostile {
        let status = answer["status"].as_u64().expect("status");
        assert!((400..500).contains(&status), "{case}: {answer}");
    }
}
