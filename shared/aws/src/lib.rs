//! AWS clients built from a function's environment, and where secrets come from: AWS Secrets
//! Manager through the AWS SDK (the endpoint, region and
//! credentials from the standard environment, so moto serves local runs and tests through
//! `AWS_ENDPOINT_URL_SECRETS_MANAGER` or `AWS_ENDPOINT_URL`).

// A unit test may be one long table of cases; production functions keep to clippy.toml's limit.
#![cfg_attr(test, allow(clippy::too_many_lines))]

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use aws_sdk_secretsmanager::Client;
use aws_smithy_http_client::tls::{self, rustls_provider::CryptoMode};
use tokio::sync::OnceCell;

/// Why a secret could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SourceError {
    /// No secret by that id (or no permission to see it).
    NotFound,
    /// The secret exists but could not be read now (network, throttling, credentials).
    Unavailable(String),
}

/// The future a [`SecretSource`] answers with.
pub type Fetch<'a> = Pin<Box<dyn Future<Output = Result<String, SourceError>> + Send + 'a>>;

/// Reads a secret's current string value by id.
pub trait SecretSource: Send + Sync {
    /// The `SecretString` of `secret_id`'s current version.
    fn fetch<'a>(&'a self, secret_id: &'a str) -> Fetch<'a>;
}

/// Secrets Manager, with a client built on first use (building reads the environment and, in
/// Lambda, needs no network; deferring it keeps start-up synchronous).
#[derive(Debug, Default)]
pub struct SecretsManager {
    client: OnceCell<Client>,
    overrides: AwsOverrides,
}

/// The standard AWS variables found in a function's configuration map, applied over the SDK's
/// own environment reading: a gateway built from a map (a test, a tool) talks to the endpoint
/// that map names without the process environment being changed.
#[derive(Debug, Default, Clone)]
pub struct AwsOverrides {
    endpoint: Option<String>,
    region: Option<String>,
    access_key: Option<(String, String, Option<String>)>,
}

/// The bounds of every AWS call the gateway makes (Secrets Manager, DynamoDB, STS for
/// credentials): the SDK sets none by default, so an endpoint that accepts connections and
/// never answers (a frozen process, a black-holed route) would hold a request forever.
/// Callers on a request path bound the call by the request's deadline too.
#[derive(Debug, Clone, Copy)]
pub struct AwsTimeouts {
    /// TCP and TLS connect.
    pub connect: Duration,
    /// Waiting for the first byte of an answer (and between reads).
    pub read: Duration,
    /// One attempt, connect to last byte.
    pub attempt: Duration,
    /// The whole operation, retries included.
    pub operation: Duration,
}

/// What [`AwsOverrides::sdk_config`] applies: an AWS API answers in tens of milliseconds, so a
/// second to connect and two to answer leave room for a cold TLS handshake and throttling
/// retries while a 30 s request deadline still has most of its time left.
pub const AWS_TIMEOUTS: AwsTimeouts = AwsTimeouts {
    connect: Duration::from_secs(1),
    read: Duration::from_secs(2),
    attempt: Duration::from_secs(2),
    operation: Duration::from_secs(4),
};

impl AwsTimeouts {
    /// The SDK's form.
    pub fn config(&self) -> aws_config::timeout::TimeoutConfig {
        aws_config::timeout::TimeoutConfig::builder()
            .connect_timeout(self.connect)
            .read_timeout(self.read)
            .operation_attempt_timeout(self.attempt)
            .operation_timeout(self.operation)
            .build()
    }
}

impl AwsOverrides {
    /// The endpoint (the first of `endpoint_vars` set, else `AWS_ENDPOINT_URL`), region
    /// (`AWS_REGION`, else `AWS_DEFAULT_REGION`) and static credentials (`AWS_ACCESS_KEY_ID`,
    /// `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`) that `env` sets.
    pub fn from_map(
        env: &std::collections::BTreeMap<String, String>,
        endpoint_vars: &[&str],
    ) -> Self {
        let get = |k: &str| env.get(k).filter(|v| !v.is_empty()).cloned();
        AwsOverrides {
            endpoint: endpoint_vars
                .iter()
                .find_map(|k| get(k))
                .or_else(|| get("AWS_ENDPOINT_URL")),
            region: get("AWS_REGION").or_else(|| get("AWS_DEFAULT_REGION")),
            access_key: get("AWS_ACCESS_KEY_ID")
                .zip(get("AWS_SECRET_ACCESS_KEY"))
                .map(|(id, secret)| (id, secret, get("AWS_SESSION_TOKEN"))),
        }
    }

    /// The SDK configuration: the standard AWS environment with these overrides, over an HTTPS
    /// client using ring (the crypto fluss-rs already links; the SDK's default would add
    /// aws-lc), with [`AWS_TIMEOUTS`]. Every AWS client of the gateway is built from it.
    pub async fn sdk_config(&self) -> aws_config::SdkConfig {
        let http = aws_smithy_http_client::Builder::new()
            .tls_provider(tls::Provider::Rustls(CryptoMode::Ring))
            .build_https();
        let mut loader = aws_config::defaults(aws_config::BehaviorVersion::latest())
            .http_client(http)
            .timeout_config(AWS_TIMEOUTS.config());
        if let Some(endpoint) = &self.endpoint {
            loader = loader.endpoint_url(endpoint);
        }
        if let Some(region) = &self.region {
            loader = loader.region(aws_config::Region::new(region.clone()));
        }
        if let Some((id, secret, token)) = &self.access_key {
            loader = loader.credentials_provider(aws_sdk_secretsmanager::config::Credentials::new(
                id,
                secret,
                token.clone(),
                None,
                "gateway-configuration",
            ));
        }
        loader.load().await
    }
}

impl SecretsManager {
    /// A source whose client is built from the process environment on first use.
    pub fn new() -> Self {
        SecretsManager::default()
    }

    /// A source whose client takes the endpoint (`AWS_ENDPOINT_URL_SECRETS_MANAGER`, else
    /// `AWS_ENDPOINT_URL`), region (`AWS_REGION`) and static credentials
    /// (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`) from `env` where
    /// set, and everything else from the SDK's usual sources.
    pub fn from_map(env: &std::collections::BTreeMap<String, String>) -> Self {
        SecretsManager {
            client: OnceCell::new(),
            overrides: AwsOverrides::from_map(env, &["AWS_ENDPOINT_URL_SECRETS_MANAGER"]),
        }
    }

    /// The SDK client (built once).
    pub async fn client(&self) -> &Client {
        self.client
            .get_or_init(|| async { Client::new(&self.overrides.sdk_config().await) })
            .await
    }
}

impl SecretSource for SecretsManager {
    fn fetch<'a>(&'a self, secret_id: &'a str) -> Fetch<'a> {
        Box::pin(async move {
            let out = self
                .client()
                .await
                .get_secret_value()
                .secret_id(secret_id)
                .send()
                .await
                .map_err(|e| {
                    use aws_sdk_secretsmanager::operation::get_secret_value::GetSecretValueError as E;
                    match e.as_service_error() {
                        Some(E::ResourceNotFoundException(_)) => SourceError::NotFound,
                        // The SDK's error text names the operation and the HTTP status, never
                        // the secret value.
                        _ => SourceError::Unavailable(
                            aws_sdk_secretsmanager::error::DisplayErrorContext(&e).to_string(),
                        ),
                    }
                })?;
            out.secret_string
                .ok_or_else(|| SourceError::Unavailable("the secret has no string value".into()))
        })
    }
}

impl SecretsManager {
    /// The current document text of `secret_id`, or `None` when the secret does not exist
    /// (for the key tool, which creates it).
    pub async fn read_optional(&self, secret_id: &str) -> Result<Option<String>, String> {
        match self.fetch(secret_id).await {
            Ok(text) => Ok(Some(text)),
            Err(SourceError::NotFound) => Ok(None),
            Err(SourceError::Unavailable(why)) => Err(why),
        }
    }

    /// Stores `text` as the new current version of `secret_id`, creating the secret when it
    /// does not exist. The previous version stays in Secrets Manager as `AWSPREVIOUS`.
    pub async fn write(&self, secret_id: &str, text: &str, create: bool) -> Result<(), String> {
        let client = self.client().await;
        if create {
            client
                .create_secret()
                .name(secret_id)
                .description("Fluss Lambda Gateway API keys and users (hashes only)")
                .secret_string(text)
                .send()
                .await
                .map_err(|e| aws_sdk_secretsmanager::error::DisplayErrorContext(&e).to_string())
                .map(|_| ())
        } else {
            client
                .put_secret_value()
                .secret_id(secret_id)
                .secret_string(text)
                .send()
                .await
                .map_err(|e| aws_sdk_secretsmanager::error::DisplayErrorContext(&e).to_string())
                .map(|_| ())
        }
    }
}
