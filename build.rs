//! Build script: records the git commit the binary is built from.
//!
//! Sets `REWARD_MEMORY_GIT_COMMIT` to `$REWARD_MEMORY_GIT_COMMIT` when the builder sets it
//! (packagers), else to the short hash of `HEAD` when the crate sits at the root of a git
//! checkout and `git` runs, else to `unknown` (a crates.io tarball, no git). Never fails.
//!
//! Release builds of the binary for `x86_64-unknown-linux-gnu` are linked as a position-
//! dependent executable (`-no-pie`): the loader then has no relocations to apply to the
//! binary (about 18,000 in a PIE build, dirtying 80 pages of `.data.rel.ro`), which took
//! about 0.3 ms of every run. Shared libraries keep their address randomization; the
//! binary's own code is at a fixed address. Set `REWARD_MEMORY_PIE=1` to link a PIE
//! anyway (a distribution whose policy requires one).

use std::path::{Path, PathBuf};
use std::process::Command;

fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8(out.stdout).ok()?;
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_owned())
}

/// Rebuild when HEAD moves: the HEAD file, the branch ref it points at, packed refs.
fn watch_head(dir: &Path) {
    let mut paths = vec!["HEAD".to_owned(), "packed-refs".to_owned()];
    if let Some(reference) = git(dir, &["symbolic-ref", "-q", "HEAD"]) {
        paths.push(reference);
    }
    for path in paths {
        if let Some(file) = git(dir, &["rev-parse", "--git-path", &path]) {
            let file = dir.join(PathBuf::from(file));
            // A path that does not exist would make cargo rerun this script every build.
            if file.exists() {
                println!("cargo:rerun-if-changed={}", file.display());
            }
        }
    }
}

/// Links release binaries without PIE on the one target where it was measured.
fn link_options() {
    println!("cargo:rerun-if-env-changed=REWARD_MEMORY_PIE");
    let release = std::env::var("PROFILE").is_ok_and(|p| p == "release");
    let target = std::env::var("TARGET").unwrap_or_default();
    let pie_wanted = std::env::var("REWARD_MEMORY_PIE").is_ok_and(|v| v.trim() == "1");
    if release && target == "x86_64-unknown-linux-gnu" && !pie_wanted {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    link_options();
    println!("cargo:rerun-if-env-changed=REWARD_MEMORY_GIT_COMMIT");
    let manifest = std::env::var_os("CARGO_MANIFEST_DIR").map(PathBuf::from);
    let from_env = std::env::var("REWARD_MEMORY_GIT_COMMIT")
        .ok()
        .filter(|v| !v.trim().is_empty());
    let commit = from_env.or_else(|| {
        let dir = manifest.as_deref()?;
        // Only this crate's own checkout: a vendored copy inside another repository must
        // not report that repository's commit.
        if !dir.join(".git").exists() {
            return None;
        }
        watch_head(dir);
        git(dir, &["rev-parse", "--short=12", "HEAD"])
    });
    println!(
        "cargo:rustc-env=REWARD_MEMORY_GIT_COMMIT={}",
        commit.as_deref().unwrap_or("unknown")
    );
}
