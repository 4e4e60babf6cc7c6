//! The users' passwords: argon2id hashes in PHC strings, made for the document (the key tool)
//! and checked against what a request presents.

use argon2::password_hash::{PasswordHash, PasswordVerifier};

/// An argon2id PHC hash of `password` with a fresh salt, for the users of the document.
pub fn hash_password(password: &str) -> Result<String, String> {
    use argon2::password_hash::{PasswordHasher, SaltString};
    let mut salt = [0u8; 16];
    getrandom::fill(&mut salt).map_err(|e| format!("no randomness: {e}"))?;
    let salt = SaltString::encode_b64(&salt).map_err(|e| e.to_string())?;
    argon2::Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| e.to_string())
}

/// Whether `password` is the one `phc` (an argon2 PHC string) was made from; an unreadable
/// hash matches nothing.
pub(crate) fn password_matches(password: &str, phc: &str) -> bool {
    PasswordHash::new(phc).is_ok_and(|parsed| {
        argon2::Argon2::default()
            .verify_password(password.as_bytes(), &parsed)
            .is_ok()
    })
}
