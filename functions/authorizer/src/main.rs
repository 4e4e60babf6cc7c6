//! `fluss-authorizer`: the API Gateway HTTP API REQUEST authorizer of the Fluss Lambda Gateway
//! (simple responses). Checks the API key (`x-api-key` / `Authorization: Bearer`) or Basic user
//! against the Secrets Manager document; route functions in `authorizer` mode read the context
//! it returns. Configuration comes from the environment (`FLUSS_GATEWAY__SECURITY__…`).

mod app;

use gateway_runtime::run_function;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    run_function("fluss-authorizer", |env| async move {
        app::authorizer_app(&env).await
    })
    .await
}
