//! `docs/architecture.md` names every workspace member, and every file and item it names exists:
//! the prose docs that have such a check are the ones that stay right as the code moves.

// A whole integration test file is test code: a failed expectation is the test failing.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::too_many_lines
)]

mod common;

use std::path::{Path, PathBuf};

use common::repo;

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The package names of the workspace's members (the globs of the root `members` expanded).
fn members() -> Vec<(PathBuf, String)> {
    let root = read(&repo().join("Cargo.toml"));
    let line = root
        .lines()
        .find(|l| l.starts_with("members"))
        .expect("a members line");
    let mut found = Vec::new();
    for pattern in line.split('"').skip(1).step_by(2) {
        let dirs: Vec<PathBuf> = match pattern.strip_suffix("/*") {
            Some(parent) => std::fs::read_dir(repo().join(parent))
                .expect("member folder")
                .map(|e| e.expect("entry").path())
                .filter(|p| p.join("Cargo.toml").exists())
                .collect(),
            None => vec![repo().join(pattern)],
        };
        for dir in dirs {
            let manifest = read(&dir.join("Cargo.toml"));
            let name = manifest
                .lines()
                .find_map(|l| l.strip_prefix("name = \""))
                .and_then(|rest| rest.strip_suffix('"'))
                .expect("package name")
                .to_owned();
            found.push((dir, name));
        }
    }
    found
}

/// Every `.rs` file below the member folders, as paths relative to the repository.
fn sources() -> Vec<String> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() && path.file_name().is_some_and(|n| n != "target") {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    for top in ["functions", "shared", "tools", "tests"] {
        walk(&repo().join(top), &mut files);
    }
    let root = repo().canonicalize().expect("repository");
    files
        .iter()
        .filter_map(|f| f.canonicalize().ok())
        .filter_map(|f| {
            f.strip_prefix(&root)
                .ok()
                .map(|p| p.to_string_lossy().into_owned())
        })
        .collect()
}

#[test]
fn the_architecture_names_every_workspace_member() {
    let doc = read(&repo().join("docs/architecture.md"));
    let members = members();
    assert!(members.len() >= 14, "{members:?}");
    for (dir, name) in members {
        assert!(
            doc.contains(&name),
            "docs/architecture.md does not name {name} ({})",
            dir.display()
        );
    }
}

/// Each code span of the form `path/to/file.rs`, `file.rs` or `file.rs::item` names a file of
/// the workspace (a bare file name must be unique enough to exist somewhere), and the item is
/// declared in it.
#[test]
fn every_file_and_item_the_architecture_names_exists() {
    let doc = read(&repo().join("docs/architecture.md"));
    let sources = sources();
    let mut checked = 0;
    for span in doc.split('`').skip(1).step_by(2) {
        let (file, item) = match span.split_once(".rs") {
            Some((stem, rest)) if !stem.contains(' ') && !stem.is_empty() => {
                (format!("{stem}.rs"), rest.strip_prefix("::"))
            }
            _ => continue,
        };
        let matches: Vec<&String> = sources
            .iter()
            .filter(|s| s.as_str() == file || s.ends_with(&format!("/{file}")))
            .collect();
        assert!(
            !matches.is_empty(),
            "docs/architecture.md names `{span}`: no file {file}"
        );
        if let Some(item) = item {
            let item: String = item
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            let declared = matches.iter().any(|f| {
                let text = read(&repo().join(f));
                [
                    "fn ", "struct ", "enum ", "trait ", "type ", "const ", "mod ", "static ",
                ]
                .iter()
                .any(|kw| text.contains(&format!("{kw}{item}")))
            });
            assert!(
                declared,
                "docs/architecture.md names `{span}`: {item} is not declared in {matches:?}"
            );
        }
        checked += 1;
    }
    assert!(checked >= 10, "only {checked} file names checked");
}
