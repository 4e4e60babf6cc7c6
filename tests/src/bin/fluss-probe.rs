//! Readiness probe of the local stack: exits 0 once real Fluss client calls succeed over both
//! listeners (a TabletServer is registered and the SASL admin can list databases), else 1.
//! `infra/local/stack.py start` polls it.

use fluss::{ServerNode, ServerType};
use integration_tests::{Stack, bounded};

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::process::ExitCode {
    match probe().await {
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
    if tablets == 0 {
        return Err("no TabletServer registered yet".into());
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
