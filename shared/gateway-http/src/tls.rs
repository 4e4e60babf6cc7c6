//! HTTPS for the standalone server, configured with the Fluss Gateway's keys: a named TLS
//! profile (`gateway.tls.profile.<name>.certificate-file`, `.private-key-file`,
//! `.handshake-timeout`) that `gateway.rest.tls.profile` selects. Beyond the official server,
//! the certificate and key are read again when their files change (`.reload-interval`), so a
//! rotated certificate (cert-manager, ACME) is served without a restart; a pair that does not
//! load keeps the one in service and says so once.
//!
//! A plain HTTP request on the TLS port is answered 400 with the reason, not a silent close.
//!
//! Refuses: client certificates and HTTP/2 (ALPN offers `http/1.1` only, as the server speaks).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use std::time::{Duration, SystemTime};

use gateway_core::GatewayError;
use gateway_core::settings::keys::tls::{
    CERTIFICATE_FILE, HANDSHAKE_TIMEOUT, PRIVATE_KEY_FILE, PROFILE_KEY_PREFIX, PROFILES_KEY,
    RELOAD_INTERVAL, REST_TLS_PROFILE_KEY,
};
use gateway_core::settings::{self, Slot, named};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use tokio_rustls::server::TlsStream;

/// Default time a client has to complete its TLS handshake (as the Fluss Gateway).
pub const DEFAULT_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(5);
/// Default interval between checks of the certificate and key files for a change.
pub const DEFAULT_RELOAD_INTERVAL: Duration = Duration::from_secs(10);

/// The first byte of every TLS connection: a handshake record.
const TLS_HANDSHAKE_RECORD: u8 = 0x16;

/// The TLS profile the REST listener serves with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsSettings {
    /// The profile's name, for messages.
    pub profile: String,
    /// PEM certificate chain, end-entity certificate first.
    pub certificate_file: PathBuf,
    /// PEM private key (PKCS#8, PKCS#1 or SEC1).
    pub private_key_file: PathBuf,
    /// A client that has not completed its handshake by then is disconnected.
    pub handshake_timeout: Duration,
    /// How often the two files are checked for a change; zero never checks.
    pub reload_interval: Duration,
}

/// One profile's settings as read, before the selected one is checked for completeness.
#[derive(Default)]
struct ProfileKeys {
    certificate_file: String,
    private_key_file: String,
    handshake_timeout: Option<Duration>,
    reload_interval: Option<Duration>,
}

impl TlsSettings {
    /// The profile `gateway.rest.tls.profile` selects, `None` when it is not set (plain HTTP).
    /// Every key under `gateway.tls.profile.` must name a listed profile and a known setting;
    /// the selected profile needs both files. All problems are reported at once, by key.
    pub fn from_map(map: &BTreeMap<String, String>) -> Result<Option<Self>, GatewayError> {
        let mut selected = String::new();
        let mut listed = String::new();
        settings::read(
            map,
            &[],
            &mut [
                (REST_TLS_PROFILE_KEY, Slot::Text(&mut selected)),
                (PROFILES_KEY, Slot::Text(&mut listed)),
            ],
            "TLS",
        )?;
        let names: Vec<&str> = listed
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .collect();
        let mut problems = Vec::new();
        let mut profiles: BTreeMap<String, ProfileKeys> = BTreeMap::new();
        for (key, value) in map {
            let Some(named) = named(key, PROFILE_KEY_PREFIX, "name", &mut problems) else {
                continue;
            };
            let name = names
                .iter()
                .find(|n| n.eq_ignore_ascii_case(named.name))
                .copied();
            let Some(name) = name else {
                problems.push(format!(
                    "`{key}`: profile `{}` is not listed in `{PROFILES_KEY}`",
                    named.name
                ));
                continue;
            };
            let profile = profiles.entry(name.to_owned()).or_default();
            let parsed = match named.setting.as_str() {
                CERTIFICATE_FILE => {
                    profile.certificate_file = value.trim().to_owned();
                    Ok(())
                }
                PRIVATE_KEY_FILE => {
                    profile.private_key_file = value.trim().to_owned();
                    Ok(())
                }
                HANDSHAKE_TIMEOUT => {
                    duration(value, false).map(|d| profile.handshake_timeout = Some(d))
                }
                RELOAD_INTERVAL => duration(value, true).map(|d| profile.reload_interval = Some(d)),
                other => Err(format!(
                    "unknown setting `{other}` (expected {CERTIFICATE_FILE}, {PRIVATE_KEY_FILE}, {HANDSHAKE_TIMEOUT} or {RELOAD_INTERVAL})"
                )),
            };
            if let Err(problem) = parsed {
                problems.push(format!("`{key}`: {problem}"));
            }
        }
        let selected = selected.trim();
        let result = if selected.is_empty() {
            None
        } else if !names.contains(&selected) {
            problems.push(format!(
                "`{REST_TLS_PROFILE_KEY}`: profile `{selected}` is not listed in `{PROFILES_KEY}`"
            ));
            None
        } else {
            let keys = profiles.remove(selected).unwrap_or_default();
            for (file, setting) in [
                (&keys.certificate_file, CERTIFICATE_FILE),
                (&keys.private_key_file, PRIVATE_KEY_FILE),
            ] {
                if file.is_empty() {
                    problems.push(format!(
                        "`{PROFILE_KEY_PREFIX}{selected}.{setting}` is required: `{REST_TLS_PROFILE_KEY}` selects profile `{selected}`"
                    ));
                }
            }
            Some(TlsSettings {
                profile: selected.to_owned(),
                certificate_file: PathBuf::from(keys.certificate_file),
                private_key_file: PathBuf::from(keys.private_key_file),
                handshake_timeout: keys.handshake_timeout.unwrap_or(DEFAULT_HANDSHAKE_TIMEOUT),
                reload_interval: keys.reload_interval.unwrap_or(DEFAULT_RELOAD_INTERVAL),
            })
        };
        if problems.is_empty() {
            Ok(result)
        } else {
            Err(GatewayError::invalid(format!(
                "invalid TLS configuration: {}",
                problems.join("; ")
            )))
        }
    }
}

fn duration(value: &str, allow_zero: bool) -> Result<Duration, String> {
    let mut d = Duration::ZERO;
    settings::parse_into(
        &mut Slot::Duration {
            slot: &mut d,
            allow_zero,
        },
        value,
    )?;
    Ok(d)
}

/// The certificate in service, swapped when the files change.
#[derive(Debug)]
struct Rotating {
    current: RwLock<Arc<CertifiedKey>>,
}

impl ResolvesServerCert for Rotating {
    fn resolve(&self, _: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        // A poisoned lock still holds a valid certificate: a panic elsewhere must not stop TLS.
        Some(match self.current.read() {
            Ok(key) => key.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        })
    }
}

/// What the accept loop hands each new connection to: the handshake, bounded by the profile's
/// timeout, with the certificate in service.
pub(crate) struct TlsAcceptor {
    acceptor: tokio_rustls::TlsAcceptor,
    handshake_timeout: Duration,
    /// Checks the files for a change; stopped when the acceptor is dropped.
    reloader: Option<tokio::task::JoinHandle<()>>,
}

impl Drop for TlsAcceptor {
    fn drop(&mut self) {
        if let Some(task) = self.reloader.take() {
            task.abort();
        }
    }
}

/// Why a connection did not become a TLS stream.
#[derive(Debug)]
pub(crate) enum Refused {
    /// A plain HTTP request: answered 400 and closed.
    Plaintext,
    /// The handshake failed or timed out.
    Handshake(std::io::Error),
}

impl TlsAcceptor {
    /// Loads the profile's certificate and key (a start-up error names the file and the
    /// problem) and starts watching the files when a reload interval is set.
    pub(crate) fn start(settings: &TlsSettings) -> Result<Self, String> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let key = load(settings, &provider)?;
        let rotating = Arc::new(Rotating {
            current: RwLock::new(Arc::new(key)),
        });
        let mut config = rustls::ServerConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(|e| format!("TLS profile `{}`: {e}", settings.profile))?
            .with_no_client_auth()
            .with_cert_resolver(rotating.clone());
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        let reloader = (!settings.reload_interval.is_zero())
            .then(|| tokio::spawn(reload(settings.clone(), provider, rotating)));
        tracing::info!(
            profile = %settings.profile,
            certificate_file = %settings.certificate_file.display(),
            handshake_timeout_ms = u64::try_from(settings.handshake_timeout.as_millis()).unwrap_or(u64::MAX),
            reload_interval_ms = u64::try_from(settings.reload_interval.as_millis()).unwrap_or(u64::MAX),
            "serving HTTPS"
        );
        Ok(TlsAcceptor {
            acceptor: tokio_rustls::TlsAcceptor::from(Arc::new(config)),
            handshake_timeout: settings.handshake_timeout,
            reloader,
        })
    }

    /// The TLS stream of `stream`, within the handshake timeout. A client that speaks plain
    /// HTTP gets a 400 that says to use `https://` (its first byte cannot start a TLS record).
    pub(crate) async fn accept(&self, stream: TcpStream) -> Result<TlsStream<TcpStream>, Refused> {
        let timeout = self.handshake_timeout;
        let handshake = async {
            let mut first = [0u8; 1];
            let n = stream.peek(&mut first).await.map_err(Refused::Handshake)?;
            if n == 1 && first[0] != TLS_HANDSHAKE_RECORD && first[0].is_ascii_alphabetic() {
                answer_plaintext(stream).await;
                return Err(Refused::Plaintext);
            }
            self.acceptor
                .accept(stream)
                .await
                .map_err(Refused::Handshake)
        };
        tokio::time::timeout(timeout, handshake)
            .await
            .unwrap_or_else(|_| {
                Err(Refused::Handshake(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    "TLS handshake timed out",
                )))
            })
    }
}

/// The 400 a plain HTTP request on the TLS port gets, in the error envelope, then the close.
async fn answer_plaintext(mut stream: TcpStream) {
    let body = serde_json::json!({"error": {
        "code": "invalid_argument",
        "message": "this port serves HTTPS only: send the request with https://",
        "request_id": uuid::Uuid::new_v4().to_string(),
    }})
    .to_string();
    let answer = format!(
        "HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    // The client may already be gone: nothing to do about a failed write.
    let _ = stream.write_all(answer.as_bytes()).await;
    let _ = stream.shutdown().await;
}

/// The certificate chain and key of `settings`, checked to belong together.
fn load(settings: &TlsSettings, provider: &CryptoProvider) -> Result<CertifiedKey, String> {
    let profile = &settings.profile;
    let certs = read_certificates(&settings.certificate_file)
        .map_err(|e| format!("TLS profile `{profile}`: certificate-file: {e}"))?;
    let key = PrivateKeyDer::from_pem_file(&settings.private_key_file).map_err(|e| {
        format!(
            "TLS profile `{profile}`: private-key-file {}: {}",
            settings.private_key_file.display(),
            pem_problem(&e)
        )
    })?;
    CertifiedKey::from_der(certs, key, provider).map_err(|e| {
        format!("TLS profile `{profile}`: the private key does not fit the certificate: {e}")
    })
}

fn read_certificates(path: &Path) -> Result<Vec<CertificateDer<'static>>, String> {
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(|e| format!("{}: {}", path.display(), pem_problem(&e)))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("{}: {}", path.display(), pem_problem(&e)))?;
    if certs.is_empty() {
        return Err(format!("{}: no PEM certificate", path.display()));
    }
    Ok(certs)
}

/// A PEM error in words; never the file's content (a key file holds a secret).
fn pem_problem(e: &rustls::pki_types::pem::Error) -> String {
    use rustls::pki_types::pem::Error;
    match e {
        Error::Io(io) => io.to_string(),
        Error::NoItemsFound => "no PEM item of the expected kind".to_owned(),
        _ => "not valid PEM".to_owned(),
    }
}

/// When either file was last changed (and its length), to notice a rotation.
fn stamp(settings: &TlsSettings) -> Option<[(SystemTime, u64); 2]> {
    let of = |p: &Path| {
        let m = std::fs::metadata(p).ok()?;
        Some((m.modified().ok()?, m.len()))
    };
    Some([
        of(&settings.certificate_file)?,
        of(&settings.private_key_file)?,
    ])
}

/// Checks the files every reload interval; a changed pair that loads goes into service, one
/// that does not (a half-written rotation, a key of another certificate) keeps the old one,
/// with one WARN line per change seen.
async fn reload(settings: TlsSettings, provider: Arc<CryptoProvider>, rotating: Arc<Rotating>) {
    let mut seen = stamp(&settings);
    let mut ticks = tokio::time::interval(settings.reload_interval);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    ticks.tick().await;
    loop {
        ticks.tick().await;
        let now = stamp(&settings);
        if now.is_none() || now == seen {
            continue;
        }
        seen = now;
        match load(&settings, &provider) {
            Ok(key) => {
                match rotating.current.write() {
                    Ok(mut current) => *current = Arc::new(key),
                    Err(poisoned) => *poisoned.into_inner() = Arc::new(key),
                }
                tracing::info!(profile = %settings.profile, "TLS certificate reloaded");
            }
            Err(problem) => tracing::warn!(
                profile = %settings.profile,
                problem = %problem,
                "TLS certificate files changed but do not load; the previous certificate stays in service"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gateway_core::settings::map_of;

    #[test]
    fn no_profile_is_plain_http_and_a_selected_profile_needs_both_files() {
        assert_eq!(TlsSettings::from_map(&map_of(&[])).unwrap(), None);
        let s = TlsSettings::from_map(&map_of(&[
            ("gateway.rest.tls.profile", "public"),
            ("gateway.tls.profiles", "public, internal"),
            ("gateway.tls.profile.public.certificate-file", "/c.pem"),
            ("gateway.tls.profile.public.private-key-file", "/k.pem"),
            (
                "FLUSS_GATEWAY__TLS__PROFILE__PUBLIC__HANDSHAKE_TIMEOUT",
                "2s",
            ),
            ("gateway.tls.profile.internal.reload-interval", "0"),
        ]))
        .unwrap()
        .unwrap();
        assert_eq!(s.certificate_file, PathBuf::from("/c.pem"));
        assert_eq!(s.handshake_timeout, Duration::from_secs(2));
        assert_eq!(s.reload_interval, DEFAULT_RELOAD_INTERVAL);

        let e = TlsSettings::from_map(&map_of(&[
            ("gateway.rest.tls.profile", "public"),
            ("gateway.tls.profiles", "public"),
            ("gateway.tls.profile.public.certificate-file", "/c.pem"),
            ("gateway.tls.profile.public.cert-file", "/c.pem"),
            ("gateway.tls.profile.other.private-key-file", "/k.pem"),
            ("gateway.tls.profile.public.handshake-timeout", "0"),
        ]))
        .unwrap_err()
        .to_string();
        for needle in [
            "`gateway.tls.profile.public.private-key-file` is required",
            "unknown setting `cert-file`",
            "profile `other` is not listed",
            "`gateway.tls.profile.public.handshake-timeout`",
        ] {
            assert!(e.contains(needle), "{needle}: {e}");
        }

        let e = TlsSettings::from_map(&map_of(&[("gateway.rest.tls.profile", "nope")]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("profile `nope` is not listed"), "{e}");
    }
}
