//! Settings of the catalog routes, read from the configuration map
//! (`gateway.rest.metadata.*`, dotted or environment form). Other keys are left to their owners;
//! an unknown key under `gateway.rest.metadata.` is an error, so a typo cannot silently keep a
//! default.

use std::collections::BTreeMap;

use gateway_core::GatewayError;

use gateway_core::settings::{self, Slot};

pub use gateway_core::settings::keys::metadata::METADATA_MAX_CONCURRENT_KEY;
/// Default of [`METADATA_MAX_CONCURRENT_KEY`] (as the Fluss Gateway): DDL goes to the one
/// coordinator, so a burst beyond this is turned away rather than queued behind the deadline.
pub const DEFAULT_METADATA_MAX_CONCURRENT: usize = 16;

const NAMESPACE: &str = "gateway.rest.metadata.";

/// Settings of the catalog (`fluss-ddl`) routes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CatalogOptions {
    /// Catalog requests in flight beyond this answer 429 `resource_exhausted`.
    pub max_concurrent: usize,
}

impl Default for CatalogOptions {
    fn default() -> Self {
        CatalogOptions {
            max_concurrent: DEFAULT_METADATA_MAX_CONCURRENT,
        }
    }
}

impl CatalogOptions {
    /// Reads the options from `map`; every problem is reported at once, by key (never by value).
    pub fn from_map(map: &BTreeMap<String, String>) -> Result<Self, GatewayError> {
        let mut options = CatalogOptions::default();
        settings::read(
            map,
            &[NAMESPACE],
            &mut [(
                METADATA_MAX_CONCURRENT_KEY,
                Slot::Count(&mut options.max_concurrent),
            )],
            "catalog",
        )?;
        Ok(options)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gateway_core::settings::env_var_name;

    use gateway_core::settings::map_of as map;

    #[test]
    fn options_default_and_read_both_key_forms() {
        assert_eq!(
            CatalogOptions::from_map(&map(&[("PATH", "/bin")])).unwrap(),
            CatalogOptions::default()
        );
        assert_eq!(CatalogOptions::default().max_concurrent, 16);
        let env = CatalogOptions::from_map(&map(&[(
            "FLUSS_GATEWAY__REST__METADATA__MAX_CONCURRENT_REQUESTS",
            "4",
        )]))
        .unwrap();
        assert_eq!(env.max_concurrent, 4);
        let dotted =
            CatalogOptions::from_map(&map(&[(METADATA_MAX_CONCURRENT_KEY, " 7 ")])).unwrap();
        assert_eq!(dotted.max_concurrent, 7);
    }

    #[test]
    fn options_are_documented_with_env_form_and_default() {
        let docs = include_str!("../../../../docs/configuration.md");
        let row = format!(
            "| `{METADATA_MAX_CONCURRENT_KEY}` | `{}` | `{DEFAULT_METADATA_MAX_CONCURRENT}` |",
            env_var_name(METADATA_MAX_CONCURRENT_KEY)
        );
        assert!(docs.contains(&row), "docs/configuration.md lacks {row}");
    }

    #[test]
    fn options_problems_name_keys_never_values() {
        let e = CatalogOptions::from_map(&map(&[
            (METADATA_MAX_CONCURRENT_KEY, "lots-secret"),
            ("FLUSS_GATEWAY__REST__METADATA__MAX_CONCURENT", "1"),
            ("FLUSS_GATEWAY__REST__WRITE__MAX_ROWS", "5"),
        ]))
        .unwrap_err();
        let m = e.message();
        assert!(
            m.contains("`gateway.rest.metadata.max-concurrent-requests`"),
            "{m}"
        );
        assert!(
            m.contains("`FLUSS_GATEWAY__REST__METADATA__MAX_CONCURENT`: unknown key"),
            "{m}"
        );
        assert!(!m.contains("lots-secret"), "{m}");
        assert!(!m.contains("MAX_ROWS"), "{m}");
        let zero =
            CatalogOptions::from_map(&map(&[(METADATA_MAX_CONCURRENT_KEY, "0")])).unwrap_err();
        assert!(zero.message().contains("greater than 0"), "{zero}");
    }
}
