//! The `gateway.security.*` keys: the authentication mode and where the key document lives.

use std::collections::BTreeMap;

use gateway_core::GatewayError;
use gateway_core::settings::{self, Slot};

use crate::store::StoreSettings;

pub use gateway_core::settings::keys::security::{
    AUTHENTICATION_KEY, CACHE_TTL_KEY, MAX_STALE_KEY, REFRESH_INTERVAL_KEY, REFRESH_TIMEOUT_KEY,
    SECRET_ID_KEY,
};

/// Set by the Lambda service and by `cargo lambda watch`.
const LAMBDA_RUNTIME_API_ENV: &str = "AWS_LAMBDA_RUNTIME_API";

/// How callers are authenticated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Everyone, anonymously, as the service account (the default outside `make run`).
    Trust,
    /// API keys in `x-api-key` or `Authorization: Bearer`.
    ApiKey,
    /// HTTP Basic users.
    Password,
    /// A Lambda authorizer checked the key; the route reads its context.
    Authorizer,
}

impl Mode {
    /// The configuration spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Trust => "trust",
            Mode::ApiKey => "api-key",
            Mode::Password => "password",
            Mode::Authorizer => "authorizer",
        }
    }
}

/// The parsed `gateway.security.*` keys.
#[derive(Debug, Clone)]
pub struct AuthSettings {
    /// The mode.
    pub mode: Mode,
    /// Where the key document is, when a secret id is set.
    pub store: Option<StoreSettings>,
}

impl AuthSettings {
    /// Reads and checks the keys (either form); every problem at once, by key.
    pub fn from_map(map: &BTreeMap<String, String>) -> Result<Self, GatewayError> {
        let mut mode_text = "trust".to_owned();
        let mut secret_id = String::new();
        let mut ttl = StoreSettings::new("").ttl;
        let defaults = StoreSettings::new("");
        let mut refresh_interval = defaults.refresh_interval;
        let mut max_stale = defaults.max_stale;
        let mut refresh_timeout = defaults.refresh_timeout;
        settings::read(
            map,
            &["gateway.security."],
            &mut [
                (AUTHENTICATION_KEY, Slot::Text(&mut mode_text)),
                (SECRET_ID_KEY, Slot::Text(&mut secret_id)),
                (
                    CACHE_TTL_KEY,
                    Slot::Duration {
                        slot: &mut ttl,
                        allow_zero: false,
                    },
                ),
                (
                    REFRESH_INTERVAL_KEY,
                    Slot::Duration {
                        slot: &mut refresh_interval,
                        allow_zero: false,
                    },
                ),
                (
                    MAX_STALE_KEY,
                    Slot::Duration {
                        slot: &mut max_stale,
                        allow_zero: true,
                    },
                ),
                (
                    REFRESH_TIMEOUT_KEY,
                    Slot::Duration {
                        slot: &mut refresh_timeout,
                        allow_zero: false,
                    },
                ),
            ],
            "security",
        )?;
        let problem = |p: String| {
            Err(GatewayError::invalid(format!(
                "invalid security configuration: {p}"
            )))
        };
        let mode = match mode_text.to_ascii_lowercase().as_str() {
            "trust" => Mode::Trust,
            "api-key" => Mode::ApiKey,
            "password" => Mode::Password,
            "authorizer" => Mode::Authorizer,
            "token" => {
                return problem(format!(
                    "`{AUTHENTICATION_KEY}`: `token` is spelled `api-key` here (keys kept hashed in Secrets Manager)"
                ));
            }
            other => {
                return problem(format!(
                    "`{AUTHENTICATION_KEY}`: {} is not one of trust, api-key, password, authorizer",
                    gateway_core::names::shown(other)
                ));
            }
        };
        if matches!(mode, Mode::ApiKey | Mode::Password) && secret_id.is_empty() {
            return problem(format!(
                "`{SECRET_ID_KEY}`: required when `{AUTHENTICATION_KEY}` is `{}`",
                mode.as_str()
            ));
        }
        if mode == Mode::Authorizer && !map.contains_key(LAMBDA_RUNTIME_API_ENV) {
            return problem(format!(
                "`{AUTHENTICATION_KEY}`: `authorizer` trusts the request context API Gateway sets, so it runs only in Lambda ({LAMBDA_RUNTIME_API_ENV} is not set)"
            ));
        }
        if refresh_interval > ttl {
            return problem(format!(
                "`{REFRESH_INTERVAL_KEY}`: must not exceed `{CACHE_TTL_KEY}`"
            ));
        }
        let store = (!secret_id.is_empty()).then_some(StoreSettings {
            secret_id,
            ttl,
            refresh_interval,
            max_stale,
            refresh_timeout,
        });
        Ok(AuthSettings { mode, store })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gateway_core::settings::map_of;
    use std::time::Duration;

    #[test]
    fn modes_and_their_requirements() {
        let s = AuthSettings::from_map(&map_of(&[])).unwrap();
        assert_eq!(s.mode, Mode::Trust);
        assert!(s.store.is_none());
        let s = AuthSettings::from_map(&map_of(&[
            ("FLUSS_GATEWAY__SECURITY__AUTHENTICATION", "api-key"),
            ("FLUSS_GATEWAY__SECURITY__SECRET_ID", "gw/keys"),
            ("gateway.security.cache-ttl", "5s"),
        ]))
        .unwrap();
        assert_eq!(s.mode, Mode::ApiKey);
        assert_eq!(s.store.unwrap().ttl, Duration::from_secs(5));
        for (env, needle) in [
            (
                vec![(AUTHENTICATION_KEY, "api-key")],
                "secret-id`: required",
            ),
            (vec![(AUTHENTICATION_KEY, "kerberos")], "not one of"),
            (vec![(AUTHENTICATION_KEY, "token")], "spelled `api-key`"),
            (vec![(AUTHENTICATION_KEY, "authorizer")], "only in Lambda"),
            (vec![("gateway.security.secret-idd", "x")], "did you mean"),
            (
                vec![
                    (SECRET_ID_KEY, "x"),
                    (CACHE_TTL_KEY, "1s"),
                    (REFRESH_INTERVAL_KEY, "2s"),
                ],
                "must not exceed",
            ),
        ] {
            let e = AuthSettings::from_map(&map_of(&env)).unwrap_err();
            assert!(e.message().contains(needle), "{env:?}: {}", e.message());
        }
        let lambda = map_of(&[
            (AUTHENTICATION_KEY, "authorizer"),
            ("AWS_LAMBDA_RUNTIME_API", "127.0.0.1:9001"),
        ]);
        assert_eq!(
            AuthSettings::from_map(&lambda).unwrap().mode,
            Mode::Authorizer
        );
    }
}
