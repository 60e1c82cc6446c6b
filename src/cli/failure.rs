//! How a command's failure reaches the user, decided once at the edge: a
//! kind (which sets the exit code), the error with its chain of causes, and
//! a hint about what to do on the command line when rpg knows one. The
//! library's errors say what went wrong; only here are flags suggested.

use rpg::evolve::EvolveError;
use rpg::git::GitError;
use rpg::search::tools::ToolError;
use rpg::store::StoreError;
use std::process::ExitCode;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// The reader went away (`rpg … | head`): not a failure at all.
    ClosedPipe,
    /// No entity, file or path by that name: exit 1.
    NothingFound,
    /// The repository has no graph yet.
    NoGraph,
    /// Anything else: exit 2.
    Error,
}

pub(super) struct Failure {
    kind: Kind,
    error: anyhow::Error,
    hint: Option<&'static str>,
}

impl Failure {
    pub(super) fn of(error: anyhow::Error) -> Failure {
        let kind = Failure::kind_of(&error);
        let hint = error
            .chain()
            .find_map(|c| match c.downcast_ref::<GitError>() {
                Some(GitError::NotARepository { .. }) => {
                    Some("run rpg inside a git checkout, or pass -C DIR")
                }
                _ => None,
            });
        Failure { kind, error, hint }
    }

    /// What kind of failure `e` is, however deep its cause was raised.
    pub(super) fn kind_of(e: &anyhow::Error) -> Kind {
        for c in e.chain() {
            let pipe = c
                .downcast_ref::<std::io::Error>()
                .map(std::io::Error::kind)
                .or_else(|| c.downcast_ref::<serde_json::Error>()?.io_error_kind());
            if pipe == Some(std::io::ErrorKind::BrokenPipe) {
                return Kind::ClosedPipe;
            }
            if c.downcast_ref::<ToolError>()
                .is_some_and(ToolError::is_not_found)
            {
                return Kind::NothingFound;
            }
            let no_graph = matches!(c.downcast_ref::<StoreError>(), Some(StoreError::NoGraph))
                || matches!(
                    c.downcast_ref::<EvolveError>(),
                    Some(EvolveError::Store(StoreError::NoGraph))
                );
            if no_graph {
                return Kind::NoGraph;
            }
        }
        Kind::Error
    }

    /// Say it on one line and give the exit code: 0 for a closed pipe (as
    /// ripgrep does), 1 for nothing found, 2 for an error. An error often
    /// quotes the repository (a path, a config value), so its control
    /// characters are escaped: it stays one line and steers no terminal.
    pub(super) fn report(self) -> ExitCode {
        let mut chain: Vec<String> = Vec::new();
        for c in self.error.chain() {
            let said = rpg::text::one_line(&c.to_string()).into_owned();
            // An error that quotes its source already said the source's part.
            if !chain.last().is_some_and(|last| last.ends_with(&said)) {
                chain.push(said);
            }
        }
        let hint = self.hint.map(|h| format!(" ({h})")).unwrap_or_default();
        match self.kind {
            Kind::ClosedPipe => ExitCode::SUCCESS,
            Kind::NothingFound => {
                eprintln!("rpg: {}", chain.join(": "));
                ExitCode::from(1)
            }
            Kind::NoGraph | Kind::Error => {
                eprintln!("rpg: error: {}{hint}", chain.join(": "));
                ExitCode::from(2)
            }
        }
    }
}
