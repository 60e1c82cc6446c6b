//! Git hooks that keep the local store current: install, uninstall,
//! status, and the work a hook does when git runs it.
//!
//! Installing never clobbers: a hook already in place is moved aside to
//! `<name>.rpg-prev` and chained; uninstalling moves it back exactly.

use std::path::{Path, PathBuf};

/// Hooks that keep the store current without touching the working tree.
pub const STORE_HOOKS: &[&str] = &["post-commit", "post-merge", "post-rewrite", "post-checkout"];
/// The opt-in hook that commits the snapshot with each commit.
pub const SNAPSHOT_HOOK: &str = "pre-commit";

const MARKER: &str = "# rpg-hook:";
const PREV: &str = ".rpg-prev";

#[derive(Debug, thiserror::Error)]
pub enum HookError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{0} exists from an earlier install; move it away, then run `rpg hook install` again")]
    StalePrevious(PathBuf),
}

fn template(name: &str) -> &'static str {
    match name {
        "pre-commit" => include_str!("../hooks/pre-commit"),
        "post-merge" => include_str!("../hooks/post-merge"),
        "post-rewrite" => include_str!("../hooks/post-rewrite"),
        "post-checkout" => include_str!("../hooks/post-checkout"),
        _ => include_str!("../hooks/post-commit"),
    }
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> HookError + '_ {
    move |source| HookError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Where git looks for hooks: `core.hooksPath` if set (husky and others set
/// it), else `.git/hooks`.
pub fn hooks_dir(repo: &gix::Repository, workdir: &Path) -> (PathBuf, bool) {
    let configured = repo
        .config_snapshot()
        .trusted_path("core.hooksPath")
        .ok()
        .flatten();
    match configured {
        Some(p) if p.is_absolute() => (p, true),
        Some(p) => (workdir.join(p), true),
        None => (repo.git_dir().join("hooks"), false),
    }
}

fn is_ours(path: &Path) -> bool {
    std::fs::read_to_string(path)
        .map(|t| t.lines().take(3).any(|l| l.starts_with(MARKER)))
        .unwrap_or(false)
}

#[cfg(unix)]
fn make_executable(path: &Path) -> Result<(), HookError> {
    use std::os::unix::fs::PermissionsExt;
    let mut perm = std::fs::metadata(path).map_err(io(path))?.permissions();
    perm.set_mode(perm.mode() | 0o755);
    std::fs::set_permissions(path, perm).map_err(io(path))
}

#[cfg(not(unix))]
fn make_executable(_: &Path) -> Result<(), HookError> {
    Ok(())
}

/// What `install` did to one hook.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Installed {
    pub hook: String,
    pub path: PathBuf,
    /// An existing hook was kept and is chained.
    pub chained: bool,
}

/// Install `names` into `dir`, calling `rpg` at `exe`.
pub fn install(dir: &Path, names: &[&str], exe: &Path) -> Result<Vec<Installed>, HookError> {
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let exe = exe.to_string_lossy().replace('"', "\\\"");
    let mut out = Vec::new();
    for name in names {
        let path = dir.join(name);
        let prev = dir.join(format!("{name}{PREV}"));
        if path.exists() && !is_ours(&path) {
            if prev.exists() {
                return Err(HookError::StalePrevious(prev));
            }
            std::fs::rename(&path, &prev).map_err(io(&path))?;
        }
        let body = template(name).replace("@RPG@", &exe);
        std::fs::write(&path, body).map_err(io(&path))?;
        make_executable(&path)?;
        out.push(Installed {
            hook: name.to_string(),
            path,
            chained: prev.exists(),
        });
    }
    Ok(out)
}

/// Remove our hooks from `dir` and restore what they chained to.
pub fn uninstall(dir: &Path) -> Result<Vec<String>, HookError> {
    let mut removed = Vec::new();
    for name in STORE_HOOKS.iter().chain([&SNAPSHOT_HOOK]) {
        let path = dir.join(name);
        if !is_ours(&path) {
            continue;
        }
        std::fs::remove_file(&path).map_err(io(&path))?;
        let prev = dir.join(format!("{name}{PREV}"));
        if prev.exists() {
            std::fs::rename(&prev, &path).map_err(io(&prev))?;
        }
        removed.push(name.to_string());
    }
    Ok(removed)
}

/// One hook's state.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct HookState {
    pub hook: String,
    pub installed: bool,
    pub chained: bool,
}

pub fn status(dir: &Path) -> Vec<HookState> {
    STORE_HOOKS
        .iter()
        .chain([&SNAPSHOT_HOOK])
        .map(|name| HookState {
            hook: name.to_string(),
            installed: is_ours(&dir.join(name)),
            chained: dir.join(format!("{name}{PREV}")).exists(),
        })
        .collect()
}

/// Append one line to `.rpg/log/hook.log`, keeping the file small.
pub fn log(rpg_dir: &Path, line: &str) {
    let dir = rpg_dir.join("log");
    if std::fs::create_dir_all(&dir).is_err() {
        return;
    }
    let path = dir.join("hook.log");
    if std::fs::metadata(&path).is_ok_and(|m| m.len() > 1024 * 1024) {
        let _ = std::fs::rename(&path, dir.join("hook.log.1"));
    }
    use std::io::Write;
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
    {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        let _ = writeln!(f, "{now} {line}");
    }
}
