//! Readiness probe of the local stack: exits 0 once real Fluss client calls succeed over both
//! listeners (a TabletServer is registered and the SASL admin can list databases), else 1.
//! `infra/local/stack.py start` polls it.
//!
//! `fluss-probe grant USER database|table NAME` gives the SASL user USER every operation on the
//! database (or `db.table`) NAME, as the local super user: how `make run` lets `alice` write to
//! the demo database and nothing else.

use fluss::{ServerNode, ServerType};
use integration_tests::{Stack, bounded};

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let outcome = match args.as_slice() {
        [] => probe().await,
        [cmd, user, kind, name] if cmd == "grant" => grant(user, kind, name).await,
        _ => Err("usage: fluss-probe [grant USER database|table NAME]".to_owned()),
    };
    match outcome {
        Ok(summary) => {
            println!("{summary}");
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("not ready: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn probe() -> Result<String, String> {
    let stack = Stack::load();
    let plain =
        integration_tests::connect(stack.client_config(integration_tests::Listener::Plaintext))
            .await
            .map_err(|e| format!("plaintext connect: {e}"))?;
    let nodes: Vec<ServerNode> = bounded("get_server_nodes", async {
        plain.get_admin()?.get_server_nodes().await
    })
    .await
    .map_err(|e| format!("get_server_nodes: {e}"))?;
    let tablets = nodes
        .iter()
        .filter(|n| matches!(n.server_type(), ServerType::TabletServer))
        .count();
    // `infra/local/stack.py` says how many TabletServers its shape runs (1 when unset).
    let wanted = std::env::var("FLUSS_PROBE_TABLETS")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(1)
        .max(1);
    if tablets < wanted {
        return Err(format!(
            "{tablets} of {wanted} TabletServers registered yet"
        ));
    }
    let sasl = stack
        .connect_sasl("admin", stack.sasl_password("admin"))
        .await
        .map_err(|e| format!("SASL connect: {e}"))?;
    let dbs = bounded("list_databases", async {
        sasl.get_admin()?.list_databases().await
    })
    .await
    .map_err(|e| format!("SASL list_databases: {e}"))?;
    Ok(format!(
        "ready: Fluss {}, {} server nodes ({tablets} tablet), {} databases",
        stack.fluss_version(),
        nodes.len(),
        dbs.len()
    ))
}

async fn grant(user: &str, kind: &str, name: &str) -> Result<String, String> {
    use fluss::metadata::{AclInfo, OperationType, PermissionType, ResourceType};
    let resource_type = match kind {
        "database" => ResourceType::Database,
        "table" => ResourceType::Table,
        _ => return Err(format!("resource kind `{kind}` is not database or table")),
    };
    let stack = Stack::load();
    let conn =
        integration_tests::connect(stack.client_config(integration_tests::Listener::Plaintext))
            .await
            .map_err(|e| format!("plaintext connect: {e}"))?;
    let acl = AclInfo {
        resource_name: name.to_owned(),
        resource_type,
        principal_name: user.to_owned(),
        principal_type: "User".to_owned(),
        host: "*".to_owned(),
        operation_type: OperationType::All,
        permission_type: PermissionType::Allow,
    };
    let results = bounded("create_acls", async {
        conn.get_admin()?.create_acls(vec![acl]).await
    })
    .await
    .map_err(|e| format!("create_acls: {e}"))?;
    // fluss-rs reports success as an error with code 0.
    match results
        .iter()
        .find_map(|r| r.error.as_ref().filter(|e| e.code != 0))
    {
        Some(e) => Err(format!("create_acls refused: code {}", e.code)),
        None => Ok(format!("granted ALL on {kind} {name} to User:{user}")),
    }
}
