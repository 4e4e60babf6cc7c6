//! API keys: `<prefix>_<key id>_<secret>`, e.g. `flgw_k3v9x2m8q1ab_9f…` (64 hex digits of secret,
//! 256 bits). Only a SHA-256 of the whole key is stored; the secret is random enough that a fast
//! hash cannot be searched (a slow hash would cost every request tens of milliseconds for no
//! gain). Comparison is constant-time.

use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// The prefix every key starts with: it makes a leaked key recognisable to secret scanners.
pub const KEY_PREFIX: &str = "flgw";
/// Characters of a key id.
pub const KEY_ID_LEN: usize = 12;
/// Hex digits of a key's secret (32 random bytes).
pub const SECRET_HEX_LEN: usize = 64;
/// How a stored hash starts.
pub const HASH_SCHEME: &str = "sha256:";

/// A key as presented by a caller, split into its id and the whole text; the text is only ever
/// hashed, never shown.
#[derive(Clone, PartialEq, Eq)]
pub struct PresentedKey<'a> {
    /// The key id (safe to log).
    pub key_id: &'a str,
    whole: &'a str,
}

impl std::fmt::Debug for PresentedKey<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PresentedKey")
            .field("key_id", &self.key_id)
            .finish_non_exhaustive()
    }
}

/// Splits `text` into a key, or says (without echoing it) what is wrong with its form.
pub fn parse(text: &str) -> Result<PresentedKey<'_>, &'static str> {
    let mut parts = text.splitn(3, '_');
    let (Some(prefix), Some(key_id), Some(secret)) = (parts.next(), parts.next(), parts.next())
    else {
        return Err("an API key has the form `flgw_<key id>_<secret>`");
    };
    if prefix != KEY_PREFIX {
        return Err("an API key starts with `flgw_`");
    }
    if !is_key_id(key_id) {
        return Err("the key id of an API key is 12 characters of a-z and 0-9");
    }
    if secret.len() != SECRET_HEX_LEN || !secret.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err("the secret of an API key is 64 hexadecimal digits");
    }
    Ok(PresentedKey {
        key_id,
        whole: text,
    })
}

/// Whether `id` is a well-formed key id.
pub fn is_key_id(id: &str) -> bool {
    id.len() == KEY_ID_LEN
        && id
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
}

impl PresentedKey<'_> {
    /// Whether this key hashes to `stored` (`sha256:<hex>`), compared in constant time.
    pub fn matches(&self, stored: &str) -> bool {
        let Some(expected) = stored.strip_prefix(HASH_SCHEME).and_then(decode_hex) else {
            return false;
        };
        let actual = Sha256::digest(self.whole.as_bytes());
        expected.len() == actual.len() && bool::from(actual.as_slice().ct_eq(&expected))
    }
}

/// The stored form of `key`: `sha256:` + hex of SHA-256 over the whole key text.
pub fn hash(key: &str) -> String {
    format!("{HASH_SCHEME}{}", hex(&Sha256::digest(key.as_bytes())))
}

/// A new key: (key id, the whole key to hand to its owner once, its stored hash).
pub fn generate() -> Result<(String, String, String), String> {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    let mut id_bytes = [0u8; KEY_ID_LEN];
    let mut secret = [0u8; SECRET_HEX_LEN / 2];
    getrandom::fill(&mut id_bytes).map_err(|e| format!("no randomness: {e}"))?;
    getrandom::fill(&mut secret).map_err(|e| format!("no randomness: {e}"))?;
    // 36 divides 252 evenly: values at or above it are redrawn, so every character is uniform.
    let mut key_id = String::with_capacity(KEY_ID_LEN);
    for b in id_bytes {
        let mut b = b;
        while b >= 252 {
            let mut one = [0u8; 1];
            getrandom::fill(&mut one).map_err(|e| format!("no randomness: {e}"))?;
            b = one[0];
        }
        key_id.push(char::from(ALPHABET[usize::from(b % 36)]));
    }
    let whole = format!("{KEY_PREFIX}_{key_id}_{}", hex(&secret));
    let stored = hash(&whole);
    Ok((key_id, whole, stored))
}

/// Lower-case hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

fn decode_hex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_generated_key_parses_and_matches_only_its_own_hash() {
        let (id, key, stored) = generate().unwrap();
        let presented = parse(&key).unwrap();
        assert_eq!(presented.key_id, id);
        assert!(presented.matches(&stored));
        let (_, other, other_hash) = generate().unwrap();
        assert!(!presented.matches(&other_hash));
        assert!(!parse(&other).unwrap().matches(&stored));
        assert!(!presented.matches("sha256:zz"));
        assert!(!presented.matches("md5:00"));
        assert!(!format!("{presented:?}").contains(&key[18..]));
    }

    #[test]
    fn malformed_keys_are_refused_by_form() {
        let good_secret = "a".repeat(64);
        for bad in [
            "",
            "flgw",
            "flgw_abc",
            &format!("xxxx_abcdefghijkl_{good_secret}"),
            &format!("flgw_ABCDEFGHIJKL_{good_secret}"),
            &format!("flgw_abcdefghijk_{good_secret}"),
            "flgw_abcdefghijkl_short",
            &format!("flgw_abcdefghijkl_{}", "g".repeat(64)),
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
        assert!(parse(&format!("flgw_abcdefghijkl_{good_secret}")).is_ok());
    }

    #[test]
    fn key_ids_are_uniform_over_the_alphabet() {
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..200 {
            let (id, _, _) = generate().unwrap();
            assert!(is_key_id(&id), "{id}");
            seen.extend(id.chars());
        }
        assert_eq!(seen.len(), 36, "{seen:?}");
    }
}
