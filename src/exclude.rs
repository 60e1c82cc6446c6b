//! Which tracked files are never indexed: those the config's globs name
//! (vendored and generated code by its usual places), and those the
//! repository's own `.gitattributes` mark `linguist-vendored` or
//! `linguist-generated`, the marks GitHub reads to leave code out of a
//! repository's languages and diffs. A fix belongs in the project's own
//! code, or in the grammar a parser was generated from, not in the copy.

use crate::git::{GitError, Repo, TreeFile};
use gix::attrs::search::{MetadataCollection, Outcome};
use gix::attrs::{Search, StateRef};
use gix::bstr::ByteSlice;
use globset::GlobSet;
use std::path::{Path, PathBuf};

/// The attributes that leave a file out.
const MARKS: [&str; 2] = ["linguist-vendored", "linguist-generated"];
/// A larger attributes file is not read: no real one comes near it.
const MAX_ATTRIBUTES_BYTES: usize = 1 << 20;

/// The rule a tree's files are filtered by.
pub struct Exclude {
    globs: GlobSet,
    marked: Option<Marked>,
}

struct Marked {
    search: Search,
    names: MetadataCollection,
}

impl Exclude {
    /// Only the config's globs.
    pub fn globs(globs: GlobSet) -> Exclude {
        Exclude {
            globs,
            marked: None,
        }
    }

    /// The config's globs and what the tree's attributes files (see
    /// [`attributes_files`]) mark.
    pub fn new(
        globs: GlobSet,
        repo: &gix::Repository,
        attributes: &[TreeFile],
    ) -> Result<Exclude, GitError> {
        let mut texts = Vec::with_capacity(attributes.len());
        for f in attributes {
            texts.push((f.path.as_str(), Repo::read_blob(repo, f.blob)?));
        }
        Ok(Self::with_attributes(globs, &texts))
    }

    /// The config's globs and what the attributes files, by path, mark.
    /// As in git, a deeper file's lines override a shallower one's, and
    /// later lines earlier ones.
    pub fn with_attributes(globs: GlobSet, files: &[(&str, Vec<u8>)]) -> Exclude {
        let mut files: Vec<&(&str, Vec<u8>)> = files
            .iter()
            .filter(|(_, text)| text.len() <= MAX_ATTRIBUTES_BYTES)
            .collect();
        files.sort_by_key(|(path, _)| (path.matches('/').count(), *path));
        let mut search = Search::default();
        let mut names = MetadataCollection::default();
        for (path, text) in files {
            // Git reads macro definitions only from the top-level file.
            let macros = *path == ".gitattributes";
            // Only an unrepresentable directory fails, and git could not
            // apply such a file either.
            let _ = search.add_patterns_buffer(
                text,
                PathBuf::from(path),
                Some(Path::new("")),
                &mut names,
                macros,
            );
        }
        let marked = (search.num_pattern_lists() > 0).then_some(Marked { search, names });
        Exclude { globs, marked }
    }

    pub fn is_match(&self, path: &str) -> bool {
        self.globs.is_match(path) || self.marked.as_ref().is_some_and(|m| m.marks(path))
    }
}

impl Marked {
    fn marks(&self, path: &str) -> bool {
        let mut out = Outcome::default();
        out.initialize_with_selection(&self.names, MARKS);
        self.search.pattern_matching_relative_path(
            path.as_bytes().as_bstr(),
            gix::glob::pattern::Case::Sensitive,
            Some(false),
            &mut out,
        );
        let marked = out.iter_selected().any(|m| match m.assignment.state {
            StateRef::Set => true,
            StateRef::Value(v) => v.as_bstr().eq_ignore_ascii_case(b"true"),
            StateRef::Unset | StateRef::Unspecified => false,
        });
        marked
    }
}

/// Whether `path` is a `.gitattributes` file.
pub fn is_attributes(path: &str) -> bool {
    path.rsplit('/').next() == Some(".gitattributes")
}

/// The tree's `.gitattributes` files, bar those in directories `globs`
/// leave out (rpg's own `.rpg/` has one): they speak only for files that
/// are out already.
pub fn attributes_files(files: &[TreeFile], globs: &GlobSet) -> Vec<TreeFile> {
    files
        .iter()
        .filter(|f| is_attributes(&f.path) && !globs.is_match(&f.path))
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exclude(files: &[(&str, &str)]) -> Exclude {
        let files: Vec<(&str, Vec<u8>)> = files
            .iter()
            .map(|(p, t)| (*p, t.as_bytes().to_vec()))
            .collect();
        Exclude::with_attributes(GlobSet::empty(), &files)
    }

    #[test]
    fn vendored_and_generated_marks_leave_files_out() {
        let ex = exclude(&[(
            ".gitattributes",
            "* text=auto\nsrc/decNumber/** linguist-vendored\nsrc/parser.[ch] linguist-generated=true\n",
        )]);
        assert!(ex.is_match("src/decNumber/decNumber.c"));
        assert!(ex.is_match("src/parser.c"));
        assert!(!ex.is_match("src/parser.y"));
        assert!(!ex.is_match("src/jv.c"));
    }

    #[test]
    fn a_deeper_file_and_a_later_line_override() {
        let ex = exclude(&[
            ("lib/.gitattributes", "gen.c -linguist-generated\n"),
            (
                ".gitattributes",
                "*.c linguist-generated\nkeep.c linguist-generated=false\n",
            ),
        ]);
        assert!(ex.is_match("src/a.c"));
        assert!(!ex.is_match("src/keep.c"));
        assert!(!ex.is_match("lib/gen.c"));
        // A nested file speaks only for its own directory.
        assert!(ex.is_match("gen.c"));
    }

    #[test]
    fn macros_are_read_only_from_the_top_level_file() {
        let ex = exclude(&[
            (
                ".gitattributes",
                "[attr]thirdparty linguist-vendored\nextern/** thirdparty\n",
            ),
            (
                "src/.gitattributes",
                "[attr]mine linguist-vendored\nx.c mine\n",
            ),
        ]);
        assert!(ex.is_match("extern/zlib/inflate.c"));
        assert!(!ex.is_match("src/x.c"));
    }

    #[test]
    fn garbage_attributes_mark_nothing() {
        let garbage = "\u{0}\u{1}[attr]\n!!!\n\"unterminated\n** \n/ linguist-vendored=\n";
        let ex = exclude(&[(".gitattributes", garbage)]);
        assert!(!ex.is_match("src/jv.c"));
    }
}
