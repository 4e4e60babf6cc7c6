//! The redaction policy: which configuration values never leave the gateway in clear, whatever
//! path they take (a cluster config describe, a config echo, a log line). Pure policy, shared by
//! every crate that shows configuration.

/// What a sensitive value is replaced with, everywhere (config echoes, described configs).
pub const REDACTED: &str = "******";

/// Fragments that make a key sensitive when found anywhere in it, matched after lower-casing
/// the key and removing `-` and `_` (so `accessKeyId`, `access-key` and `access_key` all hit
/// `accesskey`).
const SENSITIVE_FRAGMENTS: [&str; 10] = [
    "jaas",
    "password",
    "passwd",
    "secret",
    "credential",
    "token",
    "keystore",
    "truststore",
    "accesskey",
    "privatekey",
];

/// Whether `key` names a config whose value must never leave the gateway in clear.
///
/// The rule: lower-case the key and drop `-` and `_`; the key is sensitive when it contains
/// one of `jaas`, `password`, `passwd`, `secret`, `credential`, `token`, `keystore`,
/// `truststore`, `accesskey`, `privatekey`, or when one of its dot-separated segments ends
/// with `key` (key material such as `ssl.key`, `s3.secret-key`, `oss.access-key`). The rule
/// errs towards hiding: a harmless value shown as `******` costs a look at the server's
/// file, a leaked password costs a rotation.
pub fn is_sensitive_config_key(key: &str) -> bool {
    let normalised: String = key
        .chars()
        .filter(|c| *c != '-' && *c != '_')
        .flat_map(char::to_lowercase)
        .collect();
    SENSITIVE_FRAGMENTS.iter().any(|f| normalised.contains(f))
        || normalised
            .split('.')
            .any(|segment| segment.ends_with("key"))
}

/// Whether `value` carries a password of its own, whatever its key: a URL with a password in
/// its user info (`scheme://user:password@host`), as JDBC or metastore URIs may.
pub fn has_embedded_password(value: &str) -> bool {
    value.match_indices("://").any(|(at, sep)| {
        let rest = &value[at + sep.len()..];
        let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
        authority
            .rsplit_once('@')
            .is_some_and(|(user_info, _)| user_info.contains(':'))
    })
}

/// The value of `key` as callers may see it: [`REDACTED`] when [`is_sensitive_config_key`] or
/// [`has_embedded_password`] holds, else unchanged. A missing value stays missing (there is
/// nothing to hide, and the absence is useful).
pub fn redact_config_value(key: &str, value: Option<String>) -> Option<String> {
    value.map(|v| {
        if is_sensitive_config_key(key) || has_embedded_password(&v) {
            REDACTED.to_owned()
        } else {
            v
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sensitive_keys_and_embedded_passwords_are_redacted() {
        for key in [
            "security.sasl.plain.jaas.config",
            "s3.secret-key",
            "ssl.key",
            "oss.accessKeyId",
        ] {
            assert_eq!(
                redact_config_value(key, Some("v".into())).as_deref(),
                Some(REDACTED),
                "{key}"
            );
        }
        assert_eq!(
            redact_config_value("datalake.uri", Some("jdbc://u:pw@h/db".into())).as_deref(),
            Some(REDACTED)
        );
        assert_eq!(
            redact_config_value("default.bucket.number", Some("3".into())).as_deref(),
            Some("3")
        );
        assert_eq!(redact_config_value("x.password", None), None);
    }
}
