//! Git hooks that keep the local store current: where git runs them,
//! install, uninstall, status, and the log a hook writes.
//!
//! Hooks go where `git rev-parse --git-path hooks` says, which covers
//! linked worktrees and `core.hooksPath`. Two ways to install:
//! - a private hooks directory (`.git/hooks`, or one outside the work
//!   tree): a hook already in place is moved aside to `<name>.rpg-prev`
//!   and chained, and uninstalling moves it back exactly. The hook finds
//!   `rpg` on `PATH`, else at the path that installed it.
//! - a hooks directory git tracks (husky's `.husky/`), which is shared
//!   with everyone who clones: only with `--force`, a block is appended to
//!   each hook that calls `rpg` through `PATH` only, so no machine's path
//!   lands in a shared file and the hook that was there stays where
//!   teammates see it.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Hooks that keep the store current without touching the working tree.
pub const STORE_HOOKS: &[&str] = &["post-commit", "post-merge", "post-rewrite", "post-checkout"];
/// The opt-in hook that commits the snapshot with each commit.
pub const SNAPSHOT_HOOK: &str = "pre-commit";
/// Not a git hook: what a hook that cannot finish within its budget
/// starts in a process of its own, to finish the update with no deadline.
pub const CATCH_UP: &str = "catch-up";

const MARKER: &str = "# rpg-hook:";
const PREV: &str = ".rpg-prev";
const BLOCK_BEGIN: &str = "# rpg-hook-begin";
const BLOCK_END: &str = "# rpg-hook-end";
/// The path that installed a private hook is written on this line.
const FALLBACK: &str = "rpg=$(command -v rpg 2>/dev/null) || rpg=\"";

#[derive(Debug, thiserror::Error)]
pub enum HookError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{0} exists from an earlier install; move it away, then run `rpg hook install` again")]
    StalePrevious(PathBuf),
    #[error("cannot ask git where hooks go: {0}")]
    Git(String),
    #[error("{0} is tracked by git, so a change there reaches everyone who clones; run `rpg hook install --force` to add a call to `rpg` (found through PATH) to its hooks")]
    Tracked(PathBuf),
}

fn template(name: &str) -> &'static str {
    match name {
        "pre-commit" => include_str!("../hooks/pre-commit"),
        _ => include_str!("../hooks/store-hook"),
    }
}

/// The block a shared hook gets: `rpg` through `PATH` or nothing.
fn block() -> String {
    format!(
        "{BLOCK_BEGIN}: added by `rpg hook install`; `rpg hook uninstall` removes it\n\
         if command -v rpg >/dev/null 2>&1; then rpg hook run \"$(basename \"$0\")\" \"$@\" >/dev/null 2>&1 </dev/null || true; fi\n\
         {BLOCK_END}\n"
    )
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> HookError + '_ {
    move |source| HookError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn git(workdir: &Path, args: &[&str]) -> Result<String, HookError> {
    let out = Command::new("git")
        .args(args)
        .current_dir(workdir)
        .output()
        .map_err(|e| HookError::Git(e.to_string()))?;
    if !out.status.success() {
        return Err(HookError::Git(
            String::from_utf8_lossy(&out.stderr).trim().to_string(),
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Where git runs this repository's hooks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HooksDir {
    pub path: PathBuf,
    /// `core.hooksPath` chose it.
    pub configured: bool,
    /// It lies inside the work tree, so it may be shared through git.
    pub shared: bool,
    /// Git tracks files in it.
    pub tracked: bool,
    /// Where hooks would go without `core.hooksPath`.
    pub default: PathBuf,
}

/// Ask git where it runs hooks for the work tree at `workdir`.
pub fn hooks_dir(workdir: &Path) -> Result<HooksDir, HookError> {
    let abs = |p: String| {
        let p = PathBuf::from(p);
        if p.is_absolute() {
            p
        } else {
            workdir.join(p)
        }
    };
    let path = abs(git(workdir, &["rev-parse", "--git-path", "hooks"])?);
    let common = abs(git(workdir, &["rev-parse", "--git-common-dir"])?);
    let configured = git(workdir, &["config", "--get", "core.hooksPath"])
        .map(|v| !v.is_empty())
        .unwrap_or(false);
    let canonical = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    let (dir, top) = (canonical(&path), canonical(workdir));
    let shared = dir.starts_with(&top) && !dir.starts_with(canonical(&common));
    let tracked = shared
        && git(workdir, &["ls-files", "--", &dir.display().to_string()])
            .is_ok_and(|files| !files.is_empty());
    Ok(HooksDir {
        path,
        configured,
        shared,
        tracked,
        default: common.join("hooks"),
    })
}

fn is_ours(path: &Path) -> bool {
    std::fs::read_to_string(path)
        .map(|t| t.lines().take(3).any(|l| l.starts_with(MARKER)) || t.contains(BLOCK_BEGIN))
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

/// Install `names` where git runs hooks; `exe` is the fallback when `rpg`
/// is not on `PATH` (private directories only).
pub fn install(
    dir: &HooksDir,
    names: &[&str],
    exe: &Path,
    force: bool,
) -> Result<Vec<Installed>, HookError> {
    if dir.tracked && !force {
        return Err(HookError::Tracked(dir.path.clone()));
    }
    std::fs::create_dir_all(&dir.path).map_err(io(&dir.path))?;
    names
        .iter()
        .map(|name| match dir.tracked {
            true => install_block(&dir.path, name),
            false => install_private(&dir.path, name, exe),
        })
        .collect()
}

fn install_private(dir: &Path, name: &str, exe: &Path) -> Result<Installed, HookError> {
    let exe = exe.to_string_lossy().replace(['"', '$', '`', '\\'], "");
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
    Ok(Installed {
        hook: name.to_string(),
        path,
        chained: prev.exists(),
    })
}

fn install_block(dir: &Path, name: &str) -> Result<Installed, HookError> {
    let path = dir.join(name);
    let existing = match std::fs::read_to_string(&path) {
        Ok(t) => Some(t),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(io(&path)(e)),
    };
    let chained = existing.is_some();
    let body = match existing {
        Some(t) if t.contains(BLOCK_BEGIN) => t,
        Some(t) if t.ends_with('\n') || t.is_empty() => format!("{t}{}", block()),
        Some(t) => format!("{t}\n{}", block()),
        None => format!("#!/bin/sh\n{}", block()),
    };
    std::fs::write(&path, body).map_err(io(&path))?;
    make_executable(&path)?;
    Ok(Installed {
        hook: name.to_string(),
        path,
        chained,
    })
}

/// Register the snapshot's merge driver in this clone's git config (the
/// `merge=rpg` attribute is in `.rpg/.gitattributes`). The command finds
/// `rpg` on `PATH` first, like the hooks.
pub fn install_merge_driver(workdir: &Path, exe: &Path) -> Result<(), HookError> {
    let exe = exe
        .to_string_lossy()
        .replace(['"', '$', '`', '\\', '\''], "");
    let driver = format!(
        "rpg=$(command -v rpg 2>/dev/null) || rpg='{exe}'; \"$rpg\" hook merge-driver %O %A %B %P"
    );
    git(
        workdir,
        &[
            "config",
            "merge.rpg.name",
            "rpg: regenerate the graph snapshot",
        ],
    )?;
    git(workdir, &["config", "merge.rpg.driver", &driver])?;
    Ok(())
}

/// Remove the merge driver's config; nothing to do when it is not there.
pub fn uninstall_merge_driver(workdir: &Path) -> Result<(), HookError> {
    let _ = git(workdir, &["config", "--remove-section", "merge.rpg"]);
    Ok(())
}

/// Whether this clone has the snapshot's merge driver.
pub fn merge_driver_installed(workdir: &Path) -> bool {
    git(workdir, &["config", "--get", "merge.rpg.driver"]).is_ok_and(|d| d.contains("merge-driver"))
}

/// Remove our hooks and restore what they chained to.
pub fn uninstall(dir: &Path) -> Result<Vec<String>, HookError> {
    let mut removed = Vec::new();
    for name in STORE_HOOKS.iter().chain([&SNAPSHOT_HOOK]) {
        let path = dir.join(name);
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        if text.contains(BLOCK_BEGIN) {
            remove_block(&path, &text)?;
        } else if is_ours(&path) {
            std::fs::remove_file(&path).map_err(io(&path))?;
            let prev = dir.join(format!("{name}{PREV}"));
            if prev.exists() {
                std::fs::rename(&prev, &path).map_err(io(&prev))?;
            }
        } else {
            continue;
        }
        removed.push(name.to_string());
    }
    Ok(removed)
}

fn remove_block(path: &Path, text: &str) -> Result<(), HookError> {
    let mut kept = String::new();
    let mut inside = false;
    for line in text.split_inclusive('\n') {
        if line.starts_with(BLOCK_BEGIN) {
            inside = true;
        } else if line.starts_with(BLOCK_END) {
            inside = false;
        } else if !inside {
            kept.push_str(line);
        }
    }
    if kept.trim() == "#!/bin/sh" {
        std::fs::remove_file(path).map_err(io(path))
    } else {
        std::fs::write(path, kept).map_err(io(path))
    }
}

/// One hook's state.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct HookState {
    pub hook: String,
    pub installed: bool,
    pub chained: bool,
    /// The `rpg` this hook would run, `None` when it would find none.
    pub runs: Option<PathBuf>,
}

pub fn status(dir: &Path) -> Vec<HookState> {
    STORE_HOOKS
        .iter()
        .chain([&SNAPSHOT_HOOK])
        .map(|name| {
            let path = dir.join(name);
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            let installed = is_ours(&path);
            HookState {
                hook: name.to_string(),
                installed,
                chained: dir.join(format!("{name}{PREV}")).exists()
                    || (text.contains(BLOCK_BEGIN) && !text.starts_with("#!/bin/sh\n# rpg")),
                runs: installed.then(|| binary_for(&text)).flatten(),
            }
        })
        .collect()
}

/// What an installed hook would run: `rpg` on `PATH`, else the path it
/// was installed with, if that still exists.
fn binary_for(hook_text: &str) -> Option<PathBuf> {
    on_path("rpg").or_else(|| {
        let line = hook_text.lines().find(|l| l.starts_with(FALLBACK))?;
        let p = PathBuf::from(line[FALLBACK.len()..].trim_end_matches('"'));
        p.is_file().then_some(p)
    })
}

fn on_path(name: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// Append one line to `.rpg/log/hook.log`, keeping the file small. The
/// line often quotes the repository (a config error, a path), so its
/// control characters are escaped: one entry is one line, and nothing in
/// it can read as a command to whatever later shows or sources the file.
/// Nothing under `.rpg/` is followed if it is a link (see [`crate::files`]).
pub fn log(rpg_dir: &Path, line: &str) {
    let dir = rpg_dir.join("log");
    if crate::files::ensure_dir(&dir).is_err() {
        return;
    }
    let path = dir.join("hook.log");
    if crate::files::is_regular(&path)
        && std::fs::symlink_metadata(&path).is_ok_and(|m| m.len() > 1024 * 1024)
    {
        // A rename moves a link itself, never what it points to.
        let _ = std::fs::rename(&path, dir.join("hook.log.1"));
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let line = crate::text::one_line(line);
    let _ = crate::files::append_line(&path, &format!("{} {line}", utc(now)));
}

/// Seconds since the epoch as `2026-12-01T03:04:05Z` (UTC), the way the
/// hook's log and git's own tools write times people read.
fn utc(secs: u64) -> String {
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil from days (Howard Hinnant's algorithm), proleptic Gregorian.
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn log_times_are_utc_and_readable() {
        assert_eq!(super::utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(super::utc(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(super::utc(1_796_094_245), "2026-12-01T03:04:05Z");
    }

    use super::*;

    #[test]
    fn a_block_is_appended_once_and_removed_leaving_the_hook_as_it_was() {
        let d = tempfile::tempdir().unwrap();
        let hook = d.path().join("post-commit");
        let original = "#!/bin/sh\nnpx lint-staged\n";
        std::fs::write(&hook, original).unwrap();
        install_block(d.path(), "post-commit").unwrap();
        install_block(d.path(), "post-commit").unwrap();
        let text = std::fs::read_to_string(&hook).unwrap();
        assert_eq!(text.matches(BLOCK_BEGIN).count(), 1);
        assert!(
            !text.contains(FALLBACK),
            "no machine's path in a shared hook: {text}"
        );
        uninstall(d.path()).unwrap();
        assert_eq!(std::fs::read_to_string(&hook).unwrap(), original);
    }

    #[test]
    fn a_hook_made_only_for_rpg_is_removed_whole() {
        let d = tempfile::tempdir().unwrap();
        install_block(d.path(), "post-merge").unwrap();
        uninstall(d.path()).unwrap();
        assert!(!d.path().join("post-merge").exists());
    }
}
