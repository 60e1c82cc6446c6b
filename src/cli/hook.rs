//! `rpg hook`: the git hooks and merge driver that keep the graph current.

use super::common::*;
use anyhow::{Context, Result};
use rpg::config::Config;
use rpg::encode;
use rpg::git::Repo;
use rpg::lift::offline::OfflineLifter;
use rpg::store::RpgDir;
use std::io::Write;
use std::path::Path;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    action: HookAction,
}

#[derive(Clone, clap::Subcommand)]
enum HookAction {
    /// Install post-commit, post-merge, post-rewrite and post-checkout hooks,
    /// chaining any hook already there.
    Install {
        /// Also install a pre-commit hook that commits the snapshot with each commit.
        #[arg(long)]
        snapshot: bool,
        /// Add to a hooks directory that git tracks (husky's .husky/): a
        /// call to `rpg` through PATH, appended to each hook.
        #[arg(long)]
        force: bool,
        /// Print the result as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Remove rpg's hooks and restore the ones they chained to.
    Uninstall {
        /// Print the result as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Show which hooks are installed, and whether git would run them.
    Status {
        /// Print the result as JSON.
        #[arg(long)]
        json: bool,
    },
    /// git's merge driver for .rpg/graph.jsonl: writes the snapshot of the
    /// merged tree to OURS instead of conflict markers.
    #[command(hide = true)]
    MergeDriver {
        base: PathBuf,
        ours: PathBuf,
        theirs: PathBuf,
        /// The path being merged (git's %P), for messages.
        path: Option<String>,
    },
    /// What an installed hook runs (never fails; errors go to .rpg/log/hook.log).
    #[command(hide = true)]
    Run {
        name: String,
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
}

pub fn run(dir: &Path, a: &Args) -> Result<ExitCode> {
    let action = a.action.clone();
    match action {
        HookAction::Run { name, args } => return Ok(hook_run(dir, &name, &args)),
        HookAction::MergeDriver {
            base,
            ours,
            theirs,
            path,
        } => {
            if path.as_deref() != Some(".rpg/graph.jsonl") {
                return merge_as_git_would(dir, &base, &ours, &theirs);
            }
            return merge_driver(dir, &base, &ours, &theirs);
        }
        _ => {}
    }
    let repo = Repo::discover(dir)?;
    let hooks = rpg::hook::hooks_dir(repo.workdir())?;
    let mut out = std::io::stdout().lock();
    match action {
        HookAction::Install {
            snapshot,
            force,
            json,
        } => {
            // Hooks need a graph to keep, and a graph needs a commit: with
            // none yet, installing would leave hooks that do nothing.
            if repo.head_commit().is_none() {
                anyhow::bail!(
                    "this repository has no commits yet; commit once, then run `rpg hook install`"
                );
            }
            let exe = std::env::current_exe().context("cannot locate the rpg executable")?;
            let mut names: Vec<&str> = rpg::hook::STORE_HOOKS.to_vec();
            if snapshot {
                names.push(rpg::hook::SNAPSHOT_HOOK);
            }
            let done = rpg::hook::install(&hooks, &names, &exe, force)?;
            rpg::hook::install_merge_driver(repo.workdir(), &exe)?;
            // Hooks with no graph to keep would only log "no graph" forever.
            let rpg = RpgDir::new(repo.workdir())?;
            if !rpg.has_snapshot() && rpg.open_store_only().is_err() {
                index_head_for_hooks(&repo, &rpg)?;
            }
            drop(out);
            emit(json, &done, rpg::render::installed_text)?;
            return Ok(ExitCode::SUCCESS);
        }
        HookAction::Uninstall { json } => {
            let removed = rpg::hook::uninstall(&hooks.path)?;
            rpg::hook::uninstall_merge_driver(repo.workdir())?;
            if json {
                serde_json::to_writer_pretty(&mut out, &removed)?;
                writeln!(out)?;
            } else {
                out.write_all(rpg::render::removed_text(&removed, &hooks.path).as_bytes())?;
            }
        }
        HookAction::Status { json } => {
            let merge_driver = rpg::hook::merge_driver_installed(repo.workdir());
            hook_status(&mut out, &hooks, merge_driver, json)?
        }
        HookAction::Run { .. } | HookAction::MergeDriver { .. } => unreachable!("handled above"),
    }
    Ok(ExitCode::SUCCESS)
}

/// `hook install` in a repository with no graph indexes HEAD first, with
/// the repository's lifter, saying so on stderr.
fn index_head_for_hooks(repo: &Repo, rpg: &RpgDir) -> Result<()> {
    let config = Config::load(repo.workdir())?;
    let llm = model_lifter(repo, &config, None, None, false, false)?;
    let chosen = lifter_of(&llm);
    let head = repo.resolve("HEAD")?;
    let encoded = encode::encode(repo, &config, head, chosen, &Bar::new())?;
    rpg.save(&encoded.graph, encoded.resolved)?;
    rpg::notice!(
        "rpg: there was no graph yet, so indexed HEAD ({} files); commit .rpg/ to share it",
        encoded.report.files_indexed
    );
    Ok(())
}

fn hook_status(
    out: &mut impl Write,
    hooks: &rpg::hook::HooksDir,
    merge_driver: bool,
    json: bool,
) -> Result<()> {
    let hooks_state = rpg::hook::status(&hooks.path);
    // Hooks left in the default directory are dead once core.hooksPath points elsewhere.
    let bypassed = hooks.configured
        && hooks.default != hooks.path
        && rpg::hook::status(&hooks.default)
            .iter()
            .any(|h| h.installed);
    let report = rpg::render::HookStatus {
        hooks_dir: hooks.path.display().to_string(),
        core_hooks_path: hooks.configured,
        shared: hooks.shared,
        bypassed,
        bypassed_dir: hooks.default.display().to_string(),
        missing_binary: hooks_state.iter().any(|h| h.installed && h.runs.is_none()),
        merge_driver,
        hooks: hooks_state,
    };
    if json {
        serde_json::to_writer_pretty(&mut *out, &report)?;
        writeln!(out)?;
    } else {
        out.write_all(rpg::render::hook_status_text(&report).as_bytes())?;
    }
    Ok(())
}

/// The merge driver asked about any path but the snapshot: a committed
/// `.gitattributes` can point `merge=rpg` at code, and keeping our side
/// there would drop their change silently. The three versions are merged
/// as git's own text merge does (`git merge-file`, conflict markers and
/// all), and a conflict exits 1, so git reports it.
fn merge_as_git_would(
    dir: &std::path::Path,
    base: &std::path::Path,
    ours: &std::path::Path,
    theirs: &std::path::Path,
) -> Result<ExitCode> {
    let merged = std::process::Command::new("git")
        .arg("merge-file")
        .args(["-L", "ours", "-L", "base", "-L", "theirs", "--"])
        .args([ours, base, theirs])
        .current_dir(dir)
        .status()
        .context("cannot run git merge-file")?;
    Ok(match merged.code() {
        Some(0) => ExitCode::SUCCESS,
        _ => ExitCode::from(1),
    })
}

/// git's merge driver for the snapshot. Writes the merged tree's snapshot
/// to `ours`; when that cannot be made (the code itself conflicts, a side
/// is damaged), keeps our side, which is still a true graph of its tree,
/// and says so. Never leaves conflict markers, so exit 0 either way.
fn merge_driver(
    dir: &std::path::Path,
    base: &std::path::Path,
    ours: &std::path::Path,
    theirs: &std::path::Path,
) -> Result<ExitCode> {
    if std::env::var_os(rpg::evolve::merge::NESTED).is_some() {
        return Ok(ExitCode::SUCCESS); // inside our own merge of the trees
    }
    let read = |p: &std::path::Path| {
        std::fs::read(p).with_context(|| format!("cannot read {}", p.display()))
    };
    let (b, o, t) = (read(base)?, read(ours)?, read(theirs)?);
    let merged = (|| -> Result<Vec<u8>> {
        let repo = Repo::discover(dir)?;
        let config = Config::load(repo.workdir())?;
        // git waits on its merge driver as on a hook: no model.
        Ok(rpg::evolve::merge::merge_snapshots(
            &repo,
            &config,
            &b,
            &o,
            &t,
            &OfflineLifter,
        )?)
    })();
    match merged {
        Ok(bytes) => rpg::store::snapshot::write_atomic(ours, &bytes)?,
        Err(e) => rpg::notice!(
            "rpg: merge driver kept our .rpg/graph.jsonl ({e:#}); run `rpg update --snapshot` after the merge"
        ),
    }
    Ok(ExitCode::SUCCESS)
}

/// The body of every installed hook. It must never fail or block git:
/// whatever happens is written to .rpg/log/hook.log and the exit code is 0.
fn hook_run(dir: &std::path::Path, name: &str, args: &[String]) -> ExitCode {
    let started = Instant::now();
    let result = (|| -> Result<String> {
        let repo = Repo::discover(dir)?;
        let rpg = RpgDir::new(repo.workdir())?;
        if !rpg.has_snapshot() && !rpg.path().join("store").exists() {
            return Ok("no graph here yet; run `rpg init`".into());
        }
        if name == "post-checkout" && args.get(2).map(String::as_str) == Some("0") {
            return Ok("file checkout; nothing to do".into());
        }
        // A hook never waits long: git is waiting on it. What it cannot do
        // now, the next command does.
        let _lock = match rpg.lock(std::time::Duration::from_secs(1)) {
            Err(rpg::store::StoreError::Locked(_)) => {
                rpg.mark_pending(name)?;
                return Ok(
                    "another rpg is writing the graph; left it pending for the next command".into(),
                );
            }
            other => other?,
        };
        let background = name == rpg::hook::CATCH_UP;
        // Work an earlier hook could not finish is a background process's:
        // catching up here would keep git waiting for all of it.
        if !background && name != rpg::hook::SNAPSHOT_HOOK && rpg.pending(&repo).is_some() {
            rpg.mark_pending(name)?;
            continue_in_background(repo.workdir())?;
            return Ok("an update is pending; finishing it in the background".into());
        }
        let config = Config::load(repo.workdir())?;
        let opts = rpg::evolve::UpdateOptions {
            deadline: (!background).then(|| started + hook_budget()),
            ..Default::default()
        };
        let Some(head) = repo.head_commit() else {
            return Ok("no commit yet".into());
        };
        if name == rpg::hook::SNAPSHOT_HOOK {
            let tree = git_stdout(repo.workdir(), &["write-tree"])?;
            let tree = gix::ObjectId::from_hex(tree.trim().as_bytes())
                .context("git write-tree gave no tree id")?;
            let target = rpg::evolve::Target { commit: head, tree };
            let (r, store) = rpg::evolve::update_keeping_store(
                &repo,
                &rpg,
                &config,
                target,
                &OfflineLifter,
                &opts,
            )?;
            rpg.write_snapshot(&store)?;
            drop(store);
            git_stdout(
                repo.workdir(),
                &[
                    "add",
                    "--",
                    ".rpg/graph.jsonl",
                    ".rpg/.gitignore",
                    ".rpg/.gitattributes",
                ],
            )?;
            return Ok(format!("staged snapshot: {} events", r.events.len()));
        }
        let target = rpg::evolve::Target::commit(&repo, head)?;
        // Offline, whatever the config says: git waits on a hook, and a
        // hook never waits on a model (`rpg update` lifts with one).
        let (r, mut store) =
            rpg::evolve::update_keeping_store(&repo, &rpg, &config, target, &OfflineLifter, &opts)?;
        // The search index follows, file by file, so the first query after
        // a commit pays for no rebuild.
        if background || (r.files_changed > 0 && started.elapsed() < hook_budget()) {
            store = rpg::search::index::ready(&rpg, store, &repo)?.0;
        }
        // Asked after the index step, which compacts a store it rewrote.
        let wasteful = store.wants_compacting();
        let updated = format!(
            "updated to {}: {} files, {} events",
            short(&r.to),
            r.files_changed,
            r.events.len()
        );
        Ok(match (wasteful, background) {
            (false, _) => updated,
            // Copying a large store takes long: never with git waiting.
            (true, false) => {
                drop(store);
                continue_in_background(repo.workdir())?;
                format!("{updated}; compacting the store in the background")
            }
            (true, true) => {
                rpg.compact(store)?;
                format!("{updated}; compacted the store")
            }
        })
    })();
    let over_budget = result.as_ref().err().is_some_and(|e| {
        e.chain().any(|c| {
            matches!(
                c.downcast_ref::<rpg::evolve::EvolveError>(),
                Some(rpg::evolve::EvolveError::OverBudget)
            )
        })
    });
    let result = match result {
        Err(_) if over_budget => Repo::discover(dir)
            .map_err(anyhow::Error::from)
            .and_then(|repo| {
                RpgDir::new(repo.workdir())?.mark_pending(name)?;
                continue_in_background(repo.workdir())
            })
            .map(|_| {
                format!(
                    "over its {} ms budget; finishing in the background",
                    hook_budget().as_millis()
                )
            }),
        other => other,
    };
    let line = match result {
        Ok(msg) => format!(
            "{name}: {msg} ({:.0} ms)",
            started.elapsed().as_secs_f64() * 1000.0
        ),
        Err(e) => format!("{name}: error: {e:#}"),
    };
    if let Ok(repo) = Repo::discover(dir) {
        if let Ok(rpg) = RpgDir::new(repo.workdir()) {
            rpg::hook::log(rpg.path(), &line);
        }
    }
    ExitCode::SUCCESS
}

/// Finish what a hook could not, in a process of its own: git waits for
/// the hook, not for its children. The update it left stays marked
/// pending until that process (or any command that opens the graph
/// first) completes it, so a process that dies loses nothing.
fn continue_in_background(workdir: &Path) -> Result<()> {
    let exe = std::env::current_exe().context("finding rpg's own executable")?;
    std::process::Command::new(exe)
        .current_dir(workdir)
        .args(["hook", "run", rpg::hook::CATCH_UP])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .context("starting rpg in the background")?;
    Ok(())
}

/// How long a hook may work before it gives up and leaves the update to
/// a process of its own: git waits on it. `RPG_HOOK_BUDGET_MS` sets it (for
/// tests and slow disks); a repository cannot.
fn hook_budget() -> std::time::Duration {
    let ms = std::env::var("RPG_HOOK_BUDGET_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3_000);
    std::time::Duration::from_millis(ms)
}

/// Run git with fixed arguments (never user text) and return its stdout.
fn git_stdout(dir: &std::path::Path, args: &[&str]) -> Result<String> {
    let out = std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .context("cannot run git")?;
    if !out.status.success() {
        anyhow::bail!(
            "git {} failed: {}",
            args.first().unwrap_or(&""),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}
